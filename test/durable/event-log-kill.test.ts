// The event log across a worker's death, with real processes: a worker streams a run and is
// killed with SIGKILL at a random point of its stream (chosen by how many events the reader has
// seen), another process recovers the run with other text — and, every other round, is killed
// too, a third finishing it. A reader in this test's own process follows the run from the start
// throughout. Asserted: it gets each event once, at offsets 1, 2, 3 … with none missing; every
// retraction takes back the end of what it shows; and what it shows ends equal to the run's
// final transcript. Bounded: at most ROUNDS rounds or BUDGET_MS per database. SQLite (one file)
// and PostgreSQL (a real server).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/index.js';
import { postgresStore } from '../../src/postgres.js';
import { sqliteStore } from '../../src/sqlite.js';
import { followEvents } from '../../src/store.js';
import type { EventLogStore, LoggedEvent } from '../../src/stores/run-store.js';
import { shownReplies, transcriptReplies } from '../support/event-log.js';
import { endedWell, EventLogWorkers } from '../support/event-log-workers.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';

const ROUNDS = Number(process.env.EVENT_LOG_KILL_ROUNDS ?? 4);
const BUDGET_MS = Number(process.env.EVENT_LOG_KILL_BUDGET_MS ?? 30_000);

const workers = new EventLogWorkers();
const dirs: string[] = [];
let postgres: TestPostgres | undefined;

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  workers.killAll();
  await postgres?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const random = (n: number) => Math.floor(Math.random() * n);

/**
 * One round: run `runId` through workers of generations 1, 2 (and 3 when `twice`), each but the
 * last killed once the reader has seen a random number of events more; the reader follows.
 */
async function round(kind: 'sqlite' | 'postgres', where: string, reader: EventLogStore, runId: string, twice: boolean): Promise<{ events: LoggedEvent[]; kills: number }> {
  const args = (role: string, generation: number) => [kind, where, runId, role, String(generation)];
  const first = workers.start(args('start', 1));
  await first.started;
  const seen: LoggedEvent[] = [];
  // The workers that will be killed, each at the reader's count of events when it should die.
  const plan = [{ w: first, at: 1 + random(18) }];
  let kills = 0;
  const following = (async () => {
    for await (const logged of followEvents(reader, runId)) {
      seen.push(logged);
      const next = plan[0];
      if (next !== undefined && seen.length >= next.at) {
        plan.shift();
        if (next.w.child.kill('SIGKILL')) kills++;
      }
    }
  })();
  endedWell(await first.exited);
  const second = workers.start(args('recover', 2));
  if (twice) plan.push({ w: second, at: seen.length + 1 + random(16) });
  endedWell(await second.exited);
  if (twice && second.child.signalCode === 'SIGKILL') endedWell(await workers.start(args('recover', 3)).exited);
  plan.length = 0;
  await following;
  return { events: seen, kills };
}

async function killAndFollow(kind: 'sqlite' | 'postgres', where: string, reader: EventLogStore) {
  const deadline = Date.now() + BUDGET_MS;
  let kills = 0;
  let retracted = 0;
  let rounds = 0;
  while (rounds < ROUNDS && (rounds < 2 || Date.now() < deadline)) {
    const runId = `run_${kind}_${++rounds}_${randomUUID().slice(0, 8)}`;
    const { events, kills: killed } = await round(kind, where, reader, runId, rounds % 2 === 0);
    kills += killed;
    // Each event once, in order, none missing: the offsets are 1, 2, 3 …
    expect(events.map((logged) => logged.seq)).toEqual(events.map((_, i) => i + 1));
    const stored = (await reader.loadRun(runId))!;
    expect(stored.status).toBe('completed');
    const shown = events.map((logged) => logged.event as AgentEvent);
    // What the reader shows ends equal to the final transcript (a retraction that is not the end of what it shows throws here).
    expect(shownReplies(shown)).toEqual(transcriptReplies(stored.messages));
    expect(shown.filter((e) => e.type === 'run.end').map((e) => (e as { status: string }).status).at(-1)).toBe('completed');
    retracted += shown.filter((e) => e.type === 'text.retract').length;
    // A reader that comes after it all reads the same log.
    const late: LoggedEvent[] = [];
    for await (const logged of followEvents(reader, runId)) late.push(logged);
    expect(late).toEqual(events);
  }
  console.log(`event log on ${kind}: ${rounds} runs, ${kills} workers killed with SIGKILL mid-stream, ${retracted} retractions; each reader ended with the final transcript`);
  return { rounds, kills };
}

describe('the event log when a worker dies mid-stream (SIGKILL, another process recovers)', () => {
  it('gives a reader in another process each event once, and what it shows ends equal to the final transcript: SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'koagent-event-log-'));
    dirs.push(dir);
    const path = join(dir, 'runs.db');
    const reader = sqliteStore({ path });
    try {
      const { kills } = await killAndFollow('sqlite', path, reader);
      expect(kills).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }
  }, 180_000);

  it('gives a reader in another process each event once, and what it shows ends equal to the final transcript: PostgreSQL', async () => {
    const url = await postgres!.database();
    const reader = await postgresStore({ connectionString: url });
    try {
      const { kills } = await killAndFollow('postgres', url, reader);
      expect(kills).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }
  }, 180_000);
});
