// Durable runs, the agent's side: starting a run in a store, claiming one for a resume or a
// recovery, and holding its lease while a segment runs. The segment itself only sees a
// CheckpointSink; the store only sees checkpoints and leases.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { CheckpointSink } from '../durable/checkpoints.js';
import type { Logger } from '../core/vocabulary/contexts.js';
import { describe, KoagentError, RunFailedError } from '../core/vocabulary/errors.js';
import type { Checkpoint } from '../stores/run-store.js';
import type { Message } from '../core/vocabulary/messages.js';
import { nextSegment } from '../core/state/resume.js';
import type { RunResult } from '../core/vocabulary/result.js';
import type { Segment } from '../core/run/segment.js';
import { checkState } from '../core/state/state-schema.js';
import { newState, type AgentIdentity, type ApprovalDecision, type RunState } from '../core/vocabulary/state.js';
import { closeUnsettledCalls } from '../core/run/tool-turn.js';
import type { Lease, NewRun, RunStore, RunSummary } from '../stores/run-store.js';
import type { RecoveredRun } from './durable-options.js';

/** A name for this worker, unique enough to tell its leases from another process's. */
export function workerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * One run held by this worker in a store: where its segment's checkpoints go, and the lease
 * that lets them be written. While the segment runs, the lease is renewed every third of its
 * duration; if a renewal finds it lost, the segment is cancelled and writes nothing more.
 */
export class DurableRun implements CheckpointSink {
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly store: RunStore, readonly lease: Lease, readonly logger: Logger) {}

  write(checkpoint: Checkpoint, final: boolean): Promise<void> {
    return this.store.checkpoint(this.lease, checkpoint, final);
  }

  /** The segment has started: keep the lease alive until `stop()`. */
  watch(segment: Segment): void {
    const { store, lease } = this;
    let renewing = false;
    this.#timer = setInterval(() => {
      if (renewing) return;
      renewing = true;
      store.renew(lease).then(
        (held) => {
          if (held) return;
          const lost = new KoagentError('lease_lost', `run ${lease.runId}: its lease was lost while the segment ran (another worker claimed the run after this one could not renew it in time); this worker stops the run and writes nothing more`);
          segment.checkpoints?.poison(lost);
          segment.abort(lost);
        },
        // A store that does not answer for a moment: the next renewal tries again, and a
        // checkpoint that cannot be written fails the segment by itself.
        (error: unknown) => this.logger.warn(`koagent: renewing the lease of run ${lease.runId} failed (${describe(error)}); trying again`, error),
      ).finally(() => (renewing = false));
    }, Math.max(5, Math.floor(store.leaseMs / 3)));
    // A lease being renewed must not keep the process alive by itself.
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** Store a new run and take its lease; a refused start is a clear error. */
export async function startRun(store: RunStore, run: NewRun, logger: Logger): Promise<DurableRun> {
  const created = await storeCall(() => store.createRun(run), `starting run ${run.state.runId}`);
  if ('lease' in created) return new DurableRun(store, created.lease, logger);
  if (created.refused === 'session_moved') {
    throw new KoagentError('session_busy', `agent.send(): another run was started in session ${run.state.sessionId} meanwhile (by another process or call); send again to continue after it`);
  }
  throw new KoagentError('invalid_resume', `run ${run.state.runId} is already in the store; it was resumed or started before`);
}

/**
 * Claim a run for a resume, through the store: exactly one resume of a given segment goes
 * ahead, in whatever process. The store's copy is what continues (the `state` passed only
 * names the run and its segment — unless it was adopted, `agent.adoptState`, by this agent:
 * then the stored run becomes this agent's); a state the store does not hold is imported.
 * Returns the state the next segment starts from and its lease.
 */
export async function claimForResume(store: RunStore, given: RunState | string, decisions: Record<string, ApprovalDecision>, agent: AgentIdentity, owner: string, logger: Logger, refuse?: (next: RunState) => string | undefined): Promise<{ state: RunState; durable: DurableRun }> {
  const bad = (what: string) => new KoagentError('invalid_resume', `agent.resume(): ${what}`);
  const runId = typeof given === 'string' ? given : (given as RunState | undefined)?.runId;
  if (typeof given === 'string' && given === '') throw bad('the run id is empty; pass the runId of a stored run, or a RunState');
  if (typeof runId !== 'string') return importState(store, given as RunState, decisions, agent, owner, logger, refuse);
  let stored = await storeCall(() => store.loadRun(runId), `loading run ${runId}`);
  if (stored === undefined) {
    if (typeof given === 'string') throw bad(`there is no run ${runId} in the store (${store.kind}); it was never stored, or it was deleted or pruned`);
    return importState(store, given, decisions, agent, owner, logger, refuse);
  }
  if (typeof given !== 'string') {
    if (given.segment !== stored.segment) {
      throw bad(`this state (run ${runId}, segment ${given.segment}) was already resumed: the store has the run at segment ${stored.segment} (${stored.status}); resume the latest state, or the run by its id`);
    }
    // Adopted on purpose (`agent.adoptState`): the stored run is taken over with it.
    if (belongsTo(given, agent) && !belongsTo(stored, agent)) stored = { ...stored, agentName: agent.name, agentId: agent.id, toolsFingerprint: agent.toolsFingerprint };
  }
  if (stored.status === 'running') {
    throw bad(`run ${runId} is running in a worker (or its worker died: agent.recover() continues it once its lease expired); it cannot be resumed now`);
  }
  const next = nextSegment(stored, decisions, agent);
  const refused = refuse?.(next);
  if (refused !== undefined) throw bad(refused);
  const claimed = await storeCall(() => store.claimRun(runId, { owner, segment: stored.segment, state: next }), `claiming run ${runId}`);
  if ('refused' in claimed) {
    throw bad(claimed.refused === 'missing'
      ? `run ${runId} was deleted meanwhile`
      : `run ${runId} was resumed by someone else meanwhile (it is now ${claimed.status} at segment ${claimed.segment}); resume its latest state`);
  }
  return { state: next, durable: new DurableRun(store, claimed.lease, logger) };
}

function belongsTo(state: RunState, agent: AgentIdentity): boolean {
  return state.agentName === agent.name && state.agentId === agent.id && state.toolsFingerprint === agent.toolsFingerprint;
}

/** A state the store has never seen (made without it): checked, and stored as the run. */
async function importState(store: RunStore, given: RunState, decisions: Record<string, ApprovalDecision>, agent: AgentIdentity, owner: string, logger: Logger, refuse?: (next: RunState) => string | undefined): Promise<{ state: RunState; durable: DurableRun }> {
  const next = nextSegment(given, decisions, agent);
  const refused = refuse?.(next);
  if (refused !== undefined) throw new KoagentError('invalid_resume', `agent.resume(): ${refused}`);
  const durable = await startRun(store, { state: next, owner }, logger);
  return { state: next, durable };
}

/**
 * Start the next run of a stored session (`send(input, { sessionId })`): its transcript is the
 * session's latest run's — which the store shares rather than writes again — then `added`; a
 * new session starts with the agent's opening messages.
 */
export async function startSessionRun(store: RunStore, sessionId: string, agent: { identity: AgentIdentity; owner: string; logger: Logger; opening: () => Message[]; added: Message[] }): Promise<{ state: RunState; durable: DurableRun }> {
  const head = await sessionToContinue(store, sessionId, agent.identity);
  // The messages the new run shares with the session's latest run: all of that run's.
  const base = head === undefined ? undefined : { runId: head.runId, count: head.messages.length };
  const messages = head === undefined ? agent.opening() : head.messages;
  closeUnsettledCalls(messages);
  messages.push(...agent.added);
  const state = newState(`run_${randomUUID()}`, sessionId, agent.identity, messages);
  const durable = await startRun(store, { state, owner: agent.owner, base, expectHead: head?.runId ?? null }, agent.logger);
  return { state, durable };
}

/**
 * The session a stored `send` continues: the state of its latest run (checked whole), or
 * undefined for a new session. A session of another agent, or whose latest run is not over,
 * is refused.
 */
async function sessionToContinue(store: RunStore, sessionId: string, agent: AgentIdentity): Promise<RunState | undefined> {
  const head = await storeCall(() => store.sessionHead(sessionId), `loading session ${sessionId}`);
  if (head === undefined) return undefined;
  const busy = (what: string) => new KoagentError('session_busy', `agent.send(): ${what}`);
  if (head.agentName !== agent.name || head.agentId !== agent.id) throw busy(`session ${sessionId} belongs to agent "${head.agentName}" (id "${head.agentId}"), not "${agent.name}" (id "${agent.id}")`);
  if (head.status === 'suspended') throw busy(`the last run of session ${sessionId} (${head.runId}) is waiting for approval; finish it with agent.resume('${head.runId}', decisions) first`);
  if (head.status === 'running') throw busy(`the last run of session ${sessionId} (${head.runId}) is still running (if its process died, agent.recover() finishes it once its lease expired); send when it is over`);
  try {
    return checkState(head);
  } catch (error) {
    throw new KoagentError('store_error', `agent.send(): the stored session ${sessionId} cannot be continued: ${describe(error)}`, { cause: error });
  }
}

/**
 * Claim the runs of `agent` whose lease expired, one at a time, and continue each with `run`
 * until none is left or `limit` were. A run whose segment fails is reported with its error,
 * and the next one is taken. A stored run this agent cannot continue — its state does not pass
 * the checks `resume` makes, or it belongs to another version of the agent (another id, other
 * tools) — is stored as failed (`invalid_resume`), so it is not claimed again: take it over on
 * purpose with `agent.resume(agent.adoptState(state))`.
 */
export async function recoverRuns(
  store: RunStore, agent: AgentIdentity, owner: string, logger: Logger, limit: number | undefined,
  how: { refuse: (state: RunState) => string | undefined; run: (state: RunState, durable: DurableRun) => Promise<RunResult> },
): Promise<RecoveredRun[]> {
  const most = limit ?? Infinity;
  const recovered: RecoveredRun[] = [];
  while (recovered.length < most) {
    const claimed = await storeCall(() => store.claimExpired(agent.name, owner), `looking for runs of ${agent.name} to recover`);
    if (claimed === undefined) break;
    const { runId } = claimed.state;
    const durable = new DurableRun(store, claimed.lease, logger);
    const refused = cannotContinue(claimed.state, agent) ?? how.refuse(claimed.state);
    if (refused !== undefined) {
      recovered.push({ runId, error: await refuseRecovery(durable, claimed.state, refused) });
      continue;
    }
    try {
      recovered.push({ runId, result: await how.run(claimed.state, durable) });
    } catch (error) {
      if (!(error instanceof RunFailedError)) throw error;
      recovered.push({ runId, error });
    }
  }
  return recovered;
}

/** Why this agent may not continue a stored run, or undefined when it may. */
function cannotContinue(state: RunState, agent: AgentIdentity): string | undefined {
  const adopt = `take it over on purpose with agent.resume(agent.adoptState(await store.loadRun('${state.runId}')))`;
  try {
    checkState(state);
  } catch (error) {
    return `its stored state does not pass the checks of resume (${describe(error)}); if it can be repaired, ${adopt}`;
  }
  if (state.agentId !== agent.id) return `it belongs to agent id "${state.agentId}", not "${agent.id}"; ${adopt}`;
  if (state.toolsFingerprint !== agent.toolsFingerprint) return `it was started by a version of this agent with other tools (its calls name tools, or arguments, this agent may not have); ${adopt}`;
  return undefined;
}

/** Store a claimed run as failed, saying why it cannot be recovered; the error is what `recover` reports. */
async function refuseRecovery(durable: DurableRun, state: RunState, why: string): Promise<RunFailedError> {
  const message = `agent.recover(): run ${state.runId} is not continued, and is stored as failed: ${why}`;
  const error = { code: 'invalid_resume', message };
  try {
    await durable.write({ status: 'failed', segment: state.segment, steps: state.steps, usage: JSON.stringify(state.usage), stopReason: state.stopReason, error: JSON.stringify(error) }, true);
  } catch (failure) {
    // The next recovery meets it again once the lease expires; it is reported either way.
    durable.logger.warn(`koagent: storing run ${state.runId} as failed did not succeed (${describe(failure)})`, failure);
  }
  return new RunFailedError('invalid_resume', message, { ...state, status: 'failed', error });
}

/**
 * An agent's side of run stores: which store a call uses, and the agent object as a worker that
 * holds leases (its `owner` name). The agent's methods hand their store work to it.
 */
export class AgentStore {
  #owner: string | undefined;

  /** This agent object's name as a worker, made when a store first needs it (a run without one never does). */
  get owner(): string {
    return (this.#owner ??= workerId());
  }

  constructor(private readonly store: RunStore | undefined, readonly identity: AgentIdentity, readonly logger: Logger) {}

  /** The store a call uses: its own, else the agent's; none for a sub-agent's run (its parent's call holds it). */
  for(request: { store?: RunStore; subagent?: unknown }): RunStore | undefined {
    return request.subagent !== undefined ? undefined : request.store ?? this.store;
  }

  /** The store a call that needs one uses, or a `TypeError` saying how to give one. */
  require(request: { store?: RunStore }, what: string): RunStore {
    const store = request.store ?? this.store;
    if (store === undefined) throw new TypeError(`${what} needs a run store: createAgent({ store }) with memoryStore(), sqliteStore() from koagent/sqlite or postgresStore() from koagent/postgres, or { store } in this call's options`);
    return store;
  }

  start(store: RunStore, state: RunState): Promise<DurableRun> {
    return startRun(store, { state, owner: this.owner }, this.logger);
  }

  startSession(store: RunStore, sessionId: string, opening: () => Message[], added: Message[]): Promise<{ state: RunState; durable: DurableRun }> {
    return startSessionRun(store, sessionId, { identity: this.identity, owner: this.owner, logger: this.logger, opening, added });
  }

  claim(store: RunStore, given: RunState | string, decisions: Record<string, ApprovalDecision>, refuse: (next: RunState) => string | undefined): Promise<{ state: RunState; durable: DurableRun }> {
    return claimForResume(store, given, decisions, this.identity, this.owner, this.logger, refuse);
  }

  recover(store: RunStore, limit: number | undefined, how: Parameters<typeof recoverRuns>[5]): Promise<RecoveredRun[]> {
    return recoverRuns(store, this.identity, this.owner, this.logger, limit, how);
  }

  /** The suspended runs of this agent, each with its pending approvals. */
  pending(store: RunStore, limit: number | undefined): Promise<RunSummary[]> {
    return storeCall(() => store.listRuns({ agentName: this.identity.name, status: 'suspended', limit }), 'listing suspended runs');
  }
}

/** A store call whose failure is a `store_error` that says what was being done. */
export async function storeCall<T>(call: () => Promise<T>, what: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (KoagentError.is(error)) throw error;
    throw new KoagentError('store_error', `The run store failed while ${what}: ${describe(error)}`, { cause: error });
  }
}
