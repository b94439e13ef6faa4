// agent.runs.adopt: after a deploy that changed an agent's tools, its in-flight runs are taken
// over on purpose, many at once, on a real SQLite file: the runs recovery refused go back to
// recovery, the suspended ones wait for their approvals, and this version's runs are left alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool } from '../../src/index.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { mortal } from '../support/durable.js';
import { manualClock } from '../support/clock.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-adopt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const quiet = { warn: () => undefined };

describe('agent.runs.adopt', () => {
  it("takes over the old version's runs after a deploy: recovery continues the refused ones, the suspended ones wait for their approvals", async () => {
    const clock = manualClock();
    const store = sqliteStore({ path: join(dir, 'deploy.db'), leaseMs: 1000, clock });
    const effects: string[] = [];
    const script = () => mockModel([{ toolCalls: [{ id: 'c1', name: 'lookup', args: {} }] }, { toolCalls: [{ id: 'p1', name: 'pay', args: {} }] }, 'Paid.'], { resumable: true });
    const lookup = defineTool({ name: 'lookup', description: 'Look up', idempotent: true, execute: () => (effects.push('lookup'), 'found') });
    const pay = defineTool({ name: 'pay', description: 'Pay', needsApproval: true, execute: () => (effects.push('pay'), 'paid') });
    // Version 1: one run waits for approval, another's worker dies in its first tool call.
    const v1 = createAgent({ name: 'teller', model: script(), tools: [lookup, pay], store, logger: quiet });
    const waiting = await v1.run('Pay Alice');
    expect(waiting.status).toBe('suspended');
    const dying = mortal(store);
    const dyingLookup = defineTool({ name: 'lookup', description: 'Look up', idempotent: true, execute: () => (dying.die(), new Promise(() => undefined)) });
    void createAgent({ name: 'teller', model: script(), tools: [dyingLookup, pay], store: dying.store, logger: quiet }).run('Pay Bob');
    await dying.died;
    await clock.advance(1001);

    // Version 2 has one more tool: the old runs are not its own.
    const refund = defineTool({ name: 'refund', description: 'Refund', execute: () => 'refunded' });
    const v2 = createAgent({ name: 'teller', model: script(), tools: [lookup, pay, refund], store, logger: quiet });
    const [refused] = await v2.runs.recover();
    expect(refused.error!.code).toBe('invalid_resume');
    await expect(v2.resume(waiting.runId, { p1: true })).rejects.toThrow(/belongs to another agent named "teller" \(other tools/);

    const adopted = await v2.runs.adopt();
    expect(adopted.sort((a, b) => a.runId.localeCompare(b.runId))).toEqual([
      { runId: refused.runId, status: 'running' },
      { runId: waiting.runId, status: 'suspended' },
    ].sort((a, b) => a.runId.localeCompare(b.runId)));
    // Nothing of this version is adopted again.
    expect(await v2.runs.adopt()).toEqual([]);

    const [recovered] = await v2.runs.recover();
    expect(recovered).toMatchObject({ runId: refused.runId, result: { status: 'suspended' } });
    expect((await v2.resume(refused.runId, { p1: true })).output).toBe('Paid.');
    expect((await v2.resume(waiting.runId, { p1: true })).output).toBe('Paid.');
    expect(effects).toEqual(['lookup', 'lookup', 'pay', 'pay']);
    expect((await store.loadRun(waiting.runId))!.toolsFingerprint).not.toBe(waiting.state.toolsFingerprint);
    await store.close();
  });

  it('adopts by filter: another name renames the runs, a status or session narrows them; a failed run stays failed for resume to retry', async () => {
    const store = sqliteStore({ path: join(dir, 'filter.db') });
    const old = createAgent({ name: 'teller-old', model: mockModel([{ error: 'overloaded' }, { error: 'overloaded' }]), store, logger: quiet });
    const failed = await old.run('Hi', { sessionId: 'kept' }).then(() => expect.fail('it did not fail'), (error: unknown) => error as { runId: string });
    await old.run('Hi', { sessionId: 'other' }).catch(() => undefined);
    const renamed = createAgent({ name: 'teller', model: mockModel(['Hello.']), store, logger: quiet });
    expect(await renamed.runs.adopt({ filter: { agentName: 'teller-old', status: 'suspended' } })).toEqual([]);
    expect(await renamed.runs.adopt({ filter: { agentName: 'teller-old', sessionId: 'kept' } })).toEqual([{ runId: failed.runId, status: 'failed' }]);
    expect((await store.listRuns({ agentName: 'teller' })).map((r) => r.runId)).toEqual([failed.runId]);
    expect((await renamed.resume(failed.runId)).output).toBe('Hello.');
    await store.close();
  });

  it('refuses bad options, naming them, and needs a store', async () => {
    const store = sqliteStore({ path: join(dir, 'options.db') });
    const agent = createAgent({ name: 'teller', model: mockModel([]), store });
    await expect(agent.runs.adopt({ filter: { status: 'running' as never } })).rejects.toThrow("agent.runs.adopt(options): filter.status must be 'suspended' or 'failed', or an array of them");
    await expect(agent.runs.adopt({ filter: { agent: 'x' } as never })).rejects.toThrow('did you mean `agentName`?');
    await expect(createAgent({ model: mockModel([]) }).runs.adopt()).rejects.toThrow(/agent.runs.adopt\(\) needs a run store/);
    await store.close();
  });
});
