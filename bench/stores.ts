// The bench's durable-runs part: what a step costs with each run store, against the floor of its
// database measured in the same run on the same database — a transaction writing the same bytes,
// committed as many times as a step commits (two: the call `running` before its tool, `done`
// with its result after) — and what a step writes to disk against the data it stores.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { memoryStore } from '../src/index.js';
import { postgresStore } from '../src/postgres.js';
import { sqliteStore } from '../src/sqlite.js';
import type { RunStore } from '../src/store.js';
import { startPostgres } from '../test/support/postgres-server.js';

/** What the main bench lends this part: a run of the bench's agent, and its interleaved timing. */
export interface StoreBenchKit {
  steps: number;
  rounds: number;
  /** One run of `steps` steps of the bench's agent (0 layers), with `store` if given. */
  run: (steps: number, store?: RunStore) => Promise<void>;
  /** Best µs/step of each timed function, in interleaved rounds. */
  time: (fns: Record<string, (steps: number) => Promise<void>>, steps: number, rounds: number) => Promise<Record<string, number>>;
}

/** What a store's run of S steps wrote and sent, per step. */
interface StepWrites {
  data: number;
  commits: number;
  statements: number;
  disk: number | undefined;
}

/** Bytes the process has written through write(2) so far (Linux; undefined elsewhere). */
function processWrites(): number | undefined {
  if (!existsSync('/proc/self/io')) return undefined;
  const match = /wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'));
  return match === null ? undefined : Number(match[1]);
}

/** One run of `steps` steps on `store`, with its writes per step; `disk` reads the bytes written to disk so far. */
async function writesOf(kit: StoreBenchKit, store: RunStore, steps: number, disk: () => Promise<number | undefined>): Promise<StepWrites> {
  const before = { ...store.stats, disk: await disk() };
  await kit.run(steps, store);
  const after = { ...store.stats, disk: await disk() };
  return {
    data: (after.bytes - before.bytes) / steps,
    commits: (after.writes - before.writes) / steps,
    statements: ((after.statements ?? 0) - (before.statements ?? 0)) / steps,
    disk: after.disk === undefined || before.disk === undefined ? undefined : (after.disk - before.disk) / steps,
  };
}

/** A row of `bytes` characters, what a floor commit writes: half a step's data. */
const rowOf = (bytes: number) => 'x'.repeat(Math.max(1, Math.round(bytes)));

type Row = [what: string, value: number, target: string | undefined, ok: boolean];

function printRows(rows: Row[]): void {
  for (const [what, value, target, ok] of rows) {
    console.log(`${what.padEnd(76)} ${value.toFixed(2).padStart(6)}  ${target === undefined ? 'for reference' : `target ${target.padEnd(6)} ${ok ? 'met' : 'NOT MET'}`}`);
  }
}

function printWrites(name: string, w: StepWrites, floorDisk: number | undefined): void {
  const disk = w.disk === undefined ? 'n/a' : `${w.disk.toFixed(0)} B`;
  const floor = floorDisk === undefined ? 'n/a' : `${floorDisk.toFixed(0)} B`;
  console.log(`${name.padEnd(16)} per step: ${w.commits.toFixed(2)} commits, ${w.statements.toFixed(2)} statements, ${w.data.toFixed(0)} B of data, ${disk} to disk (floor: ${floor})`);
}

/** The time and write rows of one SQL store against its floor. */
function storeRows(name: string, store: number, none: number, floor: number, w: StepWrites, floorDisk: number | undefined): Row[] {
  const durable = (store - none) / floor;
  const rows: Row[] = [[`${name}: (µs/step − no store) / floor`, durable, '≤ 1.5', durable <= 1.5]];
  rows.push([`${name}: µs/step / floor`, store / floor, undefined, true]);
  if (w.disk !== undefined) rows.push([`${name}: bytes to disk / data stored, per step`, w.disk / w.data, '≤ 4', w.disk / w.data <= 4]);
  if (w.disk !== undefined && floorDisk !== undefined) {
    rows.push([`${name}: bytes to disk / the floor's`, w.disk / floorDisk, undefined, true]);
    rows.push([`${name} floor: bytes to disk / data stored, per step`, floorDisk / w.data, undefined, true]);
  }
  return rows;
}

/**
 * SQLite: the store and its floor, on one file, each through its own connection — at the
 * store's default (`'before-tools'`: the commit marking a call `running` is fsynced) against a
 * floor that fsyncs the same commits, and at `'normal'` (no fsync: the write path alone)
 * against a floor that fsyncs none.
 */
async function benchSqlite(kit: StoreBenchKit, dir: string, none: (steps: number) => Promise<void>): Promise<{ rows: Row[]; lines: () => void }> {
  const rows: Row[] = [];
  const lines: (() => void)[] = [];
  for (const synchronous of ['before-tools', 'normal'] as const) {
    const name = synchronous === 'normal' ? "sqliteStore({ synchronous: 'normal' })" : 'sqliteStore()';
    const path = join(dir, `bench-${synchronous}.db`);
    const store = sqliteStore({ path, synchronous });
    await kit.run(kit.steps, store);
    const writes = await writesOf(kit, store, kit.steps, async () => processWrites());
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE IF NOT EXISTS koagent_bench_floor (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO koagent_bench_floor (body) VALUES (?)');
    const commit = db.transaction((body: string) => insert.run(body));
    const full = db.prepare('PRAGMA synchronous = FULL');
    const normal = db.prepare('PRAGMA synchronous = NORMAL');
    const body = rowOf(writes.data / writes.commits);
    // As the store does by default: the first commit of a step (the `running` mark) fsynced.
    const perStep = Math.max(1, Math.round(writes.commits));
    const floor = async (steps: number) => {
      for (let i = 0; i < steps * perStep; i++) {
        if (synchronous === 'before-tools' && i % perStep === 0) {
          full.run();
          commit.immediate(body);
          normal.run();
        } else commit.immediate(body);
      }
    };
    const before = processWrites();
    await floor(kit.steps);
    const after = processWrites();
    const floorDisk = before === undefined || after === undefined ? undefined : (after - before) / kit.steps;
    const t = await kit.time({ none, store: (s) => kit.run(s, store), floor }, kit.steps, Math.max(5, Math.round(kit.rounds / 20)));
    db.close();
    await store.close();
    rows.push(...storeRows(name, t.store, t.none, t.floor, writes, floorDisk));
    lines.push(() => {
      console.log(`${name.padEnd(48)} ${t.store.toFixed(2).padStart(8)} µs/step   floor ${t.floor.toFixed(2)} µs/step, no store ${t.none.toFixed(2)}`);
      printWrites(name, writes, floorDisk);
    });
  }
  return { rows, lines: () => lines.forEach((line) => line()) };
}

/** PostgreSQL: the store and its floor (one autocommitted INSERT per commit), on one embedded server. */
async function benchPostgres(kit: StoreBenchKit, none: (steps: number) => Promise<void>): Promise<{ rows: Row[]; lines: () => void }> {
  const server = await startPostgres();
  const url = await server.database();
  const client = new pg.Client({ connectionString: url });
  let store: RunStore | undefined;
  try {
    await client.connect();
    store = await postgresStore({ connectionString: url });
    const wal = async () => Number((await client.query("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') AS bytes")).rows[0].bytes);
    const steps = kit.steps;
    await kit.run(steps, store);
    const writes = await writesOf(kit, store, steps, wal);
    await client.query('CREATE TABLE koagent_bench_floor (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)');
    const body = rowOf(writes.data / writes.commits);
    const floor = async (n: number) => {
      for (let i = 0; i < n * writes.commits; i++) await client.query({ name: 'floor', text: 'INSERT INTO koagent_bench_floor (body) VALUES ($1)', values: [body] });
    };
    const before = await wal();
    await floor(steps);
    const floorDisk = ((await wal()) - before) / steps;
    const onStore = store;
    const t = await kit.time({ none, store: (s) => kit.run(s, onStore), floor }, steps, Math.max(3, Math.round(kit.rounds / 100)));
    return {
      rows: storeRows('postgresStore()', t.store, t.none, t.floor, writes, floorDisk),
      lines: () => {
        console.log(`${'postgresStore() (embedded, fsync on)'.padEnd(48)} ${t.store.toFixed(2).padStart(8)} µs/step   floor ${t.floor.toFixed(2)} µs/step, no store ${t.none.toFixed(2)}`);
        printWrites('postgresStore()', writes, floorDisk);
        console.log(`${''.padEnd(16)} (PostgreSQL: bytes to disk are the WAL the server wrote; table pages reach the disk at its checkpoints)`);
      },
    };
  } finally {
    await store?.close();
    await client.end().catch(() => undefined);
    await server.stop();
  }
}

/**
 * Durable runs: µs/step with each store and without, each SQL store against its floor, and
 * what a step commits, sends and writes. PostgreSQL is skipped, saying why, when its embedded
 * server cannot start (or BENCH_POSTGRES=0).
 */
export async function benchStores(kit: StoreBenchKit): Promise<void> {
  const none = (s: number) => kit.run(s);
  const memory = memoryStore();
  const t = await kit.time({ none, memory: (s) => kit.run(s, memory) }, kit.steps, Math.max(5, Math.round(kit.rounds / 20)));
  const dir = mkdtempSync(join(tmpdir(), 'koagent-bench-'));
  try {
    const sqlite = await benchSqlite(kit, dir, none);
    let postgres: { rows: Row[]; lines: () => void } | string;
    try {
      postgres = process.env.BENCH_POSTGRES === '0' ? 'BENCH_POSTGRES=0' : await benchPostgres(kit, none);
    } catch (error) {
      postgres = (error as Error).message ?? String(error);
    }
    console.log(`\ndurable runs: S = ${kit.steps}, best of interleaved rounds; a step is one model reply with one tool call`);
    console.log(`${'koagent, 0 layers, no store'.padEnd(48)} ${t.none.toFixed(2).padStart(8)} µs/step`);
    console.log(`${'memoryStore()'.padEnd(48)} ${t.memory.toFixed(2).padStart(8)} µs/step   (${(t.memory / t.none).toFixed(1)}× no store)`);
    sqlite.lines();
    if (typeof postgres === 'string') console.log(`postgresStore(): skipped, the embedded PostgreSQL server did not start: ${postgres}`);
    else postgres.lines();
    console.log('floor: a transaction inserting one row of the same bytes, committed as many times a step as the store commits');
    console.log('');
    printRows([...sqlite.rows, ...(typeof postgres === 'string' ? [] : postgres.rows)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
