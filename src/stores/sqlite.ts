// The SQLite run store: the embedded default, one file, no server. better-sqlite3 is an
// optional peer dependency, loaded here only, when a store is made.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { optionsSchema } from '../core/vocabulary/options.js';
import { commonAliases, commonStoreOptions, DEFAULT_LEASE_MS, parseStoreOptions } from './store-options.js';
import type { EventLogStore, RetentionPolicy, StoreStats } from './run-store.js';
import type { Clock } from './clock.js';
import { paramBytes, type Dialect, type Op, type Row, type Sql } from './sql/query.js';
import { MIGRATIONS, pendingMigrations } from './sql/schema.js';
import { SqlStore, type SqlRunner, type WriteOptions } from './sql/sql-store.js';

/**
 * Options of `sqliteStore`.
 *
 * @example sqliteStore({ path: './data/runs.db', leaseMs: 15_000, retention: { olderThanMs: 7 * 86_400_000 } })
 *
 * @inline
 */
export interface SqliteStoreOptions {
  /** The database file (created if missing). Every process that shares runs opens the same file. */
  path: string;
  /** How long a lease lasts unless renewed (default 30 s). */
  leaseMs?: number;
  /**
   * How far a commit survives (WAL mode throughout):
   * - `'before-tools'` (default): every checkpoint survives the process dying (kill -9), and the
   *   one that stores a tool call `running` before its tool is entered is fsynced, so it survives
   *   a power loss too: a tool with an effect is never run a second time after one (about one
   *   fsync per tool call, ~2 ms on a VM's disk);
   * - `'normal'`: no fsync at a commit; after a power loss the last checkpoints may be gone —
   *   a `running` mark among them, so a tool that had taken effect is run again, whatever its
   *   `onInterrupted` policy says;
   * - `'full'`: every commit fsynced; a power loss loses nothing committed.
   */
  synchronous?: 'before-tools' | 'normal' | 'full';
  /** How long a write waits for another process's write to finish before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /** The default policy of `prune()`. */
  retention?: RetentionPolicy;
  /**
   * A clock for the store's times — leases, key-value expiries, retention — sent with each
   * statement, instead of the database's; its timers renew the leases of the runs it holds. For
   * tests that move time (default: the database's clock, and `systemClock` for the timers).
   */
  clock?: Clock;
}

const sqliteStoreSchema = optionsSchema({
  path: z.string({ error: "must name the database file, e.g. sqliteStore({ path: 'runs.db' })" }).min(1, { error: "must name the database file, e.g. sqliteStore({ path: 'runs.db' })" }),
  synchronous: z.enum(['before-tools', 'normal', 'full'], { error: "must be 'before-tools', 'normal' or 'full'" }).optional(),
  busyTimeoutMs: z.number({ error: 'must be a number of milliseconds ≥ 0' }).min(0, { error: 'must be a number of milliseconds ≥ 0' }).optional(),
  ...commonStoreOptions,
}, { noun: 'an option of sqliteStore', aliases: { ...commonAliases, file: 'path', filename: 'path', database: 'path', db: 'path', sync: 'synchronous', busyTimeout: 'busyTimeoutMs', timeout: 'busyTimeoutMs' } });

const SQLITE: Dialect = {
  name: 'sqlite',
  now: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
  lockRow: '',
  pickRow: '',
};

/**
 * A run store in one SQLite file: the embedded default. WAL mode, a busy timeout, and
 * `BEGIN IMMEDIATE` for every write transaction, so several processes on one machine can
 * share the file safely (each checkpoint is one transaction). Needs `better-sqlite3` (12.x).
 *
 * @example import { sqliteStore } from 'koagent/sqlite';
 *          const agent = createAgent({ model, tools, store: sqliteStore({ path: 'runs.db' }) });
 */
export function sqliteStore(options: SqliteStoreOptions): EventLogStore {
  parseStoreOptions(sqliteStoreSchema, options, 'sqliteStore(options)');
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const synchronous = options.synchronous ?? 'before-tools';
  const busy = options.busyTimeoutMs ?? 5000;
  const Database = loadDriver();
  let db: BetterSqlite3.Database;
  try {
    db = new Database(options.path, { timeout: busy });
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma(`busy_timeout = ${Math.floor(busy)}`);
  } catch (error) {
    throw new Error(`sqliteStore: cannot open ${options.path}: ${(error as Error).message}`, { cause: error });
  }
  const runner = new SqliteRunner(db, synchronous === 'before-tools');
  try {
    migrate(db, options.path);
  } catch (error) {
    db.close();
    throw error;
  }
  // Other processes' appends are found by looking at the run's row: a read of one row, every 20 ms, while a follower waits.
  return new SqlStore('sqlite', leaseMs, SQLITE, runner, options.retention, { pollMs: 20 }, options.clock);
}

function loadDriver(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    throw new Error('sqliteStore needs the better-sqlite3 package (an optional peer dependency of koagent): npm install better-sqlite3@12', { cause: error });
  }
}

/**
 * The part of a better-sqlite3 `Database` that `migrate` uses, declared here so that koagent's
 * declarations compile without `@types/better-sqlite3`.
 */
interface MigratedDatabase {
  transaction(fn: () => void): { immediate(): void };
  pragma(source: string, options?: { simple?: boolean }): unknown;
  exec(source: string): unknown;
}

/** Bring the file's schema to the latest version (its version is SQLite's `user_version`). */
export function migrate(db: MigratedDatabase, where: string, migrations = MIGRATIONS.sqlite): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    for (const { version: next, statements } of pendingMigrations(migrations, version, `sqliteStore(${where})`)) {
      for (const statement of statements) db.exec(statement);
      db.pragma(`user_version = ${next}`);
    }
  }).immediate();
}

/** A statement prepared once: SQLite's, and where each `?` takes its value from the `$n` list. */
interface Prepared {
  statement: BetterSqlite3.Statement;
  order: number[];
}

class SqliteRunner implements SqlRunner {
  readonly #prepared = new Map<string, Prepared>();
  /** The transactions, made once: better-sqlite3 wraps a function in BEGIN … COMMIT / ROLLBACK. */
  readonly #writing: BetterSqlite3.Transaction<(op: Op<unknown>) => unknown>;
  readonly #reading: BetterSqlite3.Transaction<(op: Op<unknown>) => unknown>;
  /** Set around a commit that must survive a power loss (`synchronous: 'before-tools'`). */
  readonly #sync: { full: BetterSqlite3.Statement; normal: BetterSqlite3.Statement } | undefined;
  #writes = 0;
  #bytes = 0;
  #statements = 0;

  constructor(private readonly db: BetterSqlite3.Database, syncWhenAsked: boolean) {
    this.#writing = db.transaction((op: Op<unknown>) => this.#drive(op, true));
    this.#reading = db.transaction((op: Op<unknown>) => this.#drive(op, false));
    if (syncWhenAsked) this.#sync = { full: db.prepare('PRAGMA synchronous = FULL'), normal: db.prepare('PRAGMA synchronous = NORMAL') };
  }

  get stats(): StoreStats {
    return { writes: this.#writes, bytes: this.#bytes, statements: this.#statements };
  }

  #run(query: Sql, counted: boolean): Row[] {
    let prepared = this.#prepared.get(query.text);
    if (prepared === undefined) {
      // The operations number their placeholders ($1, $2 … as PostgreSQL does); SQLite gets `?` each.
      const order: number[] = [];
      const text = query.text.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?'));
      prepared = { statement: this.db.prepare(text), order };
      this.#prepared.set(query.text, prepared);
    }
    const values = prepared.order.map((i) => query.params[i]);
    if (counted) this.#bytes += paramBytes(query.params);
    this.#statements++;
    if (prepared.statement.reader) return prepared.statement.all(...values) as Row[];
    prepared.statement.run(...values);
    return [];
  }

  #drive<T>(op: Op<T>, counted: boolean): T {
    let step = op.next();
    while (step.done !== true) step = op.next(this.#run(step.value, counted));
    return step.value;
  }

  async write<T>(op: () => Op<T>, options?: WriteOptions): Promise<T> {
    // BEGIN IMMEDIATE: the write lock is taken at once, so two processes never both read,
    // then both try to write (which SQLite answers with SQLITE_BUSY).
    const sync = options?.durable === true ? this.#sync : undefined;
    // FULL for this commit only: in WAL mode it fsyncs the log, and with it every earlier commit.
    sync?.full.run();
    try {
      const result = this.#writing.immediate(op()) as T;
      this.#writes++;
      this.#statements += 2; // BEGIN IMMEDIATE and COMMIT
      return result;
    } finally {
      sync?.normal.run();
    }
  }

  async read<T>(op: () => Op<T>): Promise<T> {
    const result = this.#reading.deferred(op()) as T;
    this.#statements += 2;
    return result;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
