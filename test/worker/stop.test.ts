// Spec of stopping: stop() lets the segments under way finish within its deadline; past it,
// they are listed unfinished and taken over elsewhere once the process is gone; SIGTERM stops a
// worker process gracefully (exit 0 after its run finished).
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres.js';
import { workerAgent } from '../fixtures/worker-agents.js';
import { mortal } from '../support/durable.js';
import { bury, useDatabase } from '../support/worker-harness.js';

const database = useDatabase();
const quiet = { warn: () => undefined };

describe('graceful stop', () => {
  it('lets a running segment finish within the deadline', async () => {
    const db = await database();
    const worker = await db.worker({ agents: [workerAgent(db.pool, { steps: 4, toolMs: 150 })], id: 'w1', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    await db.until(async () => (await db.effects(runId)).length >= 1, 'the first effect');
    expect(await worker.stop({ deadlineMs: 15_000 })).toEqual({ unfinished: [] });
    expect((await client.status(runId))?.status).toBe('completed');
    expect(await db.effects(runId)).toHaveLength(4);
  }, 30_000);

  it('lists a segment longer than the deadline unfinished; once its process is gone, another worker takes the run over', async () => {
    const db = await database();
    const store = await postgresStore({ connectionString: db.url, leaseMs: 1000 });
    const doomed = mortal(store);
    const first = await db.worker({ agents: [workerAgent(db.pool, { steps: 5, toolMs: 200 })], store: doomed.store, id: 'first', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    await db.until(async () => (await db.effects(runId)).length >= 1, 'the first effect');
    expect(await first.stop({ deadlineMs: 100 })).toEqual({ unfinished: [runId] });
    // The process exits: its store answers nothing more.
    doomed.die();

    const heir = await db.worker({ agents: [workerAgent(db.pool, { steps: 5, toolMs: 200 })], id: 'heir', logger: quiet });
    expect((await client.wait(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(heir.counts.recovered).toBe(1);
    expect((await db.effects(runId)).filter((e) => e.tool === 'record')).toHaveLength(5);
    await bury(first);
    await store.close();
  }, 40_000);

  it('a worker process finishes its run on SIGTERM, then exits 0', async () => {
    const db = await database();
    const child = await db.child({ id: 'terminated', steps: 5, toolMs: 200, handleSignals: true, shutdownMs: 20_000 });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    await db.until(async () => (await db.effects(runId)).length >= 1, 'the first effect');
    child.process.kill('SIGTERM');
    const exit = await child.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    // No other worker exists: the process finished the run before it exited.
    expect((await client.status(runId))?.status).toBe('completed');
    expect(await db.effects(runId)).toHaveLength(5);
  }, 40_000);
});
