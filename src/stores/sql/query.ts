// The SQL stores' operations are written once, for SQLite and PostgreSQL alike, as generators:
// each yields the statements it needs and receives their rows. A driver runs an operation in
// one transaction — SQLite synchronously (better-sqlite3 inside BEGIN IMMEDIATE), PostgreSQL
// one awaited query at a time on one pooled connection — so the logic of leases, fencing and
// shared session transcripts exists in one place.

import type { Clock } from '../clock.js';

/** One statement: its text with `$1`, `$2` … placeholders, and their values. */
export interface Sql {
  text: string;
  params: unknown[];
  /**
   * The statement is a whole write by itself, the only one of its operation: a driver may run
   * it without BEGIN and COMMIT (PostgreSQL runs one statement as a transaction of its own).
   */
  alone?: boolean;
}

/** A result row, by column name. */
export type Row = Record<string, unknown>;

/** An operation: yields statements, receives each one's rows, returns its result. */
export type Op<T> = Generator<Sql, T, Row[]>;

/** What differs between the two databases, as SQL fragments. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** An expression for "now" in milliseconds since the epoch, by the database's clock. */
  readonly now: string;
  /** After the SELECT of a row the transaction will change: lock it (PostgreSQL; SQLite's write transaction holds the whole file). */
  readonly lockRow: string;
  /** After the SELECT that picks a run to claim: lock it, and skip rows another claim holds. */
  readonly pickRow: string;
}

/** Stands, in a statement's text, for "now" by a store's clock: `withClock` makes it a parameter. */
const CLOCK_NOW = '$now';

/**
 * `dialect` for a store given a clock: "now" is the clock's time, sent with each statement as a
 * parameter, rather than the database's (the default, so processes on many machines agree).
 */
export function clockDialect(dialect: Dialect): Dialect {
  return { ...dialect, now: `CAST(${CLOCK_NOW} AS BIGINT)` };
}

/** `op` with "now" in each of its statements (see `clockDialect`) bound to `clock`'s time as the statement is sent. */
export function* withClock<T>(op: Op<T>, clock: Clock): Op<T> {
  let step = op.next();
  while (step.done !== true) step = op.next(yield bindNow(step.value, clock));
  return step.value;
}

function bindNow(query: Sql, clock: Clock): Sql {
  if (!query.text.includes(CLOCK_NOW)) return query;
  const n = query.params.length + 1;
  return { ...query, text: query.text.replaceAll(CLOCK_NOW, `$${n}`), params: [...query.params, clock.now()] };
}

export function sql(text: string, ...params: unknown[]): Sql {
  return { text, params };
}

/** A column that holds a number (PostgreSQL gives BIGINT columns as strings). */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A column that may be NULL, as text or null. */
export function text(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** `$from, $from+1, …` placeholders for a list of values that starts at parameter `from`. */
export function placeholders(count: number, from: number): string {
  return Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');
}

/** Bytes a statement sends: its text values and 8 per number, arrays by their items (what `StoreStats.bytes` counts). */
export function paramBytes(params: readonly unknown[]): number {
  let bytes = 0;
  for (const value of params) {
    if (typeof value === 'string') bytes += Buffer.byteLength(value);
    else if (Array.isArray(value)) bytes += paramBytes(value);
    else if (value !== null && value !== undefined) bytes += 8;
  }
  return bytes;
}
