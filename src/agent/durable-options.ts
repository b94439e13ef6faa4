// The options of the calls that only an agent with a run store has (`recover`,
// `pendingApprovals`, a stored `send`), described once as zod schemas like every other.
import { z } from 'zod';
import { functionSchema, optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import type { RunState } from '../core/vocabulary/state.js';
import type { AdoptFilter } from '../durable/adopt.js';
import { assertStore, type RunStore } from '../stores/run-store.js';
import { runCallOptionsSchema, type RunCallOptions } from './options.js';
import type { SegmentRequest } from './run-segment.js';

/**
 * Options of `agent.send`: those of a run; `sessionId` names the stored session to continue
 * (it needs a store; default: the agent's own session).
 *
 * @example await agent.send('And tomorrow?', { sessionId: `user-\${user.id}` });
 *
 * @inline
 */
export type SendOptions<C = unknown> = RunCallOptions<C>;

/**
 * Options of `agent.runs.recover`: those of a run (each recovered segment gets them), how many runs
 * to finish at most, and the run context of each (it is never stored): the same `context` for
 * all, or `contextFor(state)` per run.
 *
 * @example await agent.runs.recover({ limit: 10, contextFor: async (state) => ({ userId: await owner(state.sessionId) }) });
 *
 * @inline
 */
export interface RecoverOptions<C = unknown> extends Omit<RunCallOptions<C>, 'sessionId'> {
  /** Recover at most this many runs in this call (default: every one there is). */
  limit?: number;
  /** The context of one recovered run, from its stored state (in place of `context`). */
  contextFor?: (state: RunState) => C | Promise<C>;
  /**
   * Wait, too, for the runs whose lease has not expired yet: each is recovered once its lease
   * runs out, and no longer waited for once its worker renews it (it is alive). Resolves when
   * none is left to wait for (or `signal` aborts).
   */
  wait?: boolean;
  /**
   * Recover only this run, if it is this agent's and its lease expired (with `wait`: once it
   * expires). A job queue's worker uses it to take over the one run a job names.
   *
   * @example await agent.runs.recover({ runId: 'run_0193…', store });
   */
  runId?: string;
}

/** The error of a `send` (or stream, `where`) that names a session but has no store to keep it in. */
export function sessionWithoutStore(where: string): TypeError {
  const streamed = where.startsWith('agent.stream') ? ', and agent.run(input, { sessionId, stream: true }) streams a run with a fresh transcript in it' : '';
  return new TypeError(`${where.replace('options)', '{ sessionId })')}: a stored session needs a run store (createAgent({ store }) or { store } in these options); without one, send() continues the agent's own session, and agent.run(input, { sessionId }) starts a run in another${streamed}`);
}

/** A `recover` call, checked: its store, how many runs, whether to wait, each run's context, the request of its segments. */
export interface RecoverBegun<C> {
  store: RunStore;
  limit: number | undefined;
  wait: boolean | undefined;
  runId: string | undefined;
  contextFor: ((state: RunState) => C | Promise<C>) | undefined;
  request: SegmentRequest;
}

/**
 * Options of `agent.runs.pendingApprovals` and `agent.runs.recoverable`: the store to read (default: the
 * agent's), and how many runs at most (default 100).
 *
 * @example await agent.runs.pendingApprovals({ limit: 20 });
 *
 * @inline
 */
export interface PendingApprovalsOptions {
  store?: RunStore;
  limit?: number;
}

/**
 * Options of `agent.runs.adopt`: which stored runs of another version of this agent to take
 * over (default: every suspended or failed run under this agent's name that is not this
 * version's), and the store (default: the agent's).
 *
 * @example await agent.runs.adopt({ filter: { status: 'failed' } });
 *
 * @inline
 */
export interface AdoptRunsOptions {
  filter?: AdoptFilter;
  store?: RunStore;
}

export type { RecoverableRun, RecoveredRun } from '../durable/recovery.js';
export type { AdoptedRun, AdoptFilter } from '../durable/adopt.js';

const { sessionId: _noSession, ...runShape } = runCallOptionsSchema.shape;

/** The shape of `agent.runs.recover`'s options: those of a run, without a session, a limit, a context per run. */
const recoverOptionsSchema = optionsSchema({
  ...runShape,
  limit: wholeNumberSchema(1, true).optional(),
  contextFor: functionSchema('a function (state) => the run context').optional(),
  wait: z.boolean({ error: 'must be true or false' }).optional(),
  runId: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }).optional(),
}, { aliases: { run: 'runId', id: 'runId', waitForLeases: 'wait',  max: 'limit', count: 'limit', ctx: 'context', contextOf: 'contextFor', getContext: 'contextFor', abortSignal: 'signal', listener: 'onEvent', runStore: 'store', db: 'store' } });

/** Check the options of `agent.runs.recover`, or throw naming the mistake. */
export function checkRecoverOptions(options: unknown): RecoverOptions & { output?: unknown } {
  const parsed = parseOptions(recoverOptionsSchema, options ?? {}, 'agent.runs.recover(options)');
  if (parsed.store !== undefined) assertStore(parsed.store, 'agent.runs.recover(options): store');
  if (parsed.context !== undefined && parsed.contextFor !== undefined) throw new TypeError('agent.runs.recover(options): give context or contextFor, not both');
  return parsed as RecoverOptions & { output?: unknown };
}

const listOptionsSchema = optionsSchema({
  store: z.unknown().optional(),
  limit: wholeNumberSchema(1).optional(),
}, { aliases: { max: 'limit', count: 'limit', runStore: 'store', db: 'store' } });

/** Check the options of `agent.runs.pendingApprovals` or `agent.runs.recoverable` (`where`), or throw naming the mistake. */
export function checkListOptions(options: unknown, where: string): PendingApprovalsOptions {
  const parsed = parseOptions(listOptionsSchema, options ?? {}, where);
  if (parsed.store !== undefined) assertStore(parsed.store, `${where}: store`);
  return parsed as PendingApprovalsOptions;
}

const adoptStatus = z.enum(['suspended', 'failed'], { error: "must be 'suspended' or 'failed' (a running run is its worker's)" });
const adoptOptionsSchema = optionsSchema({
  store: z.unknown().optional(),
  // The keys of a listRuns filter, so its wording too (wording is kept by the set of keys).
  filter: optionsSchema({
    agentName: z.string({ error: 'must be a string' }).optional(),
    sessionId: z.string({ error: 'must be a string' }).optional(),
    status: z.union([adoptStatus, z.array(adoptStatus)], { error: "must be 'suspended' or 'failed', or an array of them" }).optional(),
    limit: wholeNumberSchema(1).optional(),
  }, { noun: 'a field of a run filter', aliases: { agent: 'agentName', session: 'sessionId', statuses: 'status', max: 'limit' } }).optional(),
}, { aliases: { where: 'filter', runs: 'filter', runStore: 'store', db: 'store' } });

/** Check the options of `agent.runs.adopt`, or throw naming the mistake. */
export function checkAdoptOptions(options: unknown): AdoptRunsOptions {
  const parsed = parseOptions(adoptOptionsSchema, options ?? {}, 'agent.runs.adopt(options)');
  if (parsed.store !== undefined) assertStore(parsed.store, 'agent.runs.adopt(options): store');
  return parsed as AdoptRunsOptions;
}
