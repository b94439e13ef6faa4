// The kill test over HTTP: a client follows a streamed run through the handler's SSE route while
// the worker process running it is killed with SIGKILL mid-text and another process recovers the
// run with other text (every other round that one is killed too). The client also goes away at
// random points and comes back with its last event id. Asserted over every round: it gets each
// event once, with the ids 1, 2, 3 …; each retraction takes back the end of what it shows; what
// it shows ends equal to the run's final transcript. Bounded: ROUNDS rounds or BUDGET_MS per
// database. SQLite (one file) and PostgreSQL (a real server).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type AgentEvent } from '../../src/index.js';
import { createHandler } from '../../src/http.js';
import { postgresStore } from '../../src/postgres.js';
import { sqliteStore } from '../../src/sqlite.js';
import type { EventLogStore } from '../../src/stores/run-store.js';
import { mockModel } from '../../src/testing/index.js';
import { shownReplies, transcriptReplies } from '../support/event-log.js';
import { endedWell, EventLogWorkers } from '../support/event-log-workers.js';
import { readSse, served, tempDb, type ReadEvent } from '../support/http.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';

const ROUNDS = Number(process.env.HTTP_KILL_ROUNDS ?? 4);
const BUDGET_MS = Number(process.env.HTTP_KILL_BUDGET_MS ?? 30_000);

const workers = new EventLogWorkers();
let postgres: TestPostgres | undefined;
beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  workers.killAll();
  await postgres?.stop();
});

const random = (n: number) => Math.floor(Math.random() * n);

/**
 * Follow run `runId` over HTTP to its `end` event, going away after a random number of events
 * each time and coming back with the last id; `onEvent` sees each event read.
 */
async function follow(url: string, runId: string, onEvent: (count: number) => void): Promise<{ read: ReadEvent[]; reconnects: number }> {
  const read: ReadEvent[] = [];
  let reconnects = 0;
  for (;;) {
    const last = read.filter((e) => e.id !== undefined).at(-1)?.id;
    const response = await fetch(`${url}/runs/${runId}/events`, { headers: last === undefined ? {} : { 'last-event-id': last } });
    if (response.status === 204) return { read, reconnects };
    expect(response.status).toBe(200);
    const leaveAfter = 1 + random(25);
    let got = 0;
    const part = await readSse(response, (e) => {
      if (e.event === undefined) onEvent(read.length + ++got);
      return e.event === undefined && got >= leaveAfter;
    });
    read.push(...part.filter((e) => e.event === undefined));
    if (part.some((e) => e.event === 'end')) return { read, reconnects };
    reconnects++;
  }
}

async function round(kind: 'sqlite' | 'postgres', where: string, url: string, runId: string, twice: boolean): Promise<{ read: ReadEvent[]; kills: number; reconnects: number }> {
  const args = (role: string, generation: number) => [kind, where, runId, role, String(generation)];
  const first = workers.start(args('start', 1));
  await first.started;
  const plan = [{ w: first, at: 1 + random(18) }];
  let kills = 0;
  const following = follow(url, runId, (count) => {
    const next = plan[0];
    if (next !== undefined && count >= next.at) {
      plan.shift();
      if (next.w.child.kill('SIGKILL')) kills++;
    }
  });
  endedWell(await first.exited);
  const second = workers.start(args('recover', 2));
  if (twice) plan.push({ w: second, at: 1 + random(40) });
  endedWell(await second.exited);
  if (twice && second.child.signalCode === 'SIGKILL') endedWell(await workers.start(args('recover', 3)).exited);
  plan.length = 0;
  const { read, reconnects } = await following;
  return { read, kills, reconnects };
}

async function killAndFollow(kind: 'sqlite' | 'postgres', where: string, store: EventLogStore): Promise<number> {
  const handler = createHandler({ agents: [createAgent({ name: 'streamer', model: mockModel([]) })], store, authorize: 'local' });
  const server = await served(handler);
  const deadline = Date.now() + BUDGET_MS;
  let kills = 0;
  let reconnects = 0;
  let rounds = 0;
  try {
    while (rounds < ROUNDS && (rounds < 2 || Date.now() < deadline)) {
      const runId = `run_http_${kind}_${++rounds}_${randomUUID().slice(0, 8)}`;
      const result = await round(kind, where, server.url, runId, rounds % 2 === 0);
      kills += result.kills;
      reconnects += result.reconnects;
      // Each event once, none missing, across every reconnect: the ids are 1, 2, 3 …
      expect(result.read.map((e) => Number(e.id))).toEqual(result.read.map((_, i) => i + 1));
      const stored = (await store.loadRun(runId))!;
      expect(stored.status).toBe('completed');
      const shown = result.read.map((e) => JSON.parse(e.data) as AgentEvent);
      expect(shownReplies(shown)).toEqual(transcriptReplies(stored.messages));
    }
  } finally {
    await server.close();
  }
  console.log(`http kill test on ${kind}: ${rounds} runs, ${kills} workers killed with SIGKILL mid-stream, ${reconnects} reconnects with Last-Event-ID; each client ended with the final transcript`);
  return kills;
}

describe('a client following a run over HTTP while its worker dies (SIGKILL) and it reconnects', () => {
  it('gets each event once and ends showing the final transcript: SQLite', async () => {
    const db = tempDb();
    const store = sqliteStore({ path: db.path });
    try {
      expect(await killAndFollow('sqlite', db.path, store)).toBeGreaterThan(0);
    } finally {
      await store.close();
      db.remove();
    }
  }, 180_000);

  it('gets each event once and ends showing the final transcript: PostgreSQL', async () => {
    const url = await postgres!.database();
    const store = await postgresStore({ connectionString: url });
    try {
      expect(await killAndFollow('postgres', url, store)).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 180_000);
});
