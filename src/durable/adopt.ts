// Taking over, on purpose and many at once, the stored runs of another version of an agent
// (after a deploy changed its tools, its id or its name): each is claimed through the store,
// made this agent's, and given back at once in the status it continues from.
import type { Logger } from '../core/vocabulary/contexts.js';
import { describe, KoagentError } from '../core/vocabulary/errors.js';
import type { AgentIdentity, RunState } from '../core/vocabulary/state.js';
import type { RunStore } from '../stores/run-store.js';
import { belongsTo } from './claims.js';
import { storeCall } from './durable-run.js';

/**
 * Which stored runs `agent.runs.adopt` takes over: those of agent `agentName` (default: this
 * agent's name) that belong to another version of it, by session and status.
 *
 * @example await agent.runs.adopt({ filter: { agentName: 'teller-old', status: 'suspended' } });
 *
 * @inline
 */
export interface AdoptFilter {
  /** The name the runs were stored under (default: this agent's); another name renames them. */
  agentName?: string;
  sessionId?: string;
  /** Default both: a running run is its worker's (recovery turns one whose worker died `failed` first). */
  status?: 'suspended' | 'failed' | ('suspended' | 'failed')[];
  /** Look at this many runs at most, newest change first (default 1000); call again for more. */
  limit?: number;
}

/**
 * One run `agent.runs.adopt` looked at: the status it now has as this agent's, or why it was
 * not taken over (its rows cannot be read, its state does not pass the checks, it moved on).
 *
 * @example for (const { runId, status, error } of await agent.runs.adopt()) console.log(runId, status ?? error?.message);
 */
export interface AdoptedRun {
  runId: string;
  /** `running`: recovery continues it (`agent.runs.recover()`, in any worker); `suspended`: it waits for its approvals; `failed`: `agent.resume(runId)` retries it. */
  status?: 'running' | 'suspended' | 'failed';
  error?: KoagentError;
}

/**
 * A run recovery stored failed because it belonged to another version of the agent: it was
 * running when its worker died, so it goes back to `running` for recovery to continue.
 */
function refusedByRecovery(state: RunState): boolean {
  return state.status === 'failed' && state.error?.code === 'invalid_resume';
}

/**
 * Take over the runs `filter` names that belong to another version of `agent`: each is claimed
 * (exactly one claim of a segment goes ahead, so a resume racing with it is refused, or
 * refuses it), stored as this agent's, and given back in the status it continues from. A run
 * recovery turned `failed` for belonging to the other version goes back to `running`, with no
 * lease, so the next `agent.runs.recover()` continues it from its last checkpoint.
 */
export async function adoptRuns(store: RunStore, agent: AgentIdentity, owner: string, logger: Logger, filter: AdoptFilter, adopt: (state: RunState) => RunState): Promise<AdoptedRun[]> {
  const runs = await storeCall(() => store.listRuns({
    agentName: filter.agentName ?? agent.name, sessionId: filter.sessionId, status: filter.status ?? ['suspended', 'failed'], limit: filter.limit ?? 1000,
  }), 'listing runs to adopt');
  const adopted: AdoptedRun[] = [];
  for (const { runId } of runs) {
    try {
      const status = await adoptRun(store, runId, agent, owner, adopt);
      if (status !== undefined) adopted.push({ runId, status });
    } catch (error) {
      if (!KoagentError.is(error)) throw error;
      logger.warn(`koagent: agent.runs.adopt(): run ${runId} was not adopted (${describe(error)})`);
      adopted.push({ runId, error });
    }
  }
  return adopted;
}

/** Adopt one run; its new status, or undefined when it is this agent's already. */
async function adoptRun(store: RunStore, runId: string, agent: AgentIdentity, owner: string, adopt: (state: RunState) => RunState): Promise<AdoptedRun['status']> {
  const stored = await storeCall(() => store.loadRun(runId), `loading run ${runId}`);
  if (stored === undefined || belongsTo(stored, agent)) return undefined;
  if (stored.status !== 'suspended' && stored.status !== 'failed') return undefined;
  const state = adopt(stored);
  const status = refusedByRecovery(stored) ? 'running' : stored.status;
  if (status === 'running') delete state.error;
  const claimed = await storeCall(() => store.claimRun(runId, { owner, segment: stored.segment, state }), `claiming run ${runId}`);
  if ('refused' in claimed) {
    throw new KoagentError('invalid_resume', `run ${runId} ${claimed.refused === 'missing' ? 'was deleted' : `was resumed meanwhile (it is now ${claimed.status} at segment ${claimed.segment})`}; it is not adopted`);
  }
  const error = state.error === undefined ? null : JSON.stringify(state.error);
  // Given back at once: `final` releases the lease; a run left `running` is recovery's to continue.
  await storeCall(() => store.checkpoint(claimed.lease, {
    status, segment: state.segment, steps: state.steps, usage: JSON.stringify(state.usage), stopReason: status === 'running' ? undefined : state.stopReason, error,
  }, true), `storing run ${runId} as adopted`);
  return status;
}
