// Spec of schedules: client.schedule() registers a pg-boss cron schedule; each job its cron
// sends is started as one run by a worker (a job delivered again starts no second run);
// unschedule() removes it. The cron fires at most once a minute, so the test sends the job.
import { describe, expect, it } from 'vitest';
import { QueueDb } from '../../src/worker/connection.js';
import { scheduleQueue } from '../../src/worker/schema.js';
import { workerAgent } from '../fixtures/worker-agents.js';
import { useDatabase } from '../support/worker-harness.js';

const database = useDatabase();
const quiet = { warn: () => undefined };

describe('schedules', () => {
  it('registers a cron schedule, starts a run per job of it (once per job id), and unschedules', async () => {
    const db = await database();
    const client = await db.client();
    await client.schedule('nightly', { agent: 'teller', cron: '0 3 * * *', input: 'hello', tenant: 'ops' });
    const { rows: schedules } = await db.pool.query('SELECT name, cron, data FROM pgboss.schedule');
    expect(schedules).toEqual([{ name: scheduleQueue('nightly'), cron: '0 3 * * *', data: { agent: 'teller', cron: '0 3 * * *', input: 'hello', tenant: 'ops' } }]);

    const worker = await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], scheduleRefreshMs: 200, id: 'w1', logger: quiet });
    // The cron firing: a job in the schedule's queue, with the schedule's data.
    const queue = QueueDb.open({ connectionString: db.url }, 'test');
    const boss = await queue.boss({ supervise: false, schedule: false });
    try {
      const jobId = (await boss.send(scheduleQueue('nightly'), schedules[0].data))!;
      const runId = await db.until(async () => (await db.pool.query('SELECT run_id FROM koagent_dispatch')).rows[0]?.run_id as string | undefined, 'the scheduled run');
      const report = await client.wait(runId, { timeoutMs: 20_000 });
      expect(report).toMatchObject({ status: 'completed', tenant: 'ops' });
      expect(await db.effects(runId)).toHaveLength(1);

      // The same job delivered again (its worker died before completing it): no second run.
      await db.pool.query('DELETE FROM pgboss.job WHERE id = $1', [jobId]);
      await boss.send(scheduleQueue('nightly'), schedules[0].data, { id: jobId });
      await db.until(async () => (await db.pool.query("SELECT 1 FROM pgboss.job WHERE id = $1 AND state = 'completed'", [jobId])).rows.length > 0, 'the job again');
      const { rows } = await db.pool.query('SELECT run_id, idempotency_key FROM koagent_dispatch');
      expect(rows).toEqual([{ run_id: runId, idempotency_key: `${scheduleQueue('nightly')}:${jobId}` }]);
      expect(worker.counts.segments).toBe(1);
    } finally {
      await boss.stop({ graceful: false, close: false });
      await queue.close();
    }

    await client.unschedule('nightly');
    expect((await db.pool.query('SELECT name FROM pgboss.schedule')).rows).toEqual([]);
  }, 40_000);
});
