// Runs still under lease: recover() takes a run only once its dead worker's lease expired, so it
// says which runs it is waiting on (recoverable()) and can wait for them (recover({ wait: true })),
// without ever taking a run whose worker is alive and renewing its lease.
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, memoryStore, type ModelProvider } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import { gate } from '../support/core.js';
import { mortal } from '../support/durable.js';
import { manualClock } from '../support/clock.js';

const add = defineTool({ name: 'add', description: 'Add', execute: () => 3 });

/** Asks for `add`, then (its worker dead) never answers again. */
function dyingModel(die: () => void): ModelProvider {
  return {
    async generate(request) {
      if (request.messages.some((m) => m.role === 'tool')) return (die(), new Promise(() => undefined));
      return { message: { role: 'assistant', content: '', toolCalls: [{ id: 'a1', name: 'add', args: {} }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' };
    },
  };
}

/** A run of agent `teller` in `store` whose worker died after its tool call: its id. */
async function abandon(store: RunStore): Promise<string> {
  const worker = mortal(store);
  let runId: string | undefined;
  void createAgent({ name: 'teller', model: dyingModel(() => worker.die()), tools: [add], store: worker.store, onEvent: (e) => void (runId ??= e.runId) }).run('Add');
  await worker.died;
  return runId!;
}

const recoverer = (store: RunStore) => createAgent({ name: 'teller', model: mockModel(['Three.']), tools: [add], store });

describe('agent.runs.recoverable(): the runs recover() is waiting on', () => {
  it("lists a dead worker's run with the time its lease runs out, by the store's clock; recover() takes it from then", async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const runId = await abandon(store);
    const agent = recoverer(store);
    expect(await agent.runs.recover()).toEqual([]);
    const [leased] = await agent.runs.recoverable();
    const [summary] = await store.listRuns({ agentName: 'teller' });
    expect(leased).toEqual({ runId, sessionId: summary.sessionId, claimableAt: summary.leaseExpiresAt });
    expect(leased.claimableAt).toBeGreaterThan(clock.now());
    await clock.advance(1001);
    const [recovered] = await agent.runs.recover();
    expect(recovered).toMatchObject({ runId, result: { status: 'completed', text: 'Three.' } });
    expect(await agent.runs.recoverable()).toEqual([]);
  });

  it('needs a store, and refuses what is not an option', async () => {
    await expect(createAgent({ model: mockModel([]) }).runs.recoverable()).rejects.toThrow(/agent\.runs\.recoverable\(\) needs a run store/);
    await expect(recoverer(memoryStore()).runs.recoverable({ limt: 3 } as never)).rejects.toThrow('agent.runs.recoverable(options): limt is not an option; did you mean `limit`?');
  });
});

describe('agent.runs.recover({ signal })', () => {
  it('claims no further run once its signal aborts: the run in flight ends aborted, the others stay claimable', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const runs = [await abandon(store), await abandon(store)];
    await clock.advance(1001);
    const controller = new AbortController();
    const recovered = await recoverer(store).runs.recover({ signal: controller.signal, onEvent: (e) => void (e.type === 'run.start' && controller.abort('shutting down')) });
    expect(recovered).toEqual([expect.objectContaining({ result: expect.objectContaining({ stopReason: 'aborted' }) })]);
    expect((await recoverer(store).runs.recoverable()).map((run) => run.runId)).toEqual(runs.filter((id) => id !== recovered[0].runId));
  });
});

describe('agent.runs.recover({ wait: true })', () => {
  it("waits for a dead worker's lease to run out, then finishes the run", async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const runId = await abandon(store);
    const agent = recoverer(store);
    expect((await agent.runs.recoverable()).map((run) => run.runId)).toEqual([runId]);
    const paused = clock.nextTimer();
    let over = false;
    const recovering = agent.runs.recover({ wait: true }).finally(() => (over = true));
    // It waits until the lease runs out (and a little more, as the store's clock may run ahead of this host's).
    expect(await paused).toBe(1000 + 50);
    await clock.advance(1049);
    expect(over).toBe(false);
    await clock.advance(1);
    expect(await recovering).toEqual([expect.objectContaining({ runId, result: expect.objectContaining({ status: 'completed', text: 'Three.' }) })]);
  });

  it('does not wait for a run whose worker is alive: once its lease is renewed, recover resolves without it', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const held = gate();
    const slow = defineTool({ name: 'add', description: 'Add', execute: async () => (await held.promise, 3) });
    const started = gate();
    const alive = createAgent({ name: 'teller', model: mockModel([{ toolCalls: [{ id: 'a1', name: 'add', args: {} }] }, 'Three.']), tools: [slow], store, onEvent: (e) => void (e.type === 'tool.start' && started.open()) });
    const running = alive.run('Add');
    await started.promise;
    const paused = clock.nextTimer();
    const recovering = recoverer(store).runs.recover({ wait: true });
    await paused;
    // The live worker renews its lease every third of it, so when the wait is over the lease has moved on.
    await clock.advance(1050);
    expect(await recovering).toEqual([]);
    held.open();
    expect(await running).toMatchObject({ status: 'completed', text: 'Three.' });
  });

  it('stops waiting when its signal aborts, and claims nothing after', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 60_000, clock });
    await abandon(store);
    const controller = new AbortController();
    const paused = clock.nextTimer();
    const waiting = recoverer(store).runs.recover({ wait: true, signal: controller.signal });
    await paused;
    controller.abort('shutting down');
    expect(await waiting).toEqual([]);
    expect((await store.listRuns({ agentName: 'teller' }))[0].status).toBe('running');
  });
});

describe('agent.runs.recover({ runId })', () => {
  it('continues only the run named, of two whose leases expired; the other stays to be recovered', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const [older, named] = [await abandon(store), await abandon(store)];
    await clock.advance(1001);
    const recovered = await recoverer(store).runs.recover({ runId: named });
    expect(recovered).toEqual([expect.objectContaining({ runId: named, result: expect.objectContaining({ status: 'completed', text: 'Three.' }) })]);
    expect((await store.loadRun(older))!.status).toBe('running');
    expect((await recoverer(store).runs.recoverable()).map((run) => run.runId)).toEqual([older]);
  });

  it('takes nothing while the named run is leased, nor a run it does not know', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const runId = await abandon(store);
    expect(await recoverer(store).runs.recover({ runId })).toEqual([]);
    await clock.advance(1001);
    expect(await recoverer(store).runs.recover({ runId: 'run_nobody' })).toEqual([]);
    expect((await store.loadRun(runId))!.status).toBe('running');
  });
});

describe('agent.runs: run administration, apart from the everyday methods', () => {
  it('holds recover, recoverable, pendingApprovals, adopt and adoptState; the agent itself has none of them', () => {
    const agent = recoverer(memoryStore());
    for (const method of ['recover', 'recoverable', 'pendingApprovals', 'adopt', 'adoptState'] as const) expect(typeof agent.runs[method]).toBe('function');
    for (const gone of ['recover', 'recoverable', 'pendingApprovals', 'adoptRuns', 'adoptState']) expect(gone in agent).toBe(false);
  });

  it('recover() gives each run it took with a status: completed or suspended with its result, failed with its error', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const finished = await abandon(store);
    await clock.advance(1001);
    const [recovered] = await recoverer(store).runs.recover();
    expect(recovered.status).toBe('completed');
    if (recovered.status === 'failed') throw new Error('the run should have completed');
    expect(recovered).toMatchObject({ runId: finished, status: 'completed', result: { text: 'Three.' } });
    expect('error' in recovered).toBe(false);

    const refused = await abandon(store);
    await clock.advance(1001);
    const otherTools = createAgent({ name: 'teller', model: mockModel(['Three.']), tools: [defineTool({ name: 'sum', description: 'Sum', execute: () => 3 })], store });
    const [failed] = await otherTools.runs.recover();
    expect(failed).toMatchObject({ runId: refused, status: 'failed', error: { code: 'invalid_resume' } });
    expect('result' in failed).toBe(false);
  });
});
