// Spec of the checks a worker makes before a job's segment: a duplicate start job does nothing,
// and a new run is not lost when its version is pinned while the worker that holds it pins it.
// The interleavings are driven: the worker's statement is held back (a gated pool), and the
// other side runs in between.
import { describe, expect, it } from 'vitest';
import { QueueDb } from '../../src/worker/connection.js';
import { pinVersion, sendJob } from '../../src/worker/dispatch.js';
import { queueName } from '../../src/worker/schema.js';
import { workerAgent } from '../fixtures/worker-agents.js';
import { useDatabase, type TestDb } from '../support/worker-harness.js';

const database = useDatabase();
const quiet = { warn: () => undefined };
/** The statement with which a worker fixes a new run's version as its own. */
const PIN = /SET version = /;

/** Send a copy of the run's start job, as a queue that delivers a job twice would. */
async function duplicateStart(db: TestDb, runId: string): Promise<void> {
  const queue = QueueDb.open({ connectionString: db.url }, 'test');
  const boss = await queue.boss({ supervise: false, schedule: false });
  try {
    await queue.tx((tx) => sendJob(tx, boss, queueName('teller'), { kind: 'start', runId, agent: 'teller' }, {}));
  } finally {
    await boss.stop({ graceful: false, close: false });
    await queue.close();
  }
}

async function version(db: TestDb, runId: string): Promise<string | null> {
  return (await db.pool.query('SELECT version FROM koagent_dispatch WHERE run_id = $1', [runId])).rows[0].version;
}

describe('a duplicate start job does nothing', () => {
  it('is refused by a worker of another version without pinning the run to that version; the holder runs it on its own', async () => {
    const db = await database();
    const gate = db.gatedPool(PIN);
    await db.worker({ pool: gate.pool, agents: [workerAgent(db.pool, { steps: 1 })], version: '1', concurrency: 1, id: 'holder', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    // The holder took the start job and is about to pin the run's version.
    await gate.reached;
    const other = await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], version: '2', id: 'other', logger: quiet });
    await duplicateStart(db, runId);
    await db.until(async () => other.counts.refused === 1, 'the copy to be refused');
    expect(await version(db, runId)).toBeNull();

    gate.open();
    expect(await client.wait(runId, { timeoutMs: 20_000 })).toMatchObject({ status: 'completed', version: '1' });
    expect(other.counts.segments).toBe(0);
  }, 40_000);
});

describe('a new run whose version is pinned meanwhile', () => {
  it('goes to the version pinned while its holder was pinning, and completes there (it is not sent to a queue nobody reads)', async () => {
    const db = await database();
    const gate = db.gatedPool(PIN);
    const holder = await db.worker({ pool: gate.pool, agents: [workerAgent(db.pool, { steps: 1 })], version: '1', concurrency: 1, id: 'holder', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    await gate.reached;
    const v2 = await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], version: '2', id: 'v2', logger: quiet });

    // Another transaction pins the run to version 2, and commits only once the holder's pin waits for it.
    await new QueueDb(db.pool, false, 'the test').tx(async (other) => {
      const { rows: [{ pid }] } = await other.query('SELECT pg_backend_pid() AS pid');
      await pinVersion(other, runId, '2');
      gate.open();
      await db.until(async () => (await db.pool.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid])).rows.length > 0, "the holder's pin to wait");
    });

    expect(await client.wait(runId, { timeoutMs: 20_000 })).toMatchObject({ status: 'completed', version: '2' });
    expect(v2.counts.segments).toBe(1);
    expect(holder.counts.segments).toBe(0);
  }, 40_000);
});
