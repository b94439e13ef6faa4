// The worker's and the client's way to PostgreSQL: one pool for statements and transactions,
// one connection of its own for LISTEN, and pg-boss over the same pool. pg and pg-boss are
// optional peer dependencies of koagent, loaded here only, when a client or worker is made.
import { createRequire } from 'node:module';
import type PgBoss from 'pg-boss';
import type { PostgresPool } from '../stores/postgres.js';
import type { Clock } from '../stores/clock.js';

/**
 * "Now" in the statements on the worker's tables, in milliseconds since the epoch: `QueueDb`
 * makes it the database server's clock (`SERVER_NOW`, as the PostgreSQL store times leases), or
 * the worker's `clock`, sent as a parameter.
 */
export const NOW = '$now';

/** Milliseconds since the epoch by the database server's clock. */
const SERVER_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * A pool the queue can use: a `pg.Pool` (the store's `PostgresPool`, with `query`).
 *
 * @example await createClient({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 }) })
 *
 * @inline
 */
export interface QueuePool extends PostgresPool {
  /** Run one statement on a connection of the pool. */
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** Something statements can be run on: the pool, or one transaction's connection. */
export interface Executor {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

const load = createRequire(import.meta.url);

function loadPeer<T>(name: string, install: string, who: string): T {
  try {
    return load(name) as T;
  } catch (error) {
    throw new Error(`${who} needs the ${name} package (an optional peer dependency of koagent): npm install ${install}`, { cause: error });
  }
}

/** The statements, transactions and notifications of one client or worker. */
export class QueueDb {
  readonly #listeners = new Map<string, Set<(payload: string) => void>>();
  #listening: Promise<{ query: Executor['query']; release(error?: boolean): void }> | undefined;
  #closed = false;

  /** `clock`: "now" in the statements (`NOW`) is its time, else the database server's. */
  constructor(readonly pool: QueuePool, readonly own: boolean, readonly who: string, readonly clock?: Clock) {}

  /** A pool from `connectionString` (the queue's own), or the caller's. */
  static open(options: { connectionString?: string; pool?: QueuePool; max?: number; clock?: Clock }, who: string): QueueDb {
    if (options.pool !== undefined) return new QueueDb(options.pool, false, who, options.clock);
    const pg = loadPeer<{ Pool: new (config: { connectionString?: string; max?: number }) => QueuePool }>('pg', 'pg@8', who);
    const pool = new pg.Pool({ connectionString: options.connectionString, max: options.max ?? 10 });
    // An idle connection the server dropped must not bring the process down.
    pool.on('error', () => undefined);
    return new QueueDb(pool, true, who, options.clock);
  }

  /** A statement as it is sent: `NOW` made the server's clock, or the clock's time as one more parameter. */
  #bound(text: string, values: unknown[] | undefined): [string, unknown[] | undefined] {
    if (!text.includes(NOW)) return [text, values];
    if (this.clock === undefined) return [text.replaceAll(NOW, SERVER_NOW), values];
    const params = [...(values ?? []), this.clock.now()];
    return [text.replaceAll(NOW, `CAST($${params.length} AS BIGINT)`), params];
  }

  query(text: string, values?: unknown[]): Promise<{ rows: any[] }> {
    return this.pool.query(...this.#bound(text, values));
  }

  /** Run `work` in one transaction (`BEGIN` … `COMMIT`, or `ROLLBACK` when it throws). */
  async tx<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx: Executor = { query: (text, values) => (client as unknown as Executor).query(...this.#bound(text, values)) };
    try {
      await client.query('BEGIN');
      const result = await work(tx);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * Run `work` while this process holds the session-level advisory lock `key` (on a connection
   * of its own, so `work` may use the pool and open its own transactions): processes that run
   * work under the same key take turns. The lock goes with its connection if it cannot be let go.
   */
  async whileLocked<T>(key: number, work: () => Promise<T>): Promise<T> {
    const client = (await this.pool.connect()) as unknown as { query: Executor['query']; release(error?: boolean): void };
    try {
      await client.query('SELECT pg_advisory_lock($1)', [key]);
    } catch (error) {
      client.release(true);
      throw error;
    }
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]).then(() => client.release(), () => client.release(true));
    }
  }

  /** Be told of each `NOTIFY channel, payload` until the returned function is called. */
  async listen(channel: string, listener: (payload: string) => void): Promise<() => void> {
    let set = this.#listeners.get(channel);
    const fresh = set === undefined;
    if (set === undefined) this.#listeners.set(channel, (set = new Set()));
    set.add(listener);
    const connection = await this.#connection();
    if (fresh) await connection.query(`LISTEN ${channel}`);
    return () => set!.delete(listener);
  }

  /** The connection LISTEN runs on: one, kept for the life of this object. */
  #connection(): Promise<{ query: Executor['query']; release(error?: boolean): void }> {
    this.#listening ??= this.pool.connect().then((client) => {
      const raw = client as unknown as { on(event: string, f: (...args: any[]) => void): void; query: Executor['query']; release(error?: boolean): void };
      raw.on('notification', (message: { channel: string; payload?: string }) => {
        for (const listener of this.#listeners.get(message.channel) ?? []) listener(message.payload ?? '');
      });
      // Released once: after close() gave it back, its errors (the server going away) are the pool's.
      let released = false;
      const release = (error?: boolean) => {
        if (!released) raw.release(error);
        released = true;
      };
      // A dropped LISTEN connection: the waits fall back to their polls until a new one is made.
      raw.on('error', () => {
        if (released) return;
        this.#listening = undefined;
        release(true);
        if (!this.#closed) void this.#relisten();
      });
      return { query: (text: string, values?: unknown[]) => raw.query(text, values), release };
    });
    return this.#listening;
  }

  async #relisten(): Promise<void> {
    try {
      const connection = await this.#connection();
      for (const channel of this.#listeners.keys()) await connection.query(`LISTEN ${channel}`);
    } catch {
      this.#listening = undefined;
    }
  }

  /** pg-boss over this pool: `supervise` runs its maintenance (expiring jobs of dead workers), `schedule` its cron. */
  async boss(options: { supervise: boolean; schedule: boolean; maintenanceIntervalSeconds?: number }): Promise<PgBoss> {
    const Boss = loadPeer<typeof PgBoss>('pg-boss', 'pg-boss@10', this.who);
    const boss = new Boss({
      db: { executeSql: (text: string, values: unknown[]) => this.pool.query(text, values) },
      supervise: options.supervise,
      schedule: options.schedule,
      migrate: true,
      ...(options.maintenanceIntervalSeconds !== undefined ? { maintenanceIntervalSeconds: options.maintenanceIntervalSeconds } : {}),
    });
    boss.on('error', () => undefined);
    await boss.start();
    return boss;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const listening = this.#listening;
    this.#listening = undefined;
    if (listening !== undefined) await listening.then((c) => c.release(), () => undefined);
    if (this.own) await this.pool.end();
  }
}

/** pg-boss's executor for one transaction: a job sent through it is sent when, and only if, the transaction commits. */
export function bossDb(tx: Executor): { executeSql(text: string, values: unknown[]): Promise<{ rows: any[] }> } {
  return { executeSql: (text, values) => tx.query(text, values) };
}
