// What a durable step costs each SQL store, by counting: commits, statements (PostgreSQL: round
// trips) and, in SQLite, pages written. A step of one tool call commits twice, as the design
// needs: the call `running` before its tool runs (write-ahead), `done` with its result right
// after (so an effect that happened is never forgotten). Counts, not times.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import { postgresStore } from '../../src/postgres.js';
import { sqliteStore } from '../../src/sqlite.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';

/** A model that calls the tool `steps` times, one call a reply, then answers. */
const scripted = (steps: number) => mockModel([...Array.from({ length: steps }, (_, i) => ({ toolCalls: [{ name: 'add', args: { a: i, b: 1 } }] })), 'done']);

const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

async function run(store: RunStore, steps: number): Promise<void> {
  const result = await createAgent({ model: scripted(steps), maxSteps: steps + 1, tools: [add], store }).run('go');
  expect(result.usage.toolCalls).toBe(steps);
}

/** Commits and statements per step: the difference between a long run and a short one, so the run's start and end cancel out. */
async function perStep(store: RunStore): Promise<{ commits: number; statements: number }> {
  const counts = async (steps: number) => {
    const before = store.stats;
    await run(store, steps);
    return { commits: store.stats.writes - before.writes, statements: (store.stats.statements ?? 0) - (before.statements ?? 0) };
  };
  const short = await counts(5);
  const long = await counts(25);
  return { commits: (long.commits - short.commits) / 20, statements: (long.statements - short.statements) / 20 };
}

describe('what a durable step costs in SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-step-cost-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('commits twice a step, each commit five statements: BEGIN, the fenced UPDATE of the run, the message, the ledger entry, COMMIT', async () => {
    const store = sqliteStore({ path: join(dir, 'counts.db') });
    expect(await perStep(store)).toEqual({ commits: 2, statements: 10 });
    await store.close();
  });

  it('writes under four pages a commit to the WAL, with other runs in the file (a run\'s rows are appended, not split into the middle of the tables)', async () => {
    const path = join(dir, 'pages.db');
    const store = sqliteStore({ path });
    for (let i = 0; i < 20; i++) await run(store, 40);
    const other = new Database(path);
    other.pragma('wal_checkpoint(TRUNCATE)');
    const before = store.stats.writes;
    await run(store, 100);
    const { page_size: pageSize } = other.prepare('PRAGMA page_size').get() as { page_size: number };
    // The WAL is a 32-byte header and a frame (24-byte header and the page) per page a commit wrote.
    const frames = (statSync(`${path}-wal`).size - 32) / (pageSize + 24);
    other.close();
    await store.close();
    expect(frames / (store.stats.writes - before)).toBeLessThan(4);
  });
});

describe('what a durable step costs in PostgreSQL', () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('commits twice a step, each commit one statement (one round trip): the fenced UPDATE with its inserts, run as a transaction of its own', async () => {
    const store = await postgresStore({ connectionString: await server.database() });
    expect(await perStep(store)).toEqual({ commits: 2, statements: 2 });
    await store.close();
  });

  it("updates the run's row in place (HOT: a step changes no indexed column, so no index entry is written)", async () => {
    // One connection, so the statistics it keeps for the store's statements can be flushed on it.
    const pool = new pg.Pool({ connectionString: await server.database(), max: 1 });
    // A pool of the test's own: the server's shutdown must not reach an idle client as an uncaught error.
    pool.on('error', () => undefined);
    const store = await postgresStore({ pool });
    await run(store, 40);
    await pool.query('SELECT pg_stat_force_next_flush()');
    const { rows } = await pool.query("SELECT n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'koagent_runs'");
    await store.close();
    await pool.end();
    // 81 updates: two a step, and the last, where the run stops running (which a prune index must see).
    expect(rows[0]).toEqual({ updates: 81, hot: 80 });
  });
});
