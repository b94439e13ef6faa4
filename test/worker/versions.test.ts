// Spec of versioned deploys: old and new workers side by side, runs finishing on the version
// they started on (resumes included), runs moved to a new version on purpose, draining workers.
import { describe, expect, it } from 'vitest';
import { workerAgent } from '../fixtures/worker-agents.js';
import { useDatabase } from '../support/worker-harness.js';

const database = useDatabase();
const quiet = { warn: () => undefined };

describe('versions side by side', () => {
  it('finishes each run on the version it started on, its resume included', async () => {
    const db = await database();
    const v1 = await db.worker({ agents: [workerAgent(db.pool, { steps: 2, toolMs: 20 })], version: '1', id: 'v1', logger: quiet });
    const v2 = await db.worker({ agents: [workerAgent(db.pool, { steps: 2, toolMs: 20 })], version: '2', id: 'v2', logger: quiet });
    const client = await db.client();
    const pinned = [
      ...(await Promise.all([0, 1, 2].map((i) => client.start('teller', `refund ${i}`, { version: '1' })))),
      ...(await Promise.all([0, 1, 2].map((i) => client.start('teller', `refund ${i}`, { version: '2' })))),
    ];
    const free = await Promise.all([0, 1, 2, 3].map((i) => client.start('teller', `refund free ${i}`)));
    for (const runId of [...pinned, ...free]) {
      expect((await client.wait(runId, { timeoutMs: 20_000 })).status).toBe('suspended');
      await client.answer(runId, { call_refund: true });
    }
    for (const runId of [...pinned, ...free]) expect((await client.wait(runId, { timeoutMs: 20_000 })).status).toBe('completed');

    for (const [i, runId] of [...pinned, ...free].entries()) {
      const report = (await client.status(runId))!;
      const effects = await db.effects(runId);
      expect(effects.map((e) => e.tool).sort()).toEqual(['record', 'record', 'refund']);
      // Every step of the run, before and after its approval, on one version: its own.
      expect(new Set(effects.map((e) => e.version))).toEqual(new Set([report.version]));
      if (i < 3) expect(report.version).toBe('1');
      else if (i < 6) expect(report.version).toBe('2');
    }
    expect(v1.counts.segments).toBeGreaterThanOrEqual(6);
    expect(v2.counts.segments).toBeGreaterThanOrEqual(6);
  }, 60_000);

  it('moves a suspended run to version 2 on purpose: answered, it completes there', async () => {
    const db = await database();
    const v1 = await db.worker({ agents: [workerAgent(db.pool, { steps: 2 })], version: '1', id: 'v1', logger: quiet });
    const client = await db.client();
    const runId = await client.start('teller', 'refund please');
    expect((await client.wait(runId, { timeoutMs: 20_000 })).status).toBe('suspended');
    await v1.stop();
    const v2 = await db.worker({ agents: [workerAgent(db.pool, { steps: 2 })], version: '2', id: 'v2', logger: quiet });

    expect(await client.moveRuns({ agent: 'teller', from: '1', to: '2' })).toBe(1);
    await client.answer(runId, { call_refund: true });
    const report = await client.wait(runId, { timeoutMs: 20_000 });
    expect(report.status).toBe('completed');
    expect(report.version).toBe('2');
    expect(v2.counts.segments).toBe(1);
    expect(new Set((await db.effects(runId)).map((e) => e.version))).toEqual(new Set(['2']));
  }, 40_000);

  it('a draining worker (takesNewRuns: false) takes no new run, but finishes its version’s', async () => {
    const db = await database();
    const draining = await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], version: '1', takesNewRuns: false, id: 'v1', logger: quiet });
    const fresh = await db.worker({ agents: [workerAgent(db.pool, { steps: 1 })], version: '2', id: 'v2', logger: quiet });
    const client = await db.client();
    const newRuns = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => client.start('teller', `hello ${i}`)));
    const old = await client.start('teller', 'hello old', { version: '1' });
    for (const runId of newRuns) expect(await client.wait(runId, { timeoutMs: 20_000 })).toMatchObject({ status: 'completed', version: '2' });
    expect(await client.wait(old, { timeoutMs: 20_000 })).toMatchObject({ status: 'completed', version: '1' });
    expect(draining.counts.segments).toBe(1);
    expect(fresh.counts.segments).toBe(6);
  }, 40_000);
});
