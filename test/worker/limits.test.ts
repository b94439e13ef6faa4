// Spec of the worker's limits: its own concurrency, an agent's limit across all workers (with
// the jobs it defers), a tenant's share of that limit, and one writer per run (a duplicate
// job for a run under way is refused and changes nothing).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import { sendJob } from '../../src/worker/dispatch.js';
import { QueueDb } from '../../src/worker/connection.js';
import { queueName } from '../../src/worker/schema.js';
import { stepsModel, workerAgent } from '../fixtures/worker-agents.js';
import { useDatabase } from '../support/worker-harness.js';

const database = useDatabase();

/** An agent whose tool counts the segments in it at once, overall and by tenant (the run's metadata). */
function gaugedAgent(steps = 3, toolMs = 60) {
  const gauge = { now: 0, max: 0, byTenant: new Map<string, number>(), maxByTenant: new Map<string, number>(), log: [] as string[] };
  const record = defineTool({
    name: 'record',
    description: 'Record one step',
    input: z.object({ step: z.number() }),
    idempotent: true,
    execute: async ({ step }, ctx) => {
      const tenant = String(ctx.metadata.tenant ?? '');
      gauge.max = Math.max(gauge.max, ++gauge.now);
      const mine = (gauge.byTenant.get(tenant) ?? 0) + 1;
      gauge.byTenant.set(tenant, mine);
      gauge.maxByTenant.set(tenant, Math.max(gauge.maxByTenant.get(tenant) ?? 0, mine));
      gauge.log.push(`${tenant}:${ctx.runId}:${step}`);
      await new Promise((resolve) => setTimeout(resolve, toolMs));
      gauge.byTenant.set(tenant, gauge.byTenant.get(tenant)! - 1);
      gauge.now--;
      return 'recorded';
    },
  });
  const agent = createAgent({ name: 'teller', model: stepsModel(steps), tools: [record], maxSteps: 20, logger: { warn: () => undefined } });
  return { agent, gauge };
}

describe('a worker runs at most its concurrency', () => {
  it('never has more than 2 segments at once with concurrency 2, and runs them side by side', async () => {
    const db = await database();
    const { agent, gauge } = gaugedAgent();
    await db.worker({ agents: [agent], concurrency: 2, id: 'w1' });
    const client = await db.client();
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => client.start('teller', `hello ${i}`)));
    const reports = await Promise.all(ids.map((id) => client.wait(id, { timeoutMs: 30_000 })));
    expect(reports.map((r) => r.status)).toEqual(Array(8).fill('completed'));
    expect(gauge.max).toBe(2);
  }, 40_000);
});

describe('an agent limit holds across workers', () => {
  it('never runs more than the limit over two workers, and the jobs it defers all complete', async () => {
    const db = await database();
    const { agent, gauge } = gaugedAgent();
    const workers = [
      await db.worker({ agents: [agent], concurrency: 4, limits: { teller: { concurrency: 2 } }, id: 'w1' }),
      await db.worker({ agents: [agent], concurrency: 4, limits: { teller: { concurrency: 2 } }, id: 'w2' }),
    ];
    const client = await db.client();
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => client.start('teller', `hello ${i}`)));
    const reports = await Promise.all(ids.map((id) => client.wait(id, { timeoutMs: 40_000 })));
    expect(reports.map((r) => r.status)).toEqual(Array(10).fill('completed'));
    expect(gauge.max).toBeLessThanOrEqual(2);
    expect(workers.reduce((sum, w) => sum + w.counts.deferred, 0)).toBeGreaterThan(0);
    expect(workers.reduce((sum, w) => sum + w.counts.segments, 0)).toBe(10);
  }, 50_000);
});

describe("a tenant's share of an agent's slots", () => {
  it("starts another tenant's run while one tenant's queue is long, that tenant holding one slot at most", async () => {
    const db = await database();
    const { agent, gauge } = gaugedAgent(3, 80);
    const client = await db.client();
    // Tenant A's ten runs are queued before B's one, before any worker is up.
    const a: string[] = [];
    for (let i = 0; i < 10; i++) a.push(await client.start('teller', `a ${i}`, { tenant: 'A', metadata: { tenant: 'A' } }));
    const b = await client.start('teller', 'b', { tenant: 'B', metadata: { tenant: 'B' } });
    await db.worker({ agents: [agent], concurrency: 4, limits: { teller: { concurrency: 2, perTenant: 1 } }, id: 'w1' });
    const reports = await Promise.all([...a, b].map((id) => client.wait(id, { timeoutMs: 60_000 })));
    expect(reports.map((r) => r.status)).toEqual(Array(11).fill('completed'));
    expect(gauge.maxByTenant.get('A')).toBe(1);
    // B's first step came before A's third run took its first: B did not wait for A's queue.
    const firstOfB = gauge.log.findIndex((entry) => entry.startsWith('B:'));
    const aRunsBeforeB = new Set(gauge.log.slice(0, firstOfB).filter((entry) => entry.startsWith('A:')).map((entry) => entry.split(':')[1]));
    expect(aRunsBeforeB.size).toBeLessThanOrEqual(2);
  }, 70_000);
});

describe('one run, one writer', () => {
  it('refuses a duplicate start job for a run under way: its tools run once, its dispatch row and slot untouched', async () => {
    const db = await database();
    const worker = await db.worker({ agents: [workerAgent(db.pool, { steps: 4, toolMs: 150 })], concurrency: 4, limits: { teller: { concurrency: 1 } }, id: 'w1' });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    await db.until(async () => (await db.effects(runId)).length >= 1, 'the first effect');
    const before = await db.pool.query('SELECT state, worker, attempts, version FROM koagent_dispatch WHERE run_id = $1', [runId]);

    // The same start again, as a queue that delivered a job twice would.
    const queue = QueueDb.open({ connectionString: db.url }, 'test');
    const boss = await queue.boss({ supervise: false, schedule: false });
    try {
      await queue.tx((tx) => sendJob(tx, boss, queueName('teller'), { kind: 'start', runId, agent: 'teller' }, {}));
      await db.until(async () => worker.counts.refused > 0, 'the duplicate to be refused');
    } finally {
      await boss.stop({ graceful: false, close: false });
      await queue.close();
    }
    const during = await db.pool.query('SELECT state, worker, attempts, version FROM koagent_dispatch WHERE run_id = $1', [runId]);
    expect(during.rows[0]).toEqual(before.rows[0]);
    // The run still holds its slot: a second run waits for it (the limit is one).
    const { rows: slots } = await db.pool.query('SELECT run_id FROM koagent_slots');
    expect(slots.map((s) => s.run_id)).toEqual([runId]);

    expect((await client.wait(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const effects = await db.effects(runId);
    expect(effects).toHaveLength(4);
    expect(effects.every((e) => e.executions === 1)).toBe(true);
    expect(worker.counts.segments).toBe(1);
  }, 40_000);
});
