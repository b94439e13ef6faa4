// Every change a hook makes is stored, in-place edits included: an AgentHook edits a stored
// message in place and pushes one of its own; the worker is killed (SIGKILL) after the next
// step; the store holds the transcript as it was live, and the run recovered in another
// process ends with the transcript of a run that was never killed. On SQLite and PostgreSQL.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, type Message } from '../../src/index.js';
import type { Clock, RunStore } from '../../src/store.js';
import { postgresStore } from '../../src/postgres.js';
import { sqliteStore } from '../../src/sqlite.js';
import { buildEditingAgent } from '../fixtures/editing-agent.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';
import { offsetClock } from '../support/clock.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/editing-child.ts');

let postgres: TestPostgres | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The clock of the process that recovers: a minute ahead of the dead worker's, whose lease (400 ms) is out by it. */
const AHEAD = offsetClock(60_000);

/** The worker: resolves with how it exited. */
function killedWorker(kind: string, where: string): Promise<{ signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, kind, where], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (_code, signal) => resolve({ signal, stderr }));
  });
}

/** The same run, never killed. */
async function liveTranscript(): Promise<Message[]> {
  const result = await buildEditingAgent({ store: memoryStore() }).run('Where is order A-17?', { sessionId: 'orders' });
  return result.messages;
}

async function killThenRecover(kind: 'sqlite' | 'postgres', where: string, open: (clock: Clock) => Promise<RunStore> | RunStore) {
  const live = await liveTranscript();
  // The live run edited the user's message and a tool result in place, and pushed a note.
  expect(live.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'tool', 'assistant']);
  expect(live[0].content).toBe('[checked] Where is order A-17?');
  expect((live[3] as { metadata?: unknown }).metadata).toEqual({ seenBy: 'annotate' });

  const exit = await killedWorker(kind, where);
  expect(exit.signal, exit.stderr).toBe('SIGKILL');
  const store = await open(AHEAD);
  try {
    const [run] = await store.listRuns({ agentName: 'editor' });
    const stored = (await store.loadRun(run.runId))!;
    expect(stored.status).toBe('running');
    // As it was live when the worker died: the in-place edit and the pushed note are there.
    expect(stored.messages).toEqual(live.slice(0, 4).map((m, i) => (i === 3 ? { ...m, metadata: undefined } : m)).map(withoutUndefined));
    // Another process recovers the run: by its clock, a minute ahead, the dead worker's lease is out.
    const agent = buildEditingAgent({ store });
    const [recovered] = await agent.runs.recover();
    expect(recovered.error).toBeUndefined();
    expect(recovered.result!.messages).toEqual(live);
    expect((await store.loadRun(run.runId))!.messages).toEqual(live);
  } finally {
    await store.close();
  }
}

function withoutUndefined(message: Message): Message {
  return JSON.parse(JSON.stringify(message)) as Message;
}

describe('a hook that edits the transcript in place, its worker killed after the next step', () => {
  it('on SQLite: the store held the live transcript, and the recovered run ends as the live one did', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'koagent-edits-'));
    dirs.push(dir);
    const path = join(dir, 'runs.db');
    await killThenRecover('sqlite', path, (clock) => sqliteStore({ path, leaseMs: 400, clock }));
  }, 60_000);

  it('on PostgreSQL: the same', async () => {
    const url = await postgres!.database();
    await killThenRecover('postgres', url, (clock) => postgresStore({ connectionString: url, leaseMs: 400, clock }));
  }, 60_000);
});
