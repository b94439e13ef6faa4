// The set-up of the worker spec tests: one embedded PostgreSQL per file, a fresh database per
// test, workers and clients with short timings (all closed after the test), the effects table
// the fixture's tools write to, and worker processes of their own that a test can kill.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createClient, createWorker, type Worker, type WorkerClient } from '../../src/worker.js';
import type { WorkerOptions } from '../../src/worker/options.js';
import type { QueuePool } from '../../src/worker/connection.js';
import { prepareEffects } from '../fixtures/worker-agents.js';
import { startPostgres, type TestPostgres } from './postgres-server.js';
import { until } from './waits.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/worker-spec-child.ts');

/** Timings short enough for a test: a lease of one second, polls and sweeps five times a second. */
export const FAST = { leaseMs: 1000, pollMs: 200, sweepMs: 200, maintenanceIntervalSeconds: 1, handleSignals: false, retryDelayMs: 50 } as const;

/** One test's database, and what it opened there. */
export interface TestDb {
  url: string;
  /** A pool of the test's own (the tools write their effects through it). */
  pool: QueuePool;
  /** A worker on the test's database (through `pool` when given, e.g. a `gatedPool`). */
  worker(options: Omit<WorkerOptions, 'connectionString'>): Promise<Worker>;
  /** A pool of the database that holds back the first statement matching `pattern` until `open()`. */
  gatedPool(pattern: RegExp): GatedPool;
  client(): Promise<WorkerClient>;
  /** A worker process (test/fixtures/worker-spec-child.ts), ready when this resolves. */
  child(options: ChildOptions): Promise<WorkerChild>;
  /** Every effect recorded so far: one row per tool call (its idempotency key). */
  effects(runId?: string): Promise<{ key: string; runId: string; tool: string; version: string | null; executions: number }[]>;
  /** Call `check` every 50 ms until it gives a value other than undefined/false (at most `ms`): `until` of waits.ts. */
  until<T>(check: () => Promise<T | undefined | false>, what: string, ms?: number): Promise<T>;
}

export interface ChildOptions {
  id: string;
  version?: string;
  steps?: number;
  toolMs?: number;
  shutdownMs?: number;
  handleSignals?: boolean;
}

/**
 * A pool whose first statement matching its pattern waits: `reached` resolves when it is sent
 * (not yet run), `open()` lets it go. A test drives an interleaving with it: what happens
 * between the moment a worker is about to run that statement and the moment it runs it.
 */
export interface GatedPool {
  pool: QueuePool;
  reached: Promise<void>;
  open(): void;
}

export interface WorkerChild {
  process: ChildProcess;
  /** Resolves with how it exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>;
}

/** Start the server for this file, and open and close each test's parts. */
export function useDatabase(): () => Promise<TestDb> {
  let server: TestPostgres | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  const children = new Set<ChildProcess>();
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
    // Workers and clients first, the pool their tools write through last.
    for (const close of closers.splice(0).reverse()) await withTimeout(close(), 10_000).catch(() => undefined);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
  }, 30_000);

  return async () => {
    const url = await server!.database();
    const pool = new pg.Pool({ connectionString: url, max: 6 }) as unknown as QueuePool & { end(): Promise<void> };
    // A connection the server drops as it stops must not fail the file.
    (pool as unknown as { on(event: string, f: () => void): void }).on('error', () => undefined);
    closers.push(() => pool.end());
    await prepareEffects(pool);
    const db: TestDb = {
      url,
      pool,
      async worker(options) {
        const worker = await createWorker({ ...FAST, ...options, ...(options.pool === undefined ? { connectionString: url } : {}) });
        closers.push(() => worker.stop({ deadlineMs: 2000 }).then(() => bury(worker)));
        return worker;
      },
      gatedPool(pattern) {
        const inner = new pg.Pool({ connectionString: url });
        inner.on('error', () => undefined);
        closers.push(() => inner.end());
        let reach!: () => void;
        let open!: () => void;
        const reached = new Promise<void>((resolve) => (reach = resolve));
        const opened = new Promise<void>((resolve) => (open = resolve));
        let armed = true;
        const pool = {
          connect: () => inner.connect(),
          end: async () => undefined,
          on: (event: 'error', listener: (error: Error) => void) => inner.on(event, listener),
          async query(text: string, values?: unknown[]) {
            if (armed && pattern.test(text)) {
              armed = false;
              reach();
              await opened;
            }
            return inner.query(text, values);
          },
        } as unknown as QueuePool;
        return { pool, reached, open };
      },
      async client() {
        const client = await createClient({ connectionString: url });
        closers.push(() => client.close());
        return client;
      },
      async child(options) {
        const child = spawn(process.execPath, ['--import', 'tsx', CHILD, url, JSON.stringify(options)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        children.add(child);
        let output = '';
        const ready = new Promise<void>((resolve, reject) => {
          child.stdout!.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            if (output.includes('ready\n')) resolve();
          });
          child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.once('exit', () => reject(new Error(`the worker process exited before it was ready:\n${output}`)));
        });
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) => child.once('exit', (code, signal) => {
          children.delete(child);
          resolve({ code, signal, output });
        }));
        await ready;
        return { process: child, exited };
      },
      async effects(runId) {
        const { rows } = await pool.query(
          'SELECT key, run_id AS "runId", tool, version, executions FROM test_effects WHERE $1::text IS NULL OR run_id = $1 ORDER BY key',
          [runId ?? null],
        );
        return rows;
      },
      until: (check, what, ms = 15_000) => until(check, what, { timeoutMs: ms, everyMs: 50 }),
    };
    return db;
  };
}

/** Close what a worker that stopped with runs unfinished left open (its pool and pg-boss). */
export async function bury(worker: Worker): Promise<void> {
  const inside = worker as unknown as { boss: { stop(o: object): Promise<void> }; db: { close(): Promise<void> } };
  await withTimeout(inside.boss.stop({ graceful: false, close: false }), 3000).catch(() => undefined);
  await withTimeout(inside.db.close(), 3000).catch(() => undefined);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() => clearTimeout(timer));
}
