// Recovery: the runs of an agent whose lease expired (their worker died), claimed one at a
// time and continued; a run this agent cannot continue is stored as failed, saying why.
import type { Logger } from '../core/vocabulary/contexts.js';
import { describe, KoagentError, RunFailedError } from '../core/vocabulary/errors.js';
import type { RunResult } from '../core/vocabulary/result.js';
import { checkState } from '../core/state/state-schema.js';
import type { AgentIdentity, RunState } from '../core/vocabulary/state.js';
import type { RunStore } from '../stores/run-store.js';
import { checkedClock, systemClock, type Clock } from '../stores/clock.js';
import { DurableRun, storeCall } from './durable-run.js';

/**
 * One run `agent.runs.recover` took: `completed` or `suspended` with the `result` of the segment
 * that continued it, or `failed` with the `error` it failed with (or why it could not be
 * continued).
 *
 * @example for (const run of await agent.runs.recover()) console.log(run.runId, run.status === 'failed' ? run.error.code : run.result.text);
 */
export type RecoveredRun =
  | { runId: string; status: 'completed' | 'suspended'; result: RunResult; error?: never }
  | {
      runId: string;
      status: 'failed';
      result?: never;
      /**
       * A `RunFailedError` with the run's state, or — for a run whose rows could not be read,
       * which the store stored failed (`corrupt_run`) — a `KoagentError`, as there is no state to give.
       */
      error: RunFailedError | KoagentError;
    };

/**
 * A run of the agent that is `running` in the store: `recover()` takes it from `claimableAt`
 * (milliseconds since the epoch, by the store's clock; 0 when nobody holds it) — unless its
 * worker renews the lease before then, being alive.
 *
 * @example for (const { runId, claimableAt } of await agent.runs.recoverable()) console.log(runId, new Date(claimableAt));
 */
export interface RecoverableRun {
  runId: string;
  sessionId: string;
  claimableAt: number;
}

/** How `recoverRuns` goes about it: which runs it refuses, how it continues one, whether it waits for leases, and until when. */
export interface RecoveryPlan {
  refuse: (state: RunState) => string | undefined;
  run: (state: RunState, durable: DurableRun) => Promise<RunResult>;
  /** Once it aborts, no further run is claimed (and no lease waited for). */
  signal?: AbortSignal;
  /** Wait for the runs whose lease has not expired yet (see `RecoverOptions.wait`). */
  wait?: boolean;
  /** Only this run (see `RecoverOptions.runId`). */
  runId?: string;
}

/**
 * Claim the runs of `agent` whose lease expired, one at a time, and continue each with `run`
 * until none is left or `limit` were. A run whose segment fails is reported with its error,
 * and the next one is taken. A stored run this agent cannot continue — its state does not pass
 * the checks `resume` makes, or it belongs to another version of the agent (another id, other
 * tools) — is stored as failed (`invalid_resume`), so it is not claimed again: take it over on
 * purpose with `agent.runs.adopt()` or `agent.resume(agent.runs.adoptState(state))`. A run whose rows
 * cannot be read is stored failed by the store itself (`corrupt_run`), and recovery goes on.
 * With `wait`, the runs still leased when the claims ran out are waited for, each until it is
 * claimed or its lease is renewed.
 */
export async function recoverRuns(store: RunStore, agent: AgentIdentity, owner: string, logger: Logger, limit: number | undefined, how: RecoveryPlan): Promise<RecoveredRun[]> {
  const most = limit ?? Infinity;
  const recovered: RecoveredRun[] = [];
  // The leases waited for, by run: the expiry each had when first seen. One that moves was renewed.
  let waited: Map<string, number> | undefined;
  for (;;) {
    await claimExpired(store, agent, owner, logger, most, how, recovered);
    if (how.wait !== true || recovered.length >= most || how.signal?.aborted === true) return recovered;
    const listed = await leasedRuns(store, agent.name, WAIT_LISTS_AT_MOST);
    const leased = how.runId === undefined ? listed : listed.filter((run) => run.runId === how.runId);
    const still = waited === undefined ? leased : leased.filter((run) => waited!.get(run.runId) === run.claimableAt);
    waited = new Map(still.map((run) => [run.runId, run.claimableAt]));
    if (still.length === 0) return recovered;
    const clock = checkedClock(store.clock ?? systemClock, `the clock of the ${store.kind} store`);
    await pause(clock, untilClaimable(store, clock, still), how.signal);
  }
}

/** How many running runs a waiting `recover` looks at, at most, each time it looks. */
const WAIT_LISTS_AT_MOST = 1000;

/** Claim and continue expired runs until none is left, `most` were, or the signal aborted. */
async function claimExpired(store: RunStore, agent: AgentIdentity, owner: string, logger: Logger, most: number, how: RecoveryPlan, recovered: RecoveredRun[]): Promise<void> {
  // One run named by id is claimed once at most.
  const cap = how.runId === undefined ? most : Math.min(most, recovered.length + 1);
  while (recovered.length < cap && how.signal?.aborted !== true) {
    const claimed = await storeCall(() => store.claimExpired(agent.name, owner, how.runId), `looking for runs of ${agent.name} to recover`);
    if (claimed === undefined) return;
    if ('quarantined' in claimed) {
      const { runId, quarantined } = claimed;
      logger.warn(`koagent: agent.runs.recover(): ${quarantined.message}`);
      recovered.push({ runId, status: 'failed', error: new KoagentError(quarantined.code, quarantined.message) });
      continue;
    }
    const { runId } = claimed.state;
    const durable = new DurableRun(store, claimed.lease, logger);
    const refused = cannotContinue(claimed.state, agent) ?? how.refuse(claimed.state);
    if (refused !== undefined) {
      recovered.push({ runId, status: 'failed', error: await refuseRecovery(durable, claimed.state, refused) });
      continue;
    }
    try {
      const result = await how.run(claimed.state, durable);
      recovered.push({ runId, status: result.status, result });
    } catch (error) {
      if (!(error instanceof RunFailedError)) throw error;
      recovered.push({ runId, status: 'failed', error });
    }
  }
}

/** The running runs of agent `agentName`, each with the time its lease runs out. */
export async function leasedRuns(store: RunStore, agentName: string, limit: number | undefined): Promise<RecoverableRun[]> {
  const running = await storeCall(() => store.listRuns({ agentName, status: 'running', limit }), `listing running runs of ${agentName}`);
  return running.map((run) => ({ runId: run.runId, sessionId: run.sessionId, claimableAt: run.leaseExpiresAt }));
}

/**
 * How long to wait for the first of `runs` to become claimable. The store's clock may not be
 * this host's (a database's): never longer than one lease (no lease outlasts that without a renewal), and
 * never so short that a clock behind the store's makes this spin.
 */
function untilClaimable(store: RunStore, clock: Clock, runs: RecoverableRun[]): number {
  const first = Math.min(...runs.map((run) => run.claimableAt));
  const slack = Math.max(10, Math.floor(store.leaseMs / 20));
  return Math.min(store.leaseMs, Math.max(0, first - clock.now())) + slack;
}

/** Wait `ms` by `clock`, or less if `signal` aborts. */
function pause(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    let cancel: (() => void) | undefined;
    const done = () => {
      cancel?.();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    cancel = clock.setTimer(ms, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Why this agent may not continue a stored run, or undefined when it may. */
function cannotContinue(state: RunState, agent: AgentIdentity): string | undefined {
  const adopt = `take it over on purpose with agent.resume(agent.runs.adoptState(await store.loadRun('${state.runId}')))`;
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
  const message = `agent.runs.recover(): run ${state.runId} is not continued, and is stored as failed: ${why}`;
  const error = { code: 'invalid_resume', message };
  try {
    await durable.write({ status: 'failed', segment: state.segment, steps: state.steps, usage: JSON.stringify(state.usage), stopReason: state.stopReason, error: JSON.stringify(error) }, true);
  } catch (failure) {
    // The next recovery meets it again once the lease expires; it is reported either way.
    durable.logger.warn(`koagent: storing run ${state.runId} as failed did not succeed (${describe(failure)})`, failure);
  }
  return new RunFailedError('invalid_resume', message, { ...state, status: 'failed', error });
}

