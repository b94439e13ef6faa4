// The key-value store of the SQL stores (`store.keyValues`): one table, koagent_kv, whose rows
// every process that opens the database shares. Each operation is one statement, so a counter's
// add is atomic across processes (SQLite: inside BEGIN IMMEDIATE; PostgreSQL: an upsert, which
// the server runs as a transaction of its own). Times are the database's clock; an expired row
// is ignored by every read and deleted a bounded batch at a time as writes go by.
import { checkKey, checkTtl, toJson, type KeyValueStore } from '../key-values.js';
import { sql, type Dialect, type Op, type Sql } from './query.js';

/** Every this many writes of one store, one batch of expired rows is deleted. */
export const KV_PRUNE_EVERY = 100;
/** How many expired rows one prune deletes at most (bounded work, however many expired). */
export const KV_PRUNE_BATCH = 100;

/** A row counts while it has no expiry or its expiry is still ahead, by the database's clock. */
const live = (d: Dialect) => `(koagent_kv.expires_at IS NULL OR koagent_kv.expires_at > ${d.now})`;
const expired = (d: Dialect) => `(koagent_kv.expires_at IS NOT NULL AND koagent_kv.expires_at <= ${d.now})`;

/** The expiry a new row gets: none, or the database's now plus `ttl` (parameter `$n`). */
const expiry = (d: Dialect, ttl: number | undefined, n: number) => (ttl === undefined ? 'NULL' : `${d.now} + $${n}`);

/** A whole number of milliseconds (PostgreSQL's BIGINT takes no fraction): at least 1. */
const wholeTtl = (ttlMs: number | undefined) => (ttlMs === undefined ? undefined : Math.max(1, Math.ceil(checkTtl(ttlMs))));

/** One statement alone (a whole operation by itself), its rows the result. */
function* alone(query: Sql): Op<Record<string, unknown>[]> {
  return yield { ...query, alone: true };
}

/** What a stored value reads as: JSON text, or (a SQLite counter, kept untyped) a number. */
function parsed(value: unknown): unknown {
  return typeof value === 'number' ? value : JSON.parse(String(value));
}

/**
 * The number a counter's stored value holds, plus `delta` — or `delta` alone when it holds no
 * number. SQLite keeps the sum as a number (the column has no type, so nothing converts it to
 * text); PostgreSQL's column is text, summed as `numeric` and written back as its text.
 */
function sum(d: Dialect): string {
  return d.name === 'sqlite'
    ? "CASE WHEN json_valid(koagent_kv.value) AND json_type(koagent_kv.value) IN ('integer', 'real') THEN koagent_kv.value + $3 ELSE $3 END"
    : "CASE WHEN jsonb_typeof(koagent_kv.value::jsonb) = 'number' THEN ((koagent_kv.value::jsonb)::numeric + $3::numeric)::text ELSE $2 END";
}

/** What the key-value store needs of a store's runner (`SqlRunner`): a transaction of each kind. */
interface Runner {
  write<T>(op: () => Op<T>): Promise<T>;
  read<T>(op: () => Op<T>): Promise<T>;
}

/** The key-value store over one SQL store's runner and dialect. */
export class SqlKeyValues implements KeyValueStore {
  #writes = 0;

  constructor(private readonly runner: Runner, private readonly d: Dialect) {}

  async get(key: string): Promise<unknown> {
    checkKey(key);
    const rows = await this.runner.read(() => alone(sql(`SELECT value FROM koagent_kv WHERE key = $1 AND ${live(this.d)}`, key)));
    return rows.length === 0 ? undefined : parsed(rows[0].value);
  }

  async set(key: string, value: unknown, options?: { ttlMs?: number }): Promise<void> {
    checkKey(key);
    const json = toJson(value);
    const ttl = wholeTtl(options?.ttlMs);
    const params: unknown[] = ttl === undefined ? [key, json] : [key, json, ttl];
    await this.runner.write(() => alone(sql(
      `INSERT INTO koagent_kv (key, value, expires_at) VALUES ($1, $2, ${expiry(this.d, ttl, 3)})
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      ...params,
    )));
    await this.#wrote();
  }

  async add(key: string, delta: number, options?: { ttlMs?: number }): Promise<number> {
    if (typeof delta !== 'number' || !Number.isFinite(delta)) throw new TypeError(`keyValues.add(key, delta): delta must be a finite number, not ${String(delta)}`);
    checkKey(key);
    const ttl = wholeTtl(options?.ttlMs);
    const d = this.d;
    // One upsert: a new counter starts at delta; a live one adds delta and keeps its expiry (a
    // fixed window); an expired one starts again at delta with a new expiry. Every SET
    // expression reads the row as it was, so the two CASEs agree on "expired".
    const params: unknown[] = [key, JSON.stringify(delta), delta];
    if (ttl !== undefined) params.push(ttl);
    const rows = await this.runner.write(() => alone(sql(
      `INSERT INTO koagent_kv (key, value, expires_at) VALUES ($1, ${d.name === 'sqlite' ? '$3' : '$2'}, ${expiry(d, ttl, 4)})
       ON CONFLICT (key) DO UPDATE SET
         value = CASE WHEN ${expired(d)} THEN excluded.value ELSE ${sum(d)} END,
         expires_at = CASE WHEN ${expired(d)} THEN excluded.expires_at ELSE koagent_kv.expires_at END
       RETURNING value`,
      ...params,
    )));
    await this.#wrote();
    return Number(parsed(rows[0].value));
  }

  async delete(key: string): Promise<boolean> {
    checkKey(key);
    const rows = await this.runner.write(() => alone(sql(`DELETE FROM koagent_kv WHERE key = $1 RETURNING ${live(this.d)} AS live`, key)));
    // SQLite answers a boolean as 1 or 0, PostgreSQL as true or false.
    return rows.length > 0 && (rows[0].live === true || rows[0].live === 1);
  }

  /** Every `KV_PRUNE_EVERY` writes, delete one batch of expired rows (by the expiry index); a failure only waits for the next. */
  async #wrote(): Promise<void> {
    if (++this.#writes % KV_PRUNE_EVERY !== 0) return;
    await this.prune().catch(() => undefined);
  }

  /** Delete up to `KV_PRUNE_BATCH` expired rows; how many. */
  async prune(): Promise<number> {
    const rows = await this.runner.write(() => alone(sql(
      `DELETE FROM koagent_kv WHERE key IN (SELECT key FROM koagent_kv WHERE ${expired(this.d)} LIMIT ${KV_PRUNE_BATCH}) RETURNING key`,
    )));
    return rows.length;
  }
}
