// The stores declare the part of each driver they use, so koagent's declarations need no
// driver's @types (test/packaging.test.ts compiles a project without them). These assignments
// keep the declared parts true to the drivers: a pg.Pool, its settings and a better-sqlite3
// database fit them, as a program that has the drivers' types passes them.
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore, type PostgresPool } from '../../src/postgres.js';
import type { PostgresPoolConfig, PostgresStoreOptions } from '../../src/stores/postgres.js';
import { migrate } from '../../src/stores/sqlite.js';

describe("the drivers' types fit the stores' declared parts", () => {
  it('a pg.Pool and pg.PoolConfig fit postgresStore({ pool, poolConfig })', async () => {
    const settings: pg.PoolConfig = { max: 2, idleTimeoutMillis: null, connectionString: 'postgres://127.0.0.1:1/none', connectionTimeoutMillis: 1 };
    const config: PostgresPoolConfig = settings;
    const pool: PostgresPool = new pg.Pool(config);
    const options: PostgresStoreOptions = { pool, poolConfig: { statement_timeout: 1000, ssl: false } };
    // Nothing listens on port 1: the store's first query fails, which shows the pool was used.
    await expect(postgresStore(options)).rejects.toThrow(/cannot prepare the database/);
    await pool.end();
  });

  it('a better-sqlite3 Database fits migrate()', () => {
    const db = new Database(':memory:');
    migrate(db, ':memory:');
    expect(db.pragma('user_version', { simple: true })).toBeGreaterThan(0);
    db.close();
  });
});
