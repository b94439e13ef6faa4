// The SQL stores' schema, as versioned migrations: migration N brings a database from version
// N - 1 to N. A store applies the ones its database lacks when it opens, in one transaction
// that no other process can interleave with (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory
// lock), and refuses a database of a version newer than it knows.

/** One migration: the statements that bring the schema to its version. */
export type Migration = readonly string[];

const SQLITE_V1: Migration = [
  `CREATE TABLE koagent_runs (
    run_id TEXT PRIMARY KEY,
    agent_name TEXT NOT NULL,
    session_id TEXT NOT NULL,
    identity TEXT NOT NULL,
    status TEXT NOT NULL,
    segment INTEGER NOT NULL,
    steps INTEGER NOT NULL,
    usage TEXT NOT NULL,
    stop_reason TEXT,
    output TEXT,
    error TEXT,
    pending TEXT NOT NULL,
    decisions TEXT NOT NULL,
    children TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    base_run TEXT,
    base_count INTEGER NOT NULL,
    lease_owner TEXT,
    lease_token INTEGER NOT NULL,
    lease_expires INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`,
  // The indexes hold no column a checkpoint changes (lease, counters, times), so a step's write
  // touches no index page of the runs: recovery finds an agent's running runs by (agent, status)
  // and reads their leases; retention scans finished runs by age, in a partial index that a
  // running run is not in.
  'CREATE INDEX koagent_runs_by_agent ON koagent_runs (agent_name, status)',
  'CREATE INDEX koagent_runs_by_session ON koagent_runs (session_id, created_at)',
  'CREATE INDEX koagent_runs_by_base ON koagent_runs (base_run)',
  "CREATE INDEX koagent_runs_finished ON koagent_runs (updated_at) WHERE status <> 'running'",
  // Rows kept in their primary key's order (one b-tree per table, not a table and an index).
  'CREATE TABLE koagent_messages (run_id TEXT NOT NULL, seq INTEGER NOT NULL, message TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID',
  'CREATE TABLE koagent_calls (run_id TEXT NOT NULL, call_id TEXT NOT NULL, entry TEXT NOT NULL, held TEXT, PRIMARY KEY (run_id, call_id)) WITHOUT ROWID',
  'CREATE TABLE koagent_hook_state (run_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, name)) WITHOUT ROWID',
  'CREATE TABLE koagent_sessions (session_id TEXT PRIMARY KEY, agent_name TEXT NOT NULL, head_run TEXT NOT NULL, updated_at INTEGER NOT NULL)',
];

/** PostgreSQL: the same tables (its tables are heaps with a primary key index); times and lease tokens as BIGINT. */
const POSTGRES_V1: Migration = SQLITE_V1.map((statement) => statement
  .replace(/(lease_token|lease_expires|created_at|updated_at) INTEGER/g, '$1 BIGINT')
  .replace(' WITHOUT ROWID', ''));

/**
 * Version 2: retention finds finished runs by `finished_at`, set when a run stops running and
 * cleared when it runs again, instead of by `updated_at`, which every step changes. A step's
 * UPDATE then changes no indexed column, so PostgreSQL can make it a HOT update (no index
 * entry written, the new row version on the same page); SQLite was already spared the index.
 */
const SQLITE_V2: Migration = [
  'ALTER TABLE koagent_runs ADD COLUMN finished_at INTEGER',
  "UPDATE koagent_runs SET finished_at = updated_at WHERE status <> 'running'",
  'DROP INDEX koagent_runs_finished',
  'CREATE INDEX koagent_runs_finished ON koagent_runs (finished_at) WHERE finished_at IS NOT NULL',
];
const POSTGRES_V2: Migration = SQLITE_V2.map((statement) => statement.replace('finished_at INTEGER', 'finished_at BIGINT'));

/**
 * Version 3: the key-value store (`store.keyValues`) that layers keep cross-run state in — caches,
 * rate-limit counters — with an optional expiry (milliseconds, by the database's clock) and a
 * partial index of the rows that expire, so pruning finds them without a scan. SQLite's `value`
 * has no type: JSON text stays text and a counter stays a number, with no conversion either way.
 */
const SQLITE_V3: Migration = [
  'CREATE TABLE koagent_kv (key TEXT PRIMARY KEY, value NOT NULL, expires_at INTEGER)',
  'CREATE INDEX koagent_kv_expiry ON koagent_kv (expires_at) WHERE expires_at IS NOT NULL',
];
const POSTGRES_V3: Migration = [
  'CREATE TABLE koagent_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at BIGINT)',
  'CREATE INDEX koagent_kv_expiry ON koagent_kv (expires_at) WHERE expires_at IS NOT NULL',
];

/**
 * Version 4: each run's event log (docs/streaming.md). Its events are rows keyed by the run and
 * their offset in its log (1, 2, 3 …), deleted with the run. The run's row counts them
 * (`event_count`, the last offset, so an append needs no scan) and keeps the count as of its
 * last checkpoint that carried events (`events_checkpointed`: what a recovering worker compares
 * with). Neither column is indexed, so a step's UPDATE stays a HOT update in PostgreSQL.
 */
const SQLITE_V4: Migration = [
  'ALTER TABLE koagent_runs ADD COLUMN event_count INTEGER NOT NULL DEFAULT 0',
  'ALTER TABLE koagent_runs ADD COLUMN events_checkpointed INTEGER NOT NULL DEFAULT 0',
  'CREATE TABLE koagent_run_events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID',
];
const POSTGRES_V4: Migration = SQLITE_V4.map((statement) => statement.replace(' WITHOUT ROWID', ''));

/** Every migration of each database, in order: index i brings the schema to version i + 1. */
export const MIGRATIONS: Readonly<Record<'sqlite' | 'postgres', readonly Migration[]>> = {
  sqlite: [SQLITE_V1, SQLITE_V2, SQLITE_V3, SQLITE_V4],
  postgres: [POSTGRES_V1, POSTGRES_V2, POSTGRES_V3, POSTGRES_V4],
};

/** The migrations a database at `version` needs, with the version each brings it to; a newer database is refused. */
export function pendingMigrations(migrations: readonly Migration[], version: number, where: string): { version: number; statements: Migration }[] {
  if (version > migrations.length) {
    throw new Error(`${where}: the database has koagent schema version ${version}, newer than this koagent knows (${migrations.length}); a newer koagent wrote it — upgrade koagent to use it`);
  }
  return migrations.slice(version).map((statements, i) => ({ version: version + i + 1, statements }));
}
