// Fork: a new run whose state is a stored run's as it was after one of its steps, optionally
// edited, continued live from there. Nothing done before the fork point runs again: its state is
// read from the stored run's record, not made again.
import { randomUUID } from 'node:crypto';
import { KoagentError } from '../core/vocabulary/errors.js';
import type { RunResult } from '../core/vocabulary/result.js';
import { newRunId, type RunState } from '../core/vocabulary/state.js';
import { adminOf } from '../agent/admin.js';
import type { Agent } from '../agent/agent.js';
import { forkState } from '../features/recording/fork-state.js';
import { checkForkOptions, storedRun, type ForkOptions } from './options.js';

/**
 * Fork a stored run after step `atStep`: a new run (a new id, in a session of its own) starts
 * from the stored run's state as it was then — its transcript, hook and layer state, usage,
 * ledger and layer trace — with `edit` applied (a message replaced, a tool result changed), and
 * goes on live from there, with the agent's model and tools. No tool call made before the fork
 * point runs again; the stored run is not changed; the fork's state says where it came from
 * (`state.forkedFrom`). The run is found by id in the store (`store`, else the agent's), which
 * the fork goes into too; a `RunState` may be given instead (without a store, the fork runs in
 * memory). A run of another version of the agent (another id, or other tools) is refused, as
 * `resume` refuses it, unless `adopt: true` takes it over on purpose. The run must have been
 * recorded with its layer trace (`layerTrace: true`): each step's end is kept in its record.
 *
 * @example const forked = await fork(agent, runId, { atStep: 1, edit: { toolResults: { call_1: 'No such order' } } });
 */
export async function fork<C, O>(agent: Agent<C, O>, run: string | RunState, options: ForkOptions<C>): Promise<RunResult<O>> {
  const where = 'fork(agent, run, options)';
  const { atStep, edit, adopt, store: given, ...call } = checkForkOptions(options, where);
  const admin = adminOf(agent, where);
  const stored = await storedRun(admin, run, given, where);
  const { identity } = admin;
  if (adopt !== true && (stored.agentName !== identity.name || stored.agentId !== identity.id || stored.toolsFingerprint !== identity.toolsFingerprint)) {
    const what = stored.agentName !== identity.name ? `agent "${stored.agentName}", not "${identity.name}"` : `another agent named "${identity.name}" (${stored.agentId !== identity.id ? `id "${stored.agentId}", not "${identity.id}"` : 'other tools'})`;
    throw new KoagentError('invalid_resume', `${where}: run ${stored.runId} belongs to ${what}; fork it with the agent that ran it, or take it over on purpose with { adopt: true }`);
  }
  const state = forkState(stored, atStep, edit, identity, { runId: newRunId(), sessionId: `session_${randomUUID()}` }, where);
  const request = admin.request({ ...call, layerTrace: true }, where);
  return admin.start(state, request, admin.store(given), true) as Promise<RunResult<O>>;
}
