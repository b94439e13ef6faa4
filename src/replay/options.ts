// The options of fork and replay, described once as zod schemas like every other options object,
// and how both find the stored run they start from.
import { z } from 'zod';
import type { EventListener } from '../core/vocabulary/events.js';
import { functionSchema, optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import type { Middleware } from '../core/vocabulary/middleware.js';
import { KoagentError } from '../core/vocabulary/errors.js';
import type { RunState } from '../core/vocabulary/state.js';
import { checkState } from '../core/state/state-schema.js';
import { assertStore, type RunStore } from '../stores/run-store.js';
import type { AgentHook } from '../dialects/agent-hook/agent-hook.js';
import type { Hook } from '../dialects/criogen/types.js';
import type { AgentAdmin } from '../agent/admin.js';
import type { ForkEdit } from '../features/recording/fork-state.js';

/**
 * The options of a call's segments that fork and replay take as `run` does: the run context
 * (never stored), a signal that cancels, a listener of the run's events, metadata.
 *
 * @example await fork(agent, runId, { atStep: 1, context: { db }, onEvent: (e) => console.log(e.type) });
 *
 * @inline
 */
export interface SegmentCallOptions<C = unknown> {
  context?: C;
  signal?: AbortSignal;
  onEvent?: EventListener;
  metadata?: Record<string, unknown>;
}

/**
 * Options of `fork`: after which step (`atStep`: 0 is before the first model turn), what to
 * change there (`edit`), the store the run is in and the fork goes into (default: the agent's),
 * and whether to take over a run of another version of the agent (`adopt`, as `agent.runs.adoptState` does).
 *
 * @example await fork(agent, runId, { atStep: 2, edit: { messages: { 0: { role: 'user', content: 'Refund order 7 instead' } } } });
 *
 * @inline
 */
export interface ForkOptions<C = unknown> extends SegmentCallOptions<C> {
  atStep: number;
  edit?: ForkEdit;
  store?: RunStore;
  /** Fork a run of another version of this agent (another id, or other tools) on purpose: the fork is this agent's. */
  adopt?: boolean;
}

/**
 * Options of `replay`: the store the run is in (default: the agent's), middleware or hooks added
 * innermost for this replay only (`layers`), and `live: true` to go on with the real model and
 * tools from the first difference instead of stopping there.
 *
 * @example const report = await replay(agent, runId, { layers: [stricterGuard], live: true });
 *
 * @inline
 */
export interface ReplayOptions<C = unknown> extends SegmentCallOptions<C> {
  store?: RunStore;
  layers?: (Middleware<C> | AgentHook | Hook)[];
  live?: boolean;
}

const callShape = {
  context: z.unknown().optional(),
  signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
  onEvent: functionSchema().optional(),
  metadata: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  store: z.unknown().optional(),
};
const callAliases = { ctx: 'context', abortSignal: 'signal', listener: 'onEvent', runStore: 'store', db: 'store' };

const forkSchema = optionsSchema({
  ...callShape,
  atStep: wholeNumberSchema(0, false, 'must be a whole number ≥ 0: the step after which the fork takes the run (0: before the first model turn)'),
  edit: optionsSchema({
    messages: z.record(z.string(), z.unknown(), { error: 'must be an object of transcript indexes to messages' }).optional(),
    toolResults: z.record(z.string(), z.union([z.string(), z.array(z.unknown())], { error: 'must be the text (or content parts) the model reads' }), { error: 'must be an object of tool call ids to results' }).optional(),
  }, { noun: 'a field of a fork edit', aliases: { message: 'messages', replace: 'messages', results: 'toolResults', toolResult: 'toolResults', tools: 'toolResults' } }).optional(),
  adopt: z.boolean({ error: 'must be true or false' }).optional(),
}, { noun: 'an option of fork', aliases: { ...callAliases, step: 'atStep', at: 'atStep', afterStep: 'atStep', edits: 'edit', change: 'edit' } });

const replaySchema = optionsSchema({
  ...callShape,
  layers: z.array(z.unknown(), { error: 'must be an array of middleware or hooks' }).optional(),
  live: z.boolean({ error: 'must be true or false' }).optional(),
}, { noun: 'an option of replay', aliases: { ...callAliases, middleware: 'layers', hooks: 'layers', goLive: 'live', continueLive: 'live' } });

function checked<T extends { store?: unknown; metadata?: unknown }>(schema: z.ZodType, options: unknown, where: string): T {
  const parsed = parseOptions(schema, options ?? {}, where) as T;
  if (parsed.store !== undefined) assertStore(parsed.store, `${where}: store`);
  // The caller's own object: zod's copy of a record leaves out a `__proto__` key.
  if (parsed.metadata !== undefined) parsed.metadata = (options as { metadata: unknown }).metadata;
  return parsed;
}

/** Check the options of `fork`, or throw naming the mistake. */
export function checkForkOptions(options: unknown, where: string): ForkOptions {
  if (typeof options !== 'object' || options === null || !('atStep' in options)) throw new TypeError(`${where}: give the step to fork after: { atStep: n } (0: before the first model turn)`);
  return checked<ForkOptions>(forkSchema, options, where);
}

/** Check the options of `replay`, or throw naming the mistake. */
export function checkReplayOptions(options: unknown, where: string): ReplayOptions {
  return checked<ReplayOptions>(replaySchema, options, where);
}

/**
 * The run a fork or replay starts from: by id from the store, or the state given; checked whole
 * either way. Only read (what a fork takes of it is copied), so a state given is not copied.
 */
export async function storedRun(admin: AgentAdmin, run: string | RunState, given: RunStore | undefined, where: string): Promise<RunState> {
  if (typeof run !== 'string') return checkState(run);
  if (run === '') throw new TypeError(`${where}: the run id is empty; pass the runId of a stored run, or its RunState`);
  const store = admin.store(given, where);
  const state = await store.loadRun(run);
  if (state === undefined) throw new KoagentError('invalid_resume', `${where}: there is no run ${run} in the store (${store.kind}); it was never stored, or it was deleted or pruned`);
  return checkState(state);
}
