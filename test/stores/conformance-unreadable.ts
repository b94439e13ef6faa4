// What the SQL stores do with rows that cannot be read — a value that is not JSON, a transcript
// row gone missing — as an operator's mistake or a damaged disk leaves them: the run is named,
// with its table and row; it never runs from a transcript with a hole; and recovery quarantines
// it and goes on with the agent's other runs. Run on SQLite and PostgreSQL, damaging the rows
// with SQL on the database itself.
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, KoagentError, type RunState } from '../../src/index.js';
import type { Clock, RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import { storedState } from '../support/durable.js';
import { manualClock } from '../support/clock.js';

/** A new store, and a way to run SQL on its database behind its back. */
export interface DamageableStore {
  store: RunStore;
  /** Run one statement (`$1`, `$2` … placeholders) on the store's database. */
  exec(text: string, ...params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

async function rejection(promise: Promise<unknown>): Promise<KoagentError> {
  const error = await promise.then(() => expect.fail('it did not reject'), (e: unknown) => e);
  expect(KoagentError.is(error)).toBe(true);
  return error as KoagentError;
}

export function unreadableConformance(kind: string, make: (options: { leaseMs?: number; clock?: Clock }) => Promise<DamageableStore>): void {
  describe(`${kind} store: rows that cannot be read`, () => {
    const model = () => mockModel(['done', 'done']);

    /** A run of `agent` whose worker died before its first model call, its lease long expired. */
    async function died(store: RunStore, adopt: (state: RunState) => RunState, runId: string): Promise<void> {
      const state = adopt(storedState(runId, `s_${runId}`, 'teller', [{ role: 'system', content: 'Be careful.' }, { role: 'user', content: 'Pay Alice' }]));
      expect(await store.createRun({ state, owner: 'dead-worker' })).toHaveProperty('lease');
    }

    it('stores a run whose transcript row is not JSON failed (corrupt_run), naming the row, and recovers the agent\'s other runs', async () => {
      const clock = manualClock();
      const { store, exec, close } = await make({ leaseMs: 1000, clock });
      const warnings: string[] = [];
      const agent = createAgent({ name: 'teller', model: model(), store, logger: { warn: (message: string) => void warnings.push(message) } });
      const adopt = (state: RunState) => agent.runs.adoptState(state);
      await died(store, adopt, 'run_bad');
      await died(store, adopt, 'run_good');
      // Cut short, as a write torn by hand or by a damaged disk would leave it.
      await exec(`UPDATE koagent_messages SET message = '{"role":' WHERE run_id = $1 AND seq = 1`, 'run_bad');
      await clock.advance(1001);
      const loaded = await rejection(store.loadRun('run_bad'));
      expect(loaded.code).toBe('corrupt_run');
      expect(loaded.message).toMatch(/^run run_bad cannot be read: table koagent_messages, row \(run_id 'run_bad', seq 1\), column message is not JSON \(.+\)/);

      const recovered = await agent.runs.recover();
      expect(recovered.map((r) => [r.runId, r.result?.status ?? r.error?.code])).toEqual([['run_bad', 'corrupt_run'], ['run_good', 'completed']]);
      expect(recovered[0].error!.message).toMatch(/run run_bad cannot be read: table koagent_messages, row \(run_id 'run_bad', seq 1\), column message is not JSON .*Recovery stored the run failed and went on/);
      const [bad] = await store.listRuns({ agentName: 'teller', status: 'failed' });
      expect(bad).toMatchObject({ runId: 'run_bad', status: 'failed', leaseExpiresAt: 0, error: { code: 'corrupt_run' } });
      expect(warnings).toEqual([expect.stringMatching(/^koagent: agent.runs.recover\(\): run run_bad cannot be read: /)]);
      // Quarantined: no later recovery meets it again.
      expect(await agent.runs.recover()).toEqual([]);
      // And finished, as any failed run: retention deletes it with the others once it is old enough.
      await clock.advance(5);
      expect(await store.prune({ olderThanMs: 1 })).toBe(2);
      expect(await store.listRuns({ agentName: 'teller' })).toEqual([]);
      await close();
    });

    it('refuses a run whose transcript lacks a row its run row counts, before anything runs', async () => {
      const { store, exec, close } = await make({});
      const executed: string[] = [];
      const add = defineTool({ name: 'add', description: 'Add', execute: () => 3 });
      const pay = defineTool({ name: 'pay', description: 'Pay', needsApproval: true, execute: () => (executed.push('pay'), 'paid') });
      const script = mockModel([{ toolCalls: [{ id: 'c1', name: 'add', args: {} }] }, { toolCalls: [{ id: 'p1', name: 'pay', args: {} }] }, 'done']);
      const agent = createAgent({ name: 'teller', model: script, tools: [add, pay], store });
      const paused = await agent.run('Pay Alice');
      expect(paused.status).toBe('suspended');
      expect(paused.messages).toHaveLength(4);
      // The result of c1 gone: the run row still counts 4 messages, 3 are stored.
      await exec('DELETE FROM koagent_messages WHERE run_id = $1 AND seq = 2', paused.runId);
      const refused = await rejection(agent.resume(paused.runId, { p1: true }));
      expect(refused.code).toBe('corrupt_run');
      expect(refused.message).toBe(`run ${paused.runId} cannot be read: its row in table koagent_runs counts 4 messages, but table koagent_messages has no row (run_id '${paused.runId}', seq 2) of its transcript (or of the session's run it continues); repair or delete that row (or delete the run: store.deleteRun('${paused.runId}'))`);
      await exec('DELETE FROM koagent_messages WHERE run_id = $1 AND seq = 3', paused.runId);
      expect((await rejection(store.loadRun(paused.runId))).message).toMatch(/counts 4 messages, but table koagent_messages holds 2 of them \(seq 2 on is missing\)/);
      expect(executed).toEqual([]);
      await close();
    });

    it("names the run row's column that is not JSON, and still lists the run", async () => {
      const { store, exec, close } = await make({});
      await store.createRun({ state: storedState('run_cut', 's', 'teller', [{ role: 'user', content: 'hi' }]), owner: 'w' });
      await store.createRun({ state: storedState('run_fine', 's2', 'teller', [{ role: 'user', content: 'hi' }]), owner: 'w' });
      await exec(`UPDATE koagent_runs SET pending = '[{"tool' WHERE run_id = $1`, 'run_cut');
      expect((await rejection(store.loadRun('run_cut'))).message).toMatch(/^run run_cut cannot be read: table koagent_runs, row \(run_id 'run_cut'\), column pending is not JSON/);
      const listed = await store.listRuns({ agentName: 'teller' });
      expect(listed.map((r) => r.runId).sort()).toEqual(['run_cut', 'run_fine']);
      expect(listed.find((r) => r.runId === 'run_cut')).toMatchObject({ pendingApprovals: [], error: { code: 'corrupt_run', message: expect.stringMatching(/column pending is not JSON/) } });
      await close();
    });
  });
}
