// The PostgreSQL store against the conformance suites every store passes, on a real server
// started for this file; and what is its own: its schema versions, and its options.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres.js';
import { migrate } from '../../src/stores/postgres.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';
import { runConformance } from './conformance-runs.js';
import { sessionConformance } from './conformance-sessions.js';
import { unreadableConformance } from './conformance-unreadable.js';
import { keyValueConformance } from './conformance-key-values.js';
import { sharedKeyValueConformance } from './conformance-key-values-processes.js';
import type { Clock } from '../../src/store.js';
import { eventLogConformance } from './conformance-events.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
// Stopping checkpoints every database the tests made (the event log's too): on a busy machine, longer than a default hook.
afterAll(async () => {
  await server?.stop();
}, 60_000);

const make = async (options: { leaseMs?: number; clock?: Clock } = {}) => postgresStore({ connectionString: await server.database(), ...options });
runConformance('postgres', make);
// The reader is another pool on the database, as another process's would be.
eventLogConformance('postgres', async (options) => {
  const url = await server.database();
  const writer = await postgresStore({ connectionString: url, ...options });
  const reader = await postgresStore({ connectionString: url, ...options });
  return { writer, reader, close: async () => (await writer.close(), await reader.close()) };
});
sessionConformance('postgres', make);
keyValueConformance('postgres', {
  make,
  raw: async () => {
    const pool = new pg.Pool({ connectionString: await server.database() });
    const store = await postgresStore({ pool });
    return {
      store,
      exec: async (text, ...params) => void (await pool.query(text, params)),
      count: async (where) => (await pool.query(`SELECT count(*)::int AS n FROM koagent_kv WHERE ${where}`)).rows[0].n as number,
      close: async () => (await store.close(), await pool.end()),
    };
  },
});
sharedKeyValueConformance('postgres', async () => {
  const url = await server.database();
  await (await postgresStore({ connectionString: url })).close();
  return { kind: 'postgres', where: url, open: () => postgresStore({ connectionString: url }) };
});
unreadableConformance('postgres', async (options) => {
  const pool = new pg.Pool({ connectionString: await server.database() });
  const store = await postgresStore({ pool, ...options });
  return {
    store,
    exec: async (text, ...params) => void (await pool.query(text, params)),
    close: async () => (await store.close(), await pool.end()),
  };
});

describe('postgresStore', () => {
  it('applies only the migrations a database lacks, under a lock, and refuses a newer schema', async () => {
    const url = await server.database();
    const pool = new pg.Pool({ connectionString: url });
    try {
      const steps = [['CREATE TABLE t1 (x INTEGER)'], ['CREATE TABLE t2 (x INTEGER)']];
      await Promise.all([migrate(pool, steps.slice(0, 1)), migrate(pool, steps.slice(0, 1))]);
      await Promise.all([migrate(pool, steps), migrate(pool, steps)]);
      expect((await pool.query('SELECT version FROM koagent_schema')).rows).toEqual([{ version: 2 }]);
      expect((await pool.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename IN ('t1', 't2')")).rows).toEqual([{ n: 2 }]);
      await pool.query('UPDATE koagent_schema SET version = 7');
      await expect(migrate(pool, steps)).rejects.toThrow('postgresStore: the database has koagent schema version 7, newer than this koagent knows (2); a newer koagent wrote it — upgrade koagent to use it');
    } finally {
      await pool.end();
    }
    await expect(postgresStore({ connectionString: url })).rejects.toThrow(/postgresStore: cannot prepare the database: .*schema version 7/);
  });

  it('uses a pool of yours and leaves it open on close()', async () => {
    const pool = new pg.Pool({ connectionString: await server.database() });
    const store = await postgresStore({ pool });
    await store.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it('refuses bad options, naming them, and says when the server cannot be reached', async () => {
    await expect(postgresStore({})).rejects.toThrow("postgresStore(options): say where the database is: { connectionString: 'postgres://…' }, { poolConfig }, or { pool }");
    await expect(postgresStore({ connectionString: 'postgres://x@127.0.0.1:1/none', leaseMs: 1 })).rejects.toThrow('postgresStore(options): leaseMs must be a number of milliseconds ≥ 10 (got 1)');
    await expect(postgresStore({ url: 'postgres://x@127.0.0.1:1/none' } as never)).rejects.toThrow('postgresStore(options): url is not an option of postgresStore; did you mean `connectionString`?');
    await expect(postgresStore({ pool: {} as never })).rejects.toThrow('postgresStore(options): pool must be a pg.Pool');
    await expect(postgresStore({ connectionString: 'postgres://x@127.0.0.1:1/none' })).rejects.toThrow(/postgresStore: cannot prepare the database: .*ECONNREFUSED/);
  });
});
