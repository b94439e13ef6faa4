// The PostgreSQL run store: for many processes on many machines. pg is an optional peer
// dependency, loaded here only, when a store is made.
import { createRequire } from 'node:module';
import type pg from 'pg';
import { z } from 'zod';
import { optionsSchema } from '../core/vocabulary/options.js';
import { commonAliases, commonStoreOptions, DEFAULT_LEASE_MS, parseStoreOptions } from './store-options.js';
import type { EventLogStore, RetentionPolicy, StoreStats } from './run-store.js';
import type { Clock } from './clock.js';
import { paramBytes, type Dialect, type Op, type Row, type Sql } from './sql/query.js';
import { MIGRATIONS, pendingMigrations } from './sql/schema.js';
import { SqlStore, type EventNotices, type SqlRunner } from './sql/sql-store.js';
import { EVENTS_CHANNEL } from './sql/event-ops.js';

// The channel of the NOTIFY each append to an event log sends (payload: the run's id), for listeners of the database's own.
export { EVENTS_CHANNEL };

/**
 * Options of `postgresStore`: where the database is (a connection string, pool settings, or a
 * pool of yours), and the store's own settings.
 *
 * @example await postgresStore({ connectionString: process.env.DATABASE_URL, leaseMs: 20_000 })
 *
 * @inline
 */
export interface PostgresStoreOptions {
  /** e.g. `postgres://user:password@host:5432/db`. */
  connectionString?: string;
  /** Settings of the pool the store makes (`max` connections, ssl …), merged with `connectionString`. */
  poolConfig?: PostgresPoolConfig;
  /** A pool of yours, a `pg.Pool` (then `close()` leaves it open). */
  pool?: PostgresPool;
  /** How long a lease lasts unless renewed (default 30 s). Leases are timed by the database server's clock (unless `clock` is given). */
  leaseMs?: number;
  /** The default policy of `prune()`. */
  retention?: RetentionPolicy;
  /**
   * A clock for the store's times — leases, key-value expiries, retention — sent with each
   * statement, instead of the database's; its timers renew the leases of the runs it holds. For
   * tests that move time (default: the database's clock, and `systemClock` for the timers).
   */
  clock?: Clock;
}

// The driver's shapes the store's types name are declared here, as far as the store uses them, so
// that koagent's declarations compile without `@types/pg`; a `pg.Pool` and its settings fit them.

/**
 * Settings of a `pg.Pool`, handed to pg as they are (pg checks them); the common ones are typed.
 *
 * @example postgresStore({ poolConfig: { host: 'db', database: 'runs', max: 10, ssl: true } })
 *
 * @inline
 */
export interface PostgresPoolConfig {
  connectionString?: string | undefined;
  max?: number | undefined;
  idleTimeoutMillis?: number | null | undefined;
  connectionTimeoutMillis?: number | undefined;
  /** Any other setting of `pg.PoolConfig` (host, user, password, ssl, statement_timeout …). */
  [setting: string]: any;
}

/**
 * A connection pool, as the store uses it: a `pg.Pool` fits.
 *
 * @example import pg from 'pg'; await postgresStore({ pool: new pg.Pool({ max: 10 }) });
 */
export interface PostgresPool {
  /** A connection of the pool, for one transaction. */
  connect(): Promise<PostgresClient>;
  /** Close the pool (the store does so only for a pool it made). */
  end(): Promise<void>;
  /** Told when an idle connection fails (the store listens on a pool it made, so that does not crash the process). */
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * One connection taken from a `PostgresPool` (a `pg.PoolClient`), as the store uses it.
 *
 * @example const client = await pool.connect(); try { await client.query('SELECT 1'); } finally { client.release(); }
 *
 * @inline
 */
export interface PostgresClient {
  /** Run a statement: its text with `$1`, `$2` … and their values, or a named (prepared) statement. */
  query(query: string | { name: string; text: string; values: unknown[] }, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /** Give the connection back to the pool (`true`: close it instead). */
  release(destroy?: boolean): void;
  /** Told of NOTIFYs this connection LISTENs for, and of its failure (a `pg.PoolClient` has it): followers of event logs wait on it. */
  on?(event: 'notification' | 'error' | 'end', listener: (message?: any) => void): unknown;
}

const postgresStoreSchema = optionsSchema({
  connectionString: z.string({ error: "must be a string, e.g. 'postgres://user:password@host:5432/db'" }).min(1, { error: "must be a string, e.g. 'postgres://user:password@host:5432/db'" }).optional(),
  // pg checks its own settings.
  poolConfig: z.record(z.string(), z.unknown(), { error: 'must be an object of pg.Pool settings' }).optional(),
  pool: z.custom<PostgresPool>((value) => typeof (value as PostgresPool | null)?.connect === 'function' && typeof (value as { query?: unknown }).query === 'function', { error: 'must be a pg.Pool' }).optional(),
  ...commonStoreOptions,
}, { noun: 'an option of postgresStore', aliases: { ...commonAliases, url: 'connectionString', uri: 'connectionString', databaseUrl: 'connectionString', connection: 'connectionString', config: 'poolConfig', poolOptions: 'poolConfig', client: 'pool' } });

const POSTGRES: Dialect = {
  name: 'postgres',
  now: 'CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)',
  lockRow: ' FOR UPDATE',
  pickRow: ' FOR UPDATE SKIP LOCKED',
};

/** Any number fits: every koagent lock key starts with this (`koagent` in ASCII, as a bigint). */
const MIGRATION_LOCK = 0x6b6f6167656e74;

/**
 * A run store in PostgreSQL: for many workers on many machines. Leases are timed by the
 * server's clock, a claim locks the run's row and skips rows others are claiming (`FOR UPDATE
 * SKIP LOCKED`), and every checkpoint is one transaction. Connects and brings the schema up to
 * date before it resolves. Needs `pg` (8.x).
 *
 * @example import { postgresStore } from 'koagent/postgres';
 *          const store = await postgresStore({ connectionString: process.env.DATABASE_URL });
 */
export async function postgresStore(options: PostgresStoreOptions): Promise<EventLogStore> {
  parseStoreOptions(postgresStoreSchema, options, 'postgresStore(options)');
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (options.pool === undefined && options.connectionString === undefined && options.poolConfig === undefined) {
    throw new TypeError("postgresStore(options): say where the database is: { connectionString: 'postgres://…' }, { poolConfig }, or { pool }");
  }
  const own = options.pool === undefined;
  const pool = options.pool ?? new (loadDriver().Pool)({ ...options.poolConfig, ...(options.connectionString !== undefined ? { connectionString: options.connectionString } : {}) });
  // An idle connection the server dropped must not bring the process down.
  if (own) pool.on('error', () => undefined);
  const runner = new PostgresRunner(pool, own);
  try {
    await migrate(pool);
  } catch (error) {
    await runner.close();
    throw new Error(`postgresStore: cannot prepare the database: ${(error as Error).message}`, { cause: error });
  }
  return new SqlStore('postgres', leaseMs, POSTGRES, runner, options.retention, { notices: new PostgresNotices(pool), pollMs: 250 }, options.clock);
}

/**
 * The NOTIFYs of appends to event logs, heard on one connection of the pool that LISTENs: taken
 * when a follower first waits, held until the store closes (or the connection fails: the next
 * wait takes another).
 */
class PostgresNotices implements EventNotices {
  /** The listening connection, and how to let it go (once, whoever asks first: its failure, or close). */
  #connection: Promise<{ drop(): void }> | undefined;
  #wake: ((runId: string) => void) | undefined;
  #closed = false;

  constructor(private readonly pool: PostgresPool) {}

  async listen(wake: (runId: string) => void): Promise<void> {
    if (this.#closed) throw new Error('postgresStore: the store is closed');
    this.#wake = wake;
    await (this.#connection ??= this.#connect());
  }

  #connect(): Promise<{ drop(): void }> {
    const connecting = (async () => {
      const client = await this.pool.connect();
      if (typeof client.on !== 'function') {
        client.release();
        throw new Error("postgresStore: the pool's connections do not report NOTIFYs");
      }
      let dropped = false;
      const drop = () => {
        if (dropped) return;
        dropped = true;
        if (this.#connection === connecting) this.#connection = undefined;
        client.release(true);
      };
      client.on('notification', (message?: { channel?: string; payload?: string }) => {
        if (message?.channel === EVENTS_CHANNEL && typeof message.payload === 'string') this.#wake?.(message.payload);
      });
      client.on('error', drop);
      client.on('end', drop);
      try {
        await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      } catch (error) {
        drop();
        throw error;
      }
      return { drop };
    })();
    connecting.catch(() => {
      if (this.#connection === connecting) this.#connection = undefined;
    });
    return connecting;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const connection = await this.#connection?.catch(() => undefined);
    connection?.drop();
  }
}

function loadDriver(): typeof pg {
  try {
    return createRequire(import.meta.url)('pg') as typeof pg;
  } catch (error) {
    throw new Error('postgresStore needs the pg package (an optional peer dependency of koagent): npm install pg@8', { cause: error });
  }
}

/** Bring the schema to the latest version, under a lock so two processes starting at once do not both migrate. */
export async function migrate(pool: PostgresPool, migrations = MIGRATIONS.postgres): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS koagent_schema (version INTEGER NOT NULL)');
    const rows = (await client.query('SELECT version FROM koagent_schema')).rows as { version: number }[];
    const version = rows[0]?.version ?? 0;
    for (const { version: next, statements } of pendingMigrations(migrations, version, 'postgresStore')) {
      for (const statement of statements) await client.query(statement);
      await client.query(rows.length === 0 && next === 1 ? 'INSERT INTO koagent_schema (version) VALUES ($1)' : 'UPDATE koagent_schema SET version = $1', [next]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** PostgreSQL errors a transaction may meet by bad luck, not by a fault: it is run again. */
const TRANSIENT = new Set(['40001', '40P01']);

class PostgresRunner implements SqlRunner {
  /** Statement names, one per text, so each connection parses a statement once. */
  readonly #names = new Map<string, string>();
  #writes = 0;
  #bytes = 0;
  #statements = 0;

  constructor(private readonly pool: PostgresPool, private readonly own: boolean) {}

  get stats(): StoreStats {
    return { writes: this.#writes, bytes: this.#bytes, statements: this.#statements };
  }

  #name(text: string): string {
    let name = this.#names.get(text);
    if (name === undefined) this.#names.set(text, (name = `koagent_${this.#names.size}`));
    return name;
  }

  async #query(client: PostgresClient, { text, params }: Sql, counted: boolean): Promise<Row[]> {
    if (counted) this.#bytes += paramBytes(params);
    this.#statements++;
    return (await client.query({ name: this.#name(text), text, values: params })).rows as Row[];
  }

  async #drive<T>(client: PostgresClient, op: Op<T>, first: IteratorResult<Sql, T>, counted: boolean): Promise<T> {
    let step = first;
    while (step.done !== true) step = op.next(await this.#query(client, step.value, counted));
    return step.value;
  }

  async #transaction<T>(begin: string, make: () => Op<T>, counted: boolean): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let open = false;
      try {
        const op = make();
        const first = op.next();
        if (first.done !== true && first.value.alone === true) {
          // One statement that is a whole write: the server runs it as its own transaction, one round trip.
          const step = op.next(await this.#query(client, first.value, counted));
          if (step.done !== true) throw new Error('koagent: a statement marked alone was followed by another in its operation');
          return step.value;
        }
        this.#statements++;
        await client.query(begin);
        open = true;
        const result = await this.#drive(client, op, first, counted);
        this.#statements++;
        await client.query('COMMIT');
        return result;
      } catch (error) {
        if (open) await client.query('ROLLBACK').catch(() => undefined);
        if (attempt < 3 && TRANSIENT.has((error as { code?: string }).code ?? '')) continue;
        throw error;
      } finally {
        client.release();
      }
    }
  }

  async write<T>(op: () => Op<T>): Promise<T> {
    const result = await this.#transaction('BEGIN', op, true);
    this.#writes++;
    return result;
  }

  read<T>(op: () => Op<T>): Promise<T> {
    return this.#transaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', op, false);
  }

  async close(): Promise<void> {
    if (this.own) await this.pool.end();
  }
}
