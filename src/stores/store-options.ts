// The options every store shares, as zod schemas checked with the project's helpers: an unknown
// key is refused naming the closest valid one, a wrong value says what it got.
import { z } from 'zod';
import { functionSchema, optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import type { RunStatus } from '../core/vocabulary/state.js';
import { clockSchema } from './clock.js';
import type { ReadEventsOptions, RetentionPolicy, RunFilter, WaitForEventsOptions } from './run-store.js';

const STATUSES = ['running', 'completed', 'suspended', 'failed'] as const;
const PRUNABLE = ['completed', 'failed', 'suspended'] as const;

/** A retention policy: which finished runs `prune` deletes. */
const retentionSchema = optionsSchema({
  olderThanMs: z.number({ error: 'must be a number of milliseconds ≥ 0' }).min(0, { error: 'must be a number of milliseconds ≥ 0' }),
  statuses: z.array(z.enum(PRUNABLE, { error: "must be 'completed', 'failed' or 'suspended' (a running run is never pruned)" }), { error: "must be an array of 'completed', 'failed' or 'suspended'" }).optional(),
}, { noun: 'a field of a retention policy', aliases: { maxAgeMs: 'olderThanMs', ageMs: 'olderThanMs', olderThan: 'olderThanMs', status: 'statuses' } });

/** The options all three stores take. */
export const commonStoreOptions = {
  leaseMs: z.number({ error: 'must be a number of milliseconds ≥ 10' }).min(10, { error: 'must be a number of milliseconds ≥ 10' }).optional(),
  retention: retentionSchema.optional(),
  clock: clockSchema.optional(),
};

/** Keys people write for the common options. */
export const commonAliases: Record<string, string> = { lease: 'leaseMs', leaseTimeoutMs: 'leaseMs', leaseDurationMs: 'leaseMs', ttlMs: 'leaseMs', retentionPolicy: 'retention', prune: 'retention', timer: 'clock', timers: 'clock' };

/** `memoryStore`'s options. */
export const memoryStoreSchema = optionsSchema({
  ...commonStoreOptions,
  now: functionSchema('a function () => milliseconds').optional(),
}, { noun: 'an option of memoryStore', aliases: commonAliases });

/** The default lease: long enough for a blocked event loop, short enough to recover within a minute. */
export const DEFAULT_LEASE_MS = 30_000;

/**
 * Check a store's options against `schema` (a `TypeError` starting with `where` otherwise),
 * and its retention policy if it has one.
 */
export function parseStoreOptions<S extends z.ZodType>(schema: S, options: unknown, where: string): z.output<S> {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object`);
  return parseOptions(schema, options, where);
}

/** The statuses a retention policy prunes, checked; a mistake names the policy's field. */
export function retentionStatuses(policy: RetentionPolicy | undefined, where: string): { olderThanMs: number; statuses: RunStatus[] } {
  if (policy === undefined) throw new TypeError(`${where}: give a retention policy { olderThanMs, statuses? }, here or as the store's \`retention\` option`);
  if (typeof policy !== 'object' || policy === null) throw new TypeError(`${where}: the retention policy must be an object { olderThanMs, statuses? }`);
  const { olderThanMs, statuses = ['completed', 'failed'] } = parseOptions(retentionSchema, policy, where);
  return { olderThanMs, statuses: [...statuses] };
}

const filterSchema = optionsSchema({
  agentName: z.string({ error: 'must be a string' }).optional(),
  sessionId: z.string({ error: 'must be a string' }).optional(),
  status: z.union([z.enum(STATUSES), z.array(z.enum(STATUSES))], { error: "must be 'running', 'completed', 'suspended' or 'failed', or an array of them" }).optional(),
  limit: wholeNumberSchema(1).optional(),
}, { noun: 'a field of a run filter', aliases: { agent: 'agentName', session: 'sessionId', statuses: 'status', max: 'limit' } });

/** A `listRuns` filter, checked. */
export function parseFilter(filter: RunFilter | undefined): RunFilter {
  return parseOptions(filterSchema, filter ?? {}, 'store.listRuns(filter)');
}

/** The most events one `readEvents` gives. */
export const MAX_EVENT_PAGE = 1000;

const readEventsSchema = optionsSchema({
  after: wholeNumberSchema(0, false, 'must be the offset of an event seen (a whole number ≥ 0; 0 for the first)').optional(),
  limit: z.custom<number>((value) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_EVENT_PAGE, { error: `must be a whole number from 1 to ${MAX_EVENT_PAGE}` }).optional(),
}, { aliases: { from: 'after', since: 'after', seq: 'after', offset: 'after', cursor: 'after', max: 'limit', count: 'limit' } });

/** `readEvents` options, checked, with their defaults. */
export function parseReadEvents(options: ReadEventsOptions | undefined): { after: number; limit: number } {
  const { after = 0, limit = 500 } = parseOptions(readEventsSchema, options ?? {}, 'store.readEvents(runId, options)');
  return { after, limit };
}

const waitSchema = optionsSchema({
  signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
  timeoutMs: wholeNumberSchema(0, false, 'must be a whole number of milliseconds ≥ 0').optional(),
}, { aliases: { abortSignal: 'signal', timeout: 'timeoutMs' } });

/** `waitForEvents` arguments, checked, with their defaults. */
export function parseWaitForEvents(runId: unknown, after: unknown, options: WaitForEventsOptions | undefined): { signal: AbortSignal | undefined; timeoutMs: number } {
  const where = 'store.waitForEvents(runId, after, options)';
  checkRunId(runId, where);
  if (!Number.isInteger(after) || (after as number) < 0) throw new TypeError(`${where}: after must be the offset of an event seen (a whole number ≥ 0), not ${String(after)}`);
  const { signal, timeoutMs = 1000 } = parseOptions(waitSchema, options ?? {}, where);
  return { signal, timeoutMs };
}

/** A run id as the event log's methods take it: a non-empty string. */
export function checkRunId(runId: unknown, where: string): asserts runId is string {
  if (typeof runId !== 'string' || runId === '') throw new TypeError(`${where}: runId must be a run's id, a non-empty string (got ${runId === '' ? 'an empty string' : typeof runId})`);
}
