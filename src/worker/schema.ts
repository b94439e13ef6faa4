// The worker's own tables, beside the run store's and pg-boss's: what was asked of each run
// (dispatch) and the slots of agents with a concurrency limit. The run store stays the truth
// about a run (its event log included); these say how it is dispatched.
import type PgBoss from 'pg-boss';
import type { QueueDb } from './connection.js';

export { NOW } from './connection.js';

/** Channels of NOTIFY: a job was sent (payload: its queue), a run settled, a run is to be cancelled. (The store NOTIFYs its own of new events.) */
export const CHANNELS = { jobs: 'koagent_jobs', settled: 'koagent_settled', cancel: 'koagent_cancel' } as const;

const DDL = `
CREATE TABLE IF NOT EXISTS koagent_dispatch (
  run_id text PRIMARY KEY,
  agent_name text NOT NULL,
  version text,
  tenant text NOT NULL DEFAULT '',
  priority integer NOT NULL DEFAULT 0,
  idempotency_key text,
  input text,
  session_id text,
  context text,
  metadata text,
  stream boolean NOT NULL DEFAULT false,
  state text NOT NULL,
  status text,
  stop_reason text,
  attempts integer NOT NULL DEFAULT 0,
  error text,
  cancel boolean NOT NULL DEFAULT false,
  adopt boolean NOT NULL DEFAULT false,
  worker text,
  held_until bigint NOT NULL DEFAULT 0,
  job text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS koagent_dispatch_idempotency ON koagent_dispatch (agent_name, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS koagent_dispatch_state ON koagent_dispatch (state, agent_name);
CREATE INDEX IF NOT EXISTS koagent_dispatch_held ON koagent_dispatch (worker, held_until) WHERE held_until > 0;
CREATE TABLE IF NOT EXISTS koagent_slots (
  run_id text PRIMARY KEY,
  agent_name text NOT NULL,
  tenant text NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS koagent_slots_agent ON koagent_slots (agent_name, tenant);
`;

/** A lock id of the creation of the worker's tables and of pg-boss's schema (distinct from the run store's). */
const SCHEMA_LOCK = 7_401_929_003;

/**
 * Create the worker's tables if they are missing, then `startBoss` (pg-boss creates or migrates
 * its schema as it starts), one process at a time: pg-boss's own creation is not safe for
 * processes starting at once (a second `CREATE SCHEMA IF NOT EXISTS` may still fail, with a
 * duplicate key, when it looked for the schema before the first committed it).
 */
export async function prepareSchema<T>(db: QueueDb, startBoss: () => Promise<T>): Promise<T> {
  return db.whileLocked(SCHEMA_LOCK, async () => {
    await db.query(DDL);
    return startBoss();
  });
}

/** A lock id of queue creation: pg-boss 10 deadlocks when two processes create queues at once. */
const QUEUE_LOCK = 7_401_929_005;

/**
 * How pg-boss treats the jobs of a queue: retried `retryLimit` times (after 1 s, backing off),
 * and expired — failed, so retried by another worker — when they run `expireInSeconds` without
 * an end (their worker died before the store held the run).
 */
export interface QueueSettings {
  retryLimit: number;
  expireInSeconds: number;
}

/**
 * Create pg-boss queue `name` unless it exists, one process at a time; with `settings` (a
 * worker's), set its retries and expiry, which every job sent to it then has.
 */
export async function ensureQueue(db: QueueDb, boss: PgBoss, name: string, settings?: QueueSettings): Promise<void> {
  const options = settings === undefined ? {} : { retryLimit: settings.retryLimit, retryDelay: 1, retryBackoff: true, expireInSeconds: settings.expireInSeconds };
  if ((await boss.getQueue(name)) === null) {
    await db.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [QUEUE_LOCK]);
      if ((await boss.getQueue(name)) === null) await createQueue(boss, name, options);
    });
  }
  if (settings !== undefined) await boss.updateQueue(name, { name, ...options });
}

/** The queue of new runs of `agent` (any version's worker may start them), or of the work of one version. */
export function queueName(agent: string, version?: string): string {
  const name = `koagent.${encodeURIComponent(agent)}`;
  return version === undefined ? name : `${name}.v.${encodeURIComponent(version)}`;
}

/** The queue a schedule's cron sends to (pg-boss has one schedule per queue). */
export function scheduleQueue(schedule: string): string {
  return `koagent-cron.${encodeURIComponent(schedule)}`;
}

export function isScheduleQueue(queue: string): boolean {
  return queue.startsWith('koagent-cron.');
}

/**
 * Make pg-boss's queue `name`. Making a queue adds a partition of pg-boss's job table, which
 * can deadlock with pg-boss's own work on that table; PostgreSQL aborts one side, which tries again.
 */
async function createQueue(boss: PgBoss, name: string, options: Partial<PgBoss.Queue>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await boss.createQueue(name, { name, policy: 'standard', ...options });
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.floor(Math.random() * 50)));
    }
  }
}
