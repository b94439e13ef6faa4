// The options of createWorker and createClient, and of the client's methods, described once:
// the checks and their messages come from these schemas, as for every options object of koagent.
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import type { Logger } from '../core/vocabulary/contexts.js';
import { functionSchema, optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import type { RunStore } from '../stores/run-store.js';
import { clockSchema, type Clock } from '../stores/clock.js';
import type { QueuePool } from './connection.js';
import type { VersionedAgent } from './job-runner.js';
import type { QueueSettings } from './schema.js';
import type { AgentLimit } from './slots.js';

/**
 * Where the queue's PostgreSQL is: a connection string, or a `pg.Pool` of yours. The run store
 * defaults to a `postgresStore` in the same database.
 *
 * @example { connectionString: process.env.DATABASE_URL }
 */
export interface QueueConnection {
  connectionString?: string;
  /** A `pg.Pool` of yours (then closing leaves it open). */
  pool?: QueuePool;
  /** The run store (default: `postgresStore` over the same pool). It must be a PostgreSQL store that every worker and client shares. */
  store?: RunStore;
}

/**
 * Options of `createWorker`.
 *
 * @example await createWorker({ connectionString, agents: [teller], version: '2', concurrency: 8, limits: { teller: { concurrency: 20, perTenant: 5 } } })
 *
 * @inline
 */
export interface WorkerOptions extends QueueConnection {
  /** The agents this worker runs, each with its version (default: the worker's `version`). */
  agents: Array<Agent<any, any> | { agent: Agent<any, any>; version?: string }>;
  /** The version of the agents given without one (default `'1'`): a worker takes runs only of the versions it has. */
  version?: string;
  /** Segments this process runs at once (default 4). */
  concurrency?: number;
  /** Per agent name, a limit across all workers, and a tenant's share of it. */
  limits?: Record<string, AgentLimit>;
  /** Take new runs (default true); false drains: only the runs of this worker's versions already under way. */
  takesNewRuns?: boolean;
  /** A run's segments that may start without one ending well (crashes, retried failures) before it goes to the dead letters (default 5). */
  maxAttempts?: number;
  /** Which failures of a run are retried (default: `model_error` and `store_error`); the rest settle failed. */
  retryOn?: (error: { code: string; message: string }) => boolean;
  /** The first retry's delay, doubled at each next one (default 1000 ms). */
  retryDelayMs?: number;
  /** pg-boss's retries of a job whose handler threw (default 3); the job's last failure sends its run to the dead letters. */
  retryLimit?: number;
  /** The lease of the store this worker makes (default the store's 30 s); with `store`, the store's own. */
  leaseMs?: number;
  /** How long `stop()` (and SIGTERM) waits for the segments under way (default 30 s). */
  shutdownMs?: number;
  /** Stop gracefully on SIGTERM and SIGINT, then exit (default true). */
  handleSignals?: boolean;
  /** How often the queues are polled when no NOTIFY came (default 2000 ms). */
  pollMs?: number;
  /** How often this worker looks for runs whose lease expired (default half a lease). */
  sweepMs?: number;
  /** How often pg-boss expires jobs whose worker went silent, and archives old ones (default 10 s). */
  maintenanceIntervalSeconds?: number;
  /**
   * Log each run's events in the run store's event log, for the clients that follow it
   * (`client.events`; default true). The events are deleted with their run (the store's retention).
   */
  recordEvents?: boolean;
  /** How often the list of schedules is read again (default 60 s). */
  scheduleRefreshMs?: number;
  /** This worker's name in leases (default `host:pid:random`). */
  id?: string;
  logger?: Logger;
  /**
   * The clock its holds, slots and leases go by (default: the database server's), for tests that
   * move time: the store it makes takes it too; a `store` given must have been made with it.
   */
  clock?: Clock;
}

const nonEmpty = (what = 'must be a non-empty string') => z.string({ error: what }).min(1, { error: what });
const pool = z.custom<QueuePool>((value) => typeof (value as QueuePool | null)?.connect === 'function' && typeof (value as QueuePool).query === 'function', { error: 'must be a pg.Pool' });
const connectionShape = {
  connectionString: nonEmpty("must be a string, e.g. 'postgres://user:password@host:5432/db'").optional(),
  pool: pool.optional(),
  store: z.unknown().optional(),
};
const limitSchema = optionsSchema({ concurrency: wholeNumberSchema(1), perTenant: wholeNumberSchema(1).optional() }, { noun: 'a limit', aliases: { max: 'concurrency', tenant: 'perTenant', perTenantMax: 'perTenant' } });
const agentEntry = z.union([
  z.instanceof(Agent),
  optionsSchema({ agent: z.instanceof(Agent, { error: 'must be an agent made with createAgent' }), version: nonEmpty().optional() }, { noun: 'a key of an agent entry' }),
], { error: 'must be an agent made with createAgent, or { agent, version }' });
const ms = (min: number) => wholeNumberSchema(min, false, `must be a whole number of milliseconds ≥ ${min}`);

const workerSchema = optionsSchema({
  ...connectionShape,
  agents: z.array(agentEntry, { error: 'must be an array of agents (or { agent, version })' }).min(1, { error: 'must name at least one agent' }),
  version: nonEmpty().optional(),
  concurrency: wholeNumberSchema(1).optional(),
  limits: z.record(z.string(), limitSchema, { error: 'must be an object: { [agentName]: { concurrency, perTenant? } }' }).optional(),
  takesNewRuns: z.boolean({ error: 'must be true or false' }).optional(),
  maxAttempts: wholeNumberSchema(1).optional(),
  retryOn: functionSchema('a function (error) => boolean').optional(),
  retryDelayMs: ms(0).optional(),
  retryLimit: wholeNumberSchema(0).optional(),
  leaseMs: ms(10).optional(),
  shutdownMs: ms(0).optional(),
  handleSignals: z.boolean({ error: 'must be true or false' }).optional(),
  pollMs: ms(10).optional(),
  sweepMs: ms(10).optional(),
  maintenanceIntervalSeconds: wholeNumberSchema(1).optional(),
  recordEvents: z.boolean({ error: 'must be true or false' }).optional(),
  scheduleRefreshMs: ms(100).optional(),
  id: nonEmpty().optional(),
  logger: z.custom<Logger>((value) => typeof (value as Logger | null)?.warn === 'function', { error: 'must have a warn(message) method (console does)' }).optional(),
  clock: clockSchema.optional(),
}, { aliases: { workers: 'concurrency', parallelism: 'concurrency', deployVersion: 'version', runStore: 'store', db: 'store', url: 'connectionString', databaseUrl: 'connectionString' } });

/** The worker's options, checked, with their defaults. */
export function checkWorkerOptions(options: WorkerOptions) {
  if (typeof options === 'object' && options !== null && 'eventRetentionMs' in options) {
    throw new TypeError("createWorker(options): eventRetentionMs is no longer an option: a run's events are kept in the run store's event log and deleted with the run (set the store's retention: postgresStore({ retention }), or store.prune())");
  }
  const given = parseOptions(workerSchema, options, 'createWorker(options)');
  whereIsTheDatabase(given, 'createWorker');
  const version = given.version ?? '1';
  const agents: VersionedAgent[] = given.agents.map((entry) => (entry instanceof Agent ? { agent: entry, version } : { agent: entry.agent, version: entry.version ?? version }));
  const names = new Set<string>();
  for (const { agent } of agents) {
    if (names.has(agent.name)) throw new TypeError(`createWorker(options): two agents are named "${agent.name}"; a worker runs one version of each agent (run another version in another worker)`);
    names.add(agent.name);
  }
  const store = given.store as RunStore | undefined;
  if (given.clock !== undefined && store !== undefined && store.clock !== given.clock) {
    throw new TypeError('createWorker(options): clock is not the clock of the store given; make the store with it too (postgresStore({ …, clock })), so holds and leases go by one clock');
  }
  for (const name of Object.keys(given.limits ?? {})) {
    if (!names.has(name)) throw new TypeError(`createWorker(options): limits names "${name}", which is not one of this worker's agents (${[...names].join(', ')})`);
  }
  return {
    ...given, agents, store,
    concurrency: given.concurrency ?? 4,
    limits: (given.limits ?? {}) as Record<string, AgentLimit>,
    takesNewRuns: given.takesNewRuns ?? true,
    maxAttempts: given.maxAttempts ?? 5,
    retryOn: given.retryOn ?? ((error: { code: string }) => RETRIED.has(error.code)),
    retryDelayMs: given.retryDelayMs ?? 1000,
    retryLimit: given.retryLimit ?? 3,
    shutdownMs: given.shutdownMs ?? 30_000,
    handleSignals: given.handleSignals ?? true,
    pollMs: given.pollMs ?? 2000,
    maintenanceIntervalSeconds: given.maintenanceIntervalSeconds ?? 10,
    recordEvents: given.recordEvents ?? true,
    scheduleRefreshMs: given.scheduleRefreshMs ?? 60_000,
    logger: given.logger ?? console,
  };
}

/** The failures of a run retried by default: a provider that failed, a store that did not answer. */
const RETRIED = new Set(['model_error', 'store_error']);

/**
 * Options of `createClient`.
 *
 * @example const client = await createClient({ connectionString: process.env.DATABASE_URL });
 *
 * @inline
 */
export interface ClientOptions extends QueueConnection {}

const clientSchema = optionsSchema({ ...connectionShape }, { aliases: { runStore: 'store', db: 'store', url: 'connectionString', databaseUrl: 'connectionString' } });

export function checkClientOptions(options: ClientOptions) {
  const given = parseOptions(clientSchema, options, 'createClient(options)');
  whereIsTheDatabase(given, 'createClient');
  return { ...given, store: given.store as RunStore | undefined };
}

const integer = (what: string) => z.custom<number>((value) => Number.isSafeInteger(value), { error: `must be an integer${what}` });
const signal = z.instanceof(AbortSignal, { error: 'must be an AbortSignal' });
/** What `client.start` and a schedule both take, beside the agent and the input. */
const runShape = {
  tenant: z.string({ error: 'must be a string' }).optional(),
  priority: integer(' (higher first)').optional(),
  metadata: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  context: z.unknown().optional(),
  version: nonEmpty().optional(),
  stream: z.boolean({ error: 'must be true or false' }).optional(),
};
const runAliases = { tenantId: 'tenant', ctx: 'context', runContext: 'context', streaming: 'stream', agentVersion: 'version' };

/**
 * The options of each method of the client, checked as every options object of koagent is: a
 * misspelt key (`idempotencykey`) is a `TypeError` naming the key meant, not an option ignored.
 */
export const clientCallSchemas = {
  start: optionsSchema({
    ...runShape,
    sessionId: nonEmpty().optional(),
    idempotencyKey: nonEmpty().optional(),
  }, { aliases: { ...runAliases, session: 'sessionId', idempotency: 'idempotencyKey', key: 'idempotencyKey', requestId: 'idempotencyKey' } }),
  wait: optionsSchema({
    signal: signal.optional(),
    timeoutMs: ms(0).optional(),
  }, { aliases: { abortSignal: 'signal', timeout: 'timeoutMs' } }),
  events: optionsSchema({
    after: wholeNumberSchema(0, false, 'must be the seq of an event seen (its offset in the run\'s log, a whole number ≥ 0)').optional(),
    signal: signal.optional(),
  }, { aliases: { abortSignal: 'signal', since: 'after', from: 'after', seq: 'after', cursor: 'after' } }),
  list: optionsSchema({
    agent: nonEmpty().optional(),
    limit: wholeNumberSchema(1).optional(),
  }, { aliases: { agentName: 'agent', name: 'agent', max: 'limit', count: 'limit' } }),
  moveRuns: optionsSchema({
    agent: nonEmpty(),
    from: nonEmpty('must be the version the runs are on, a non-empty string'),
    to: nonEmpty('must be the version to move them to, a non-empty string'),
  }, { aliases: { agentName: 'agent', fromVersion: 'from', toVersion: 'to' } }),
  schedule: optionsSchema({
    ...runShape,
    agent: nonEmpty("must be the name of an agent a worker runs, e.g. 'reporter'"),
    cron: nonEmpty("must be a cron expression, e.g. '0 3 * * *'"),
    input: z.custom((value) => value !== undefined && value !== null, { error: 'is missing: a string, a message, or an array of messages' }),
    tz: nonEmpty("must be a time zone, e.g. 'Europe/Paris'").optional(),
  }, { noun: 'a field of a schedule', aliases: { ...runAliases, agentName: 'agent', schedule: 'cron', timezone: 'tz', timeZone: 'tz' } }),
};

/** A method's options (`kind`), checked, or a TypeError from `where` naming the mistake. */
export function checkCallOptions<K extends keyof typeof clientCallSchemas>(kind: K, options: unknown, where: string): z.output<(typeof clientCallSchemas)[K]> {
  return parseOptions(clientCallSchemas[kind] as z.ZodType, options ?? {}, where) as z.output<(typeof clientCallSchemas)[K]>;
}

function whereIsTheDatabase(given: { connectionString?: string; pool?: unknown }, who: string): void {
  if (given.connectionString === undefined && given.pool === undefined) throw new TypeError(`${who}(options): say where the PostgreSQL of the queue is: { connectionString: 'postgres://…' } or { pool }`);
  if (given.connectionString !== undefined && given.pool !== undefined) throw new TypeError(`${who}(options): give connectionString or pool, not both`);
}

/**
 * The settings of the worker's queues: a job whose handler threw is retried `retryLimit` times;
 * one whose worker went silent expires after 15 minutes (or two leases, if longer) — a backstop
 * only: the sweep puts a dead worker's work back on the queue as soon as its hold lapses.
 */
export function queueSettings(leaseMs: number, retryLimit: number): QueueSettings {
  return { retryLimit, expireInSeconds: Math.max(900, Math.ceil((2 * leaseMs) / 1000)) };
}
