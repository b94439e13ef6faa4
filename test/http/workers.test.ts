// Spec of the handler beside workers (PostgreSQL, pg-boss): runs it starts wait in the queue and
// run on worker processes; their events are followed over HTTP from the store's log; approvals go
// through the queue; and a cancel from a second client stops a run wherever it runs — also after
// its worker was killed and another took it over — while a client that goes away stops nothing.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http.js';
import { workerAgent } from '../fixtures/worker-agents.js';
import { api, readSse, runEventsOf, served, type ReadEvent } from '../support/http.js';
import { useDatabase } from '../support/worker-harness.js';

const database = useDatabase();
const quiet = { warn: () => undefined };
const authorize = (request: Request) => (request.headers.get('authorization') === 'Bearer ada' ? { actor: 'ada', tenant: 'acme' } : request.headers.get('authorization') === 'Bearer bob' ? { actor: 'bob', tenant: 'acme' } : null);

async function handlerOn(db: Awaited<ReturnType<typeof database>>, steps: number) {
  const client = await db.client();
  const server = await served(createHandler({ agents: [workerAgent(db.pool, { steps })], client, authorize, logger: quiet }));
  return { client, server, ada: api(server.url, 'ada'), bob: api(server.url, 'bob') };
}

const typeOf = (e: ReadEvent) => (e.event === undefined ? (JSON.parse(e.data) as { type: string }).type : `:${e.event}`);

describe('runs on the workers', () => {
  it('starts a run in the queue, follows it from queued to completed over SSE, and keeps its tenant', async () => {
    const db = await database();
    const { server, ada, client } = await handlerOn(db, 3);
    try {
      const started = await ada.json('POST', '/runs', { input: 'hello' });
      expect(started).toMatchObject({ status: 201, body: { status: 'queued' } });
      const runId = started.body.runId as string;
      expect((await ada.json('GET', `/runs/${runId}`)).body).toMatchObject({ runId, status: 'queued' });
      expect((await client.status(runId))?.tenant).toBe('acme');
      // The follower waits for a worker; one comes later.
      const following = readSse(await ada.call('GET', `/runs/${runId}/events`));
      await db.worker({ agents: [workerAgent(db.pool, { steps: 3 })], id: 'w1', logger: quiet });
      const read = await following;
      const events = runEventsOf(read);
      expect(events[0]).toMatchObject({ type: 'run.start' });
      expect(events.at(-1)).toMatchObject({ type: 'run.end', status: 'completed' });
      expect(read.filter((e) => e.event === undefined).map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
      expect((await ada.json('GET', `/runs/${runId}`)).body).toMatchObject({ status: 'completed', sessionId: started.body.sessionId });
    } finally {
      await server.close();
    }
  }, 60_000);

  it('answers an approval through the queue: a worker resumes the run, and the log says ada decided through the API', async () => {
    const db = await database();
    const { server, ada } = await handlerOn(db, 1);
    try {
      await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], id: 'w1', logger: quiet });
      const { body } = await ada.json('POST', '/runs', { input: 'please refund' });
      await readSse(await ada.call('GET', `/runs/${body.runId}/events`));
      const run = (await ada.json('GET', `/runs/${body.runId}`)).body;
      expect(run.pendingApprovals).toEqual([expect.objectContaining({ toolCallId: 'call_refund', digest: expect.any(String) })]);
      const answered = await ada.json('POST', `/runs/${body.runId}/decisions`, { decisions: { call_refund: { approved: true, digest: run.pendingApprovals[0].digest } } });
      expect(answered).toMatchObject({ status: 202, body: { status: 'queued' } });
      const rest = await readSse(await ada.call('GET', `/runs/${body.runId}/events`, undefined, { 'last-event-id': String(run.lastEvent) }));
      expect(runEventsOf(rest)[0]).toMatchObject({ type: 'run.start', resumed: true });
      expect(runEventsOf(rest).at(-1)).toMatchObject({ type: 'run.end', status: 'completed' });
      const done = (await ada.json('GET', `/runs/${body.runId}`)).body;
      expect(done.decisionLog).toEqual([expect.objectContaining({ toolCallId: 'call_refund', decision: 'approved', actor: { id: 'ada' }, surface: 'api' })]);
      expect((await db.effects(body.runId)).filter((e) => e.tool === 'refund')).toHaveLength(1);
      // Sent again: the run is not waiting any more.
      expect((await ada.json('POST', `/runs/${body.runId}/decisions`, { decisions: { call_refund: { approved: true, digest: run.pendingApprovals[0].digest } } })).status).toBe(409);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a cancel from a second client stops a run on a worker process after it moved to another worker; the first client going away did not', async () => {
    const db = await database();
    const steps = 40;
    const { server, ada, bob, client } = await handlerOn(db, steps);
    try {
      const first = await db.child({ id: 'A', steps, toolMs: 100 });
      const { body } = await ada.json('POST', '/runs', { input: 'hello' });
      const runId = body.runId as string;
      // Ada follows a little, then goes away (her tab closes).
      const seen = await readSse(await ada.call('GET', `/runs/${runId}/events`), (e) => typeOf(e) === 'tool.done' && e.id !== undefined && Number(e.id) > 6);
      first.process.kill('SIGKILL');
      await first.exited;
      const before = (await db.effects(runId)).length;
      expect(before).toBeGreaterThan(0);
      // Another worker (in this process) takes the run over once A's lease expired; Ada comes back where she left.
      await db.worker({ agents: [workerAgent(db.pool, { steps, toolMs: 100 })], id: 'B', logger: quiet });
      let resumedAt = 0;
      const following = readSse(await ada.call('GET', `/runs/${runId}/events`, undefined, { 'last-event-id': seen.at(-1)!.id! }), (e, n) => {
        if (typeOf(e) === 'run.start') resumedAt = n;
        return false;
      });
      await db.until(async () => resumedAt > 0 && (await db.effects(runId)).length > before + 1, 'worker B running the run');
      expect((await client.status(runId))?.status).toBe('running');
      const cancelled = await bob.json('POST', `/runs/${runId}/cancel`, {});
      expect(cancelled.status).toBe(202);
      const read = await following;
      expect(runEventsOf(read).at(-1)).toMatchObject({ type: 'run.end', stopReason: 'aborted' });
      expect(read.at(-1)).toMatchObject({ event: 'end' });
      expect((await client.wait(runId, { timeoutMs: 10_000 })).status).toBe('cancelled');
      expect((await db.effects(runId)).filter((e) => e.tool === 'record').length).toBeLessThan(steps);
      // Ada's events, before and after she went away, are the log: each once, in order.
      const ids = [...seen, ...read].filter((e) => e.event === undefined).map((e) => Number(e.id));
      expect(ids).toEqual(ids.map((_, i) => i + 1));
    } finally {
      await server.close();
    }
  }, 90_000);
});
