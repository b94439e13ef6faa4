// `koagent studio` run as a user runs it: the bin in a child process over a SQLite file; it
// prints the studio's URL with its token, and the API answers with that token and refuses
// without it, until the process is stopped; with --agents, it answers approvals.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/sqlite.js';
import { ops } from '../fixtures/cli-agents.js';
import { until } from '../support/waits.js';
import { koagentStudio, stopped } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-cli-studio-'));
const db = join(dir, 'runs.db');
let runId: string;

beforeAll(async () => {
  const store = sqliteStore({ path: db });
  runId = (await ops.run('Deploy the service', { store })).runId;
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('koagent studio', () => {
  it('prints a URL on 127.0.0.1 with its token; the API answers with the token and refuses without it; SIGTERM stops it cleanly', async () => {
    const { child, url } = await koagentStudio(['--store', db]);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{16,}$/);
      const token = new URL(url).searchParams.get('token')!;
      const runs = await fetch(new URL('/api/runs', url), { headers: { 'x-koagent-token': token } });
      expect(runs.status).toBe(200);
      expect(((await runs.json()) as { runId: string }[]).map((row) => row.runId)).toEqual([runId]);
      expect((await fetch(new URL(`/api/runs/${runId}`, url))).status).toBe(401);
      expect((await fetch(new URL(`/api/runs?token=not-the-token-at-all`, url))).status).toBe(403);
    } finally {
      expect(await stopped(child)).toBe(0);
    }
  }, 60_000);

  it('listens on the port it is given', async () => {
    const port = await freePort();
    const { child, url } = await koagentStudio(['--store', db, '--port', String(port), '--host', '127.0.0.1']);
    try {
      expect(new URL(url).port).toBe(String(port));
    } finally {
      await stopped(child);
    }
  }, 60_000);

  it('fails on a store file that does not exist (exit 1)', async () => {
    await expect(koagentStudio(['--store', join(dir, 'nope.db')])).rejects.toThrow(/exited \(1\).*no run store at/s);
  });

  it('answers an approval from the page for an --agents module whose agents have no store: it resumes through the store it was opened on', async () => {
    const store = sqliteStore({ path: db });
    const waiting = (await ops.run('Deploy the service again', { store })).runId;
    await store.close();
    const { child, url } = await koagentStudio(['--store', db, '--agents', 'test/fixtures/cli-agents.ts']);
    try {
      const token = new URL(url).searchParams.get('token')!;
      const answer = await fetch(new URL(`/api/runs/${waiting}/approvals/d1`, url), { method: 'POST', headers: { 'x-koagent-token': token, 'content-type': 'application/json' }, body: '{"approved":true}' });
      expect(answer.status, await answer.clone().text()).toBe(202);
      const reader = sqliteStore({ path: db });
      try {
        // The studio process resumes the run: no event of its end reaches this one, so the store is polled.
        await until(async () => (await reader.loadRun(waiting))?.status === 'completed', `run ${waiting} to complete`, { timeoutMs: 10_000 });
        expect((await reader.loadRun(waiting))!.ledger).toEqual([{ id: 'd1', entry: 'done' }]);
      } finally {
        await reader.close();
      }
    } finally {
      expect(await stopped(child)).toBe(0);
    }
  }, 60_000);
});
