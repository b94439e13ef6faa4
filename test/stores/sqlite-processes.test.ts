// The SQLite store shared by processes on one machine: counters that child processes add to
// in one file lose no add. (The SQLite store's other tests, in one process, are sqlite.test.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { sqliteStore } from '../../src/sqlite.js';
import { sharedKeyValueConformance } from './conformance-key-values-processes.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-sqlite-shared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

sharedKeyValueConformance('sqlite', async () => {
  const path = join(dir, 'shared.db');
  return { kind: 'sqlite', where: path, open: async () => sqliteStore({ path }) };
});
