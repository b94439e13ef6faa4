// What layers keep across runs (a response cache, a rate limiter's window, a session's counts):
// a small key-value contract that the run stores also implement, so one PostgreSQL database
// shares it between processes. Within one run, hook state is the place instead.

/**
 * Keys to plain JSON values, with an optional time to live, and counters that add atomically.
 * `memoryKeyValues()` keeps them in the process; the SQLite and PostgreSQL run stores keep them
 * in their database (`store.keyValues`), shared by every process that opens it.
 *
 * @example const hits = await keyValues.add('cache-hits', 1); await keyValues.set('reply:abc', reply, { ttlMs: 60_000 });
 */
export interface KeyValueStore {
  /** The value under `key`, or undefined when there is none or it expired. */
  get(key: string): Promise<unknown>;
  /** Keep `value` (plain JSON) under `key`, for `ttlMs` when given. */
  set(key: string, value: unknown, options?: { ttlMs?: number }): Promise<void>;
  /**
   * Add `delta` to the number under `key` (0 when there is none or it expired) in one atomic
   * step, and return the new total. `ttlMs` applies when the counter is created.
   */
  add(key: string, delta: number, options?: { ttlMs?: number }): Promise<number>;
  /** Remove `key`; true when it was there. */
  delete(key: string): Promise<boolean>;
}

/**
 * Something that holds a key-value store: a run store (`store.keyValues`) or the store itself.
 *
 * @example responseCacheMiddleware({ store: sqliteStore('runs.db') })
 *
 * @inline
 */
export type KeyValueSource = KeyValueStore | { readonly keyValues?: KeyValueStore };

/**
 * The key-value store of `source`: its own when it is one, a run store's `keyValues`, or — when
 * there is no source — a new one in this process's memory.
 *
 * @example const values = keyValuesOf(options.store);
 */
export function keyValuesOf(source: KeyValueSource | undefined): KeyValueStore {
  if (source === undefined) return memoryKeyValues();
  if (isKeyValueStore(source)) return source;
  const held = (source as { keyValues?: unknown }).keyValues;
  if (isKeyValueStore(held)) return held;
  throw new TypeError('store must be a key-value store (get, set, add, delete) or a run store that has one (store.keyValues): the memory, SQLite and PostgreSQL run stores do');
}

function isKeyValueStore(value: unknown): value is KeyValueStore {
  const v = value as KeyValueStore | undefined;
  return typeof v === 'object' && v !== null && typeof v.get === 'function' && typeof v.set === 'function' && typeof v.add === 'function' && typeof v.delete === 'function';
}

/**
 * A key-value store in this process's memory: values are copied in and out (as JSON), so no
 * caller shares an object with another; expired keys go when they are next read.
 *
 * @example const shared = memoryKeyValues(); agent.use(rateLimitMiddleware({ store: shared, … }));
 */
export function memoryKeyValues(options: { now?: () => number } = {}): KeyValueStore {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { json: string; expiresAt: number }>();
  const live = (key: string) => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  const expiry = (ttlMs: number | undefined) => (ttlMs === undefined ? Infinity : now() + checkTtl(ttlMs));
  return {
    async get(key) {
      const entry = live(checkKey(key));
      return entry === undefined ? undefined : JSON.parse(entry.json);
    },
    async set(key, value, options) {
      entries.set(checkKey(key), { json: toJson(value), expiresAt: expiry(options?.ttlMs) });
    },
    async add(key, delta, options) {
      if (typeof delta !== 'number' || !Number.isFinite(delta)) throw new TypeError(`keyValues.add(key, delta): delta must be a finite number, not ${String(delta)}`);
      const entry = live(checkKey(key));
      const current = entry === undefined ? 0 : Number(JSON.parse(entry.json)) || 0;
      const total = current + delta;
      entries.set(key, { json: JSON.stringify(total), expiresAt: entry?.expiresAt ?? expiry(options?.ttlMs) });
      return total;
    },
    async delete(key) {
      return live(checkKey(key)) !== undefined && entries.delete(key);
    },
  };
}

/** A key as every key-value store takes it: a non-empty string (else a `TypeError`). */
export function checkKey(key: string): string {
  if (typeof key !== 'string' || key === '') throw new TypeError(`a key-value key must be a non-empty string, not ${JSON.stringify(key)}`);
  return key;
}

/** A time to live as every key-value store takes it: positive and finite (else a `TypeError`). */
export function checkTtl(ttlMs: number): number {
  if (typeof ttlMs !== 'number' || !(ttlMs > 0) || !Number.isFinite(ttlMs)) throw new TypeError(`ttlMs must be a positive, finite number of milliseconds, not ${String(ttlMs)}`);
  return ttlMs;
}

/** A value as every key-value store keeps it: its JSON text (else a `TypeError`). */
export function toJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError('a key-value value must be plain JSON (not undefined, a function or a symbol)');
  return json;
}
