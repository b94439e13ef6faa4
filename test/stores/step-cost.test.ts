// What a durable step costs each SQL store, by counting: commits, statements (PostgreSQL: round
// trips) and, in SQLite, pages written. A step of one tool call commits twice, as the design
// needs: the call `running` before its tool runs (write-ahead), `done` with its result right
// after (so an effect that happened is never forgotten). Counts, not times. (PostgreSQL's:
// step-cost-postgres.test.ts.)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/sqlite.js';
import { perStep, run } from './step-counts.js';

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
