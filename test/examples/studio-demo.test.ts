// npm run studio:demo, as a user runs it (its own process, through tsx), with --exit: it runs
// its agents into a SQLite file and prints the studio's URL; the file then holds each kind of run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/sqlite.js';
import { runExample } from '../support/examples.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-studio-demo-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the studio demo', () => {
  it('runs a streamed, a waiting, a sub-agent\'s and a recovered run into the file, prints the URL with its token and exits', async () => {
    const db = join(dir, 'runs.db');
    const { code, stdout, stderr } = await runExample('examples/studio-demo.ts', { args: ['--db', db, '--exit'] });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/The studio: http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{16,}/);
    expect(stdout).toContain('recovered in this process: completed');
    const store = sqliteStore({ path: db });
    try {
      const runs = await store.listRuns();
      const byAgent = Object.fromEntries(runs.map((run) => [run.agentName, run.status]));
      expect(byAgent).toEqual({ booking: 'completed', writer: 'completed', payments: 'suspended', editor: 'completed' });
      const booking = (await store.loadRun(runs.find((run) => run.agentName === 'booking')!.runId))!;
      // The crash happened mid-run: the run took a second segment (the recovery) to finish.
      expect(booking.segment).toBeGreaterThan(1);
      expect(booking.ledger.map((call) => call.entry)).toEqual(['done', 'done']);
    } finally {
      await store.close();
    }
  }, 60_000);
});
