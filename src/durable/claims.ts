// Starting a run in a store, and claiming a stored one for a resume: exactly one resume of a
// segment goes ahead, in whatever process; a session's next run continues its latest.
import type { Logger } from '../core/vocabulary/contexts.js';
import { describe, KoagentError } from '../core/vocabulary/errors.js';
import type { Message } from '../core/vocabulary/messages.js';
import { nextSegment } from '../core/state/resume.js';
import { checkState } from '../core/state/state-schema.js';
import { newRunId, newState, type AgentIdentity, type ApprovalDecision, type RunState } from '../core/vocabulary/state.js';
import { startingTranscript } from '../core/state/transcript-writer.js';
import type { NewRun, RunStore } from '../stores/run-store.js';
import { DurableRun, storeCall } from './durable-run.js';

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
 * names the run and its segment — unless it was adopted, `agent.runs.adoptState`, by this agent:
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
    // Adopted on purpose (`agent.runs.adoptState`): the stored run is taken over with it.
    if (belongsTo(given, agent) && !belongsTo(stored, agent)) stored = { ...stored, agentName: agent.name, agentId: agent.id, toolsFingerprint: agent.toolsFingerprint };
  }
  if (stored.status === 'running') {
    throw bad(`run ${runId} is running in a worker (or its worker died: agent.runs.recover() continues it once its lease expired); it cannot be resumed now`);
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

/** Whether `state` is a run of this version of `agent` (its name, id and tools). */
export function belongsTo(state: RunState, agent: AgentIdentity): boolean {
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
export async function startSessionRun(store: RunStore, sessionId: string, agent: { identity: AgentIdentity; owner: string; logger: Logger; opening: () => Message[]; added: Message[]; runId?: string }): Promise<{ state: RunState; durable: DurableRun }> {
  const head = await sessionToContinue(store, sessionId, agent.identity);
  // The messages the new run shares with the session's latest run: all of that run's.
  const base = head === undefined ? undefined : { runId: head.runId, count: head.messages.length };
  const messages = startingTranscript(head === undefined ? agent.opening() : head.messages, agent.added);
  const state = newState(agent.runId ?? newRunId(), sessionId, agent.identity, messages);
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
  if (head.status === 'running') throw busy(`the last run of session ${sessionId} (${head.runId}) is still running (if its process died, agent.runs.recover() finishes it once its lease expired); send when it is over`);
  try {
    return checkState(head);
  } catch (error) {
    throw new KoagentError('store_error', `agent.send(): the stored session ${sessionId} cannot be continued: ${describe(error)}`, { cause: error });
  }
}

