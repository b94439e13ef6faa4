// Spec of failures: a dead worker's run taken over once its lease expires (no recover() call),
// retried model failures, the dead letters and their retry, failures not retried, crash loops,
// and runs whose job was lost, found and repaired as the manual says (docs/workers.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAgent, type ModelProvider } from '../../src/index.js';
import { postgresStore } from '../../src/postgres.js';
import { mortal } from '../support/durable.js';
import { stepsModel, workerAgent } from '../fixtures/worker-agents.js';
import { bury, useDatabase } from '../support/worker-harness.js';

const database = useDatabase();

/** stepsModel(2), failing while `failing()` says so (each failure counted). */
function flakyModel(failing: () => boolean): { model: ModelProvider; failures: () => number } {
  const inner = stepsModel(2);
  let failures = 0;
  const model: ModelProvider = {
    name: 'flaky',
    generate: async (request) => {
      if (failing()) {
        failures++;
        throw new Error('the provider is down');
      }
      return inner.generate(request);
    },
  };
  return { model, failures: () => failures };
}

const quiet = { warn: () => undefined };

/** The SQL of the manual's "Stuck runs": the query that finds runs whose job was lost, then the statement that marks one dead. */
function stuckRunsSql(): { query: string; markDead: string } {
  const page = readFileSync(new URL('../../docs/workers.md', import.meta.url), 'utf8');
  const start = page.indexOf('### Stuck runs');
  const section = page.slice(start, page.indexOf('\n### ', start));
  const [query, markDead] = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1]);
  return { query, markDead };
}

/** Lose the run's job (pg-boss archived it, someone deleted it), as long ago as the query looks. */
async function loseJob(db: Awaited<ReturnType<typeof database>>, runId: string): Promise<void> {
  await db.pool.query("DELETE FROM pgboss.job WHERE data->>'runId' = $1", [runId]);
  await db.pool.query('UPDATE koagent_dispatch SET updated_at = updated_at - 3600000 WHERE run_id = $1', [runId]);
}

async function lastWorker(db: Awaited<ReturnType<typeof database>>, runId: string): Promise<string | null> {
  return (await db.pool.query('SELECT worker FROM koagent_dispatch WHERE run_id = $1', [runId])).rows[0].worker;
}

describe('a dead worker’s run is taken over', () => {
  it('continues on another worker once the SIGKILLed worker’s lease expires, each step’s effect once', async () => {
    const db = await database();
    const child = await db.child({ id: 'doomed', steps: 6, toolMs: 150 });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    await db.until(async () => (await db.effects(runId)).length >= 2, 'two effects of the doomed worker');
    child.process.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');

    const heir = await db.worker({ agents: [workerAgent(db.pool, { steps: 6, toolMs: 150 })], id: 'heir', logger: quiet });
    const report = await client.wait(runId, { timeoutMs: 30_000 });
    expect(report.status).toBe('completed');
    expect(heir.counts.recovered).toBe(1);
    const effects = await db.effects(runId);
    expect(effects.filter((e) => e.tool === 'record')).toHaveLength(6);
    // Only the call the kill interrupted may have run twice.
    expect(effects.filter((e) => e.executions > 1).length).toBeLessThanOrEqual(1);
    expect(effects.every((e) => e.executions <= 2)).toBe(true);
  }, 60_000);
});

describe('retried failures and the dead letters', () => {
  it('retries a run whose model failed twice, and it completes', async () => {
    const db = await database();
    let calls = 0;
    const { model, failures } = flakyModel(() => ++calls <= 2);
    const worker = await db.worker({ agents: [createAgent({ name: 'teller', model, logger: quiet })], id: 'w1', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    const report = await client.wait(runId, { timeoutMs: 20_000 });
    expect(report.status).toBe('completed');
    expect(failures()).toBe(2);
    // Three segments: two that failed with the model's error, one that ended well.
    expect(worker.counts.segments).toBe(3);
    const { rows } = await db.pool.query("SELECT event FROM koagent_run_events WHERE run_id = $1 AND event LIKE '%\"run.end\"%' ORDER BY seq", [runId]);
    expect(rows.map((r) => JSON.parse(r.event).status)).toEqual(['failed', 'failed', 'completed']);
  }, 30_000);

  it('sends a run that always fails to the dead letters after maxAttempts, and client.retry() brings it back', async () => {
    const db = await database();
    let down = true;
    const { model, failures } = flakyModel(() => down);
    const worker = await db.worker({ agents: [createAgent({ name: 'teller', model, logger: quiet })], maxAttempts: 3, id: 'w1', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    const dead = await client.wait(runId, { timeoutMs: 20_000 });
    expect(dead.status).toBe('dead');
    expect(dead.error?.code).toBe('model_error');
    expect(dead.error?.message).toContain('the provider is down');
    expect(failures()).toBe(3);
    expect(worker.counts.dead).toBe(1);
    expect((await client.deadLetters()).map((r) => r.runId)).toEqual([runId]);
    expect(await lastWorker(db, runId)).toBe('w1');

    down = false;
    await client.retry(runId);
    expect((await client.wait(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(await client.deadLetters()).toEqual([]);
  }, 40_000);

  it('settles a failure retryOn refuses as failed at once', async () => {
    const db = await database();
    const { model, failures } = flakyModel(() => true);
    const worker = await db.worker({ agents: [createAgent({ name: 'teller', model, logger: quiet })], retryOn: () => false, id: 'w1', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    const report = await client.wait(runId, { timeoutMs: 20_000 });
    expect(report.status).toBe('failed');
    expect(report.error?.code).toBe('model_error');
    expect(failures()).toBe(1);
    expect(worker.counts.segments).toBe(1);
    expect(await client.deadLetters()).toEqual([]);
  }, 30_000);

  it('stops a crash loop: a run whose segments kept dying is not taken over again but dead, code dead_letter', async () => {
    const db = await database();
    // The first worker "dies" in the run's first tool call: its store never answers again.
    const store = await postgresStore({ connectionString: db.url, leaseMs: 1000 });
    const doomed = mortal(store);
    const first = await db.worker({ agents: [workerAgent(db.pool, { steps: 3, toolMs: 300 })], store: doomed.store, id: 'doomed', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'hello');
    await db.until(async () => (await db.effects(runId)).length >= 1, 'the first effect');
    doomed.die();
    expect((await first.stop({ deadlineMs: 0 })).unfinished).toEqual([runId]);

    const heir = await db.worker({ agents: [workerAgent(db.pool, { steps: 3, toolMs: 300 })], maxAttempts: 1, id: 'heir', logger: quiet });
    const report = await client.wait(runId, { timeoutMs: 20_000 });
    expect(report.status).toBe('dead');
    expect(report.error?.code).toBe('dead_letter');
    expect(heir.counts.recovered).toBe(0);
    expect(heir.counts.dead).toBe(1);
    await bury(first);
    await store.close();
  }, 40_000);
});

describe('a run whose job was lost, found and repaired as the manual says', () => {
  it('starts again from what its row kept when its start job was lost: marked dead, retried, it completes', async () => {
    const db = await database();
    const client = await db.client();
    const runId = await client.start('teller', 'hello', { tenant: 'acme' });
    await loseJob(db, runId);
    const { query, markDead } = stuckRunsSql();
    expect((await db.pool.query(query)).rows).toEqual([{ run_id: runId, agent_name: 'teller', version: null, state: 'queued', attempts: 0, worker: null }]);

    await db.pool.query(markDead, [runId]);
    await client.retry(runId);
    await db.worker({ agents: [workerAgent(db.pool, { steps: 2 })], id: 'w1', logger: quiet });
    expect(await client.wait(runId, { timeoutMs: 20_000 })).toMatchObject({ status: 'completed', tenant: 'acme', text: 'Done after 2 steps.' });
    expect((await db.effects(runId)).map((e) => e.tool)).toEqual(['record', 'record']);
    expect((await db.pool.query(query)).rows).toEqual([]);
  }, 30_000);

  it('names the worker that last ran a run, on its settled rows and in the stuck-run query; an answer whose job was lost is asked again', async () => {
    const db = await database();
    const first = await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], id: 'w1', logger: quiet });
    const client = await db.client();
    const done = await client.start('teller', 'hello');
    const asking = await client.start('teller', 'please refund');
    expect(await client.wait(done, { timeoutMs: 20_000 })).toMatchObject({ status: 'completed' });
    expect(await client.wait(asking, { timeoutMs: 20_000 })).toMatchObject({ status: 'suspended' });
    expect([await lastWorker(db, done), await lastWorker(db, asking)]).toEqual(['w1', 'w1']);

    // The answer's resume job is lost before any worker takes it.
    await first.stop();
    await client.answer(asking, { call_refund: true });
    await loseJob(db, asking);
    const { query, markDead } = stuckRunsSql();
    expect((await db.pool.query(query)).rows).toEqual([{ run_id: asking, agent_name: 'teller', version: '1', state: 'queued', attempts: 0, worker: 'w1' }]);

    await db.pool.query(markDead, [asking]);
    await client.retry(asking);
    await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], id: 'w2', logger: quiet });
    // The decisions were in the lost job: the run waits for them again.
    expect(await client.wait(asking, { timeoutMs: 20_000 })).toMatchObject({ status: 'suspended', pendingApprovals: [{ toolCallId: 'call_refund' }] });
    expect(await lastWorker(db, asking)).toBe('w2');
    await client.answer(asking, { call_refund: true });
    expect(await client.wait(asking, { timeoutMs: 20_000 })).toMatchObject({ status: 'completed' });
    expect((await db.effects(asking)).map((e) => e.tool).sort()).toEqual(['record', 'refund']);
  }, 40_000);
});
