// Durable runs through the agent: checkpoints as the run goes, recovery of a run whose worker
// died (in this process: its store calls stop answering), the interrupted-call policies, and
// the lease that keeps a second worker from writing. Real SIGKILLed processes are in
// test/examples/durable.test.ts and test/stores/chaos.test.ts.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, KoagentError, memoryStore, RunFailedError, type GenerateResult, type Message, type ModelProvider, type ToolContext } from '../../src/index.js';
import type { InterruptPolicy } from '../../src/core/vocabulary/contexts.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import { mortal, overriding } from '../support/durable.js';
import { manualClock } from '../support/clock.js';
import { gate } from '../support/core.js';
import { nextTurn } from '../support/waits.js';

/** A model that reads the transcript: asks to charge 30 until a result came, then reports it. */
function cashier(): ModelProvider {
  return {
    name: 'cashier',
    async generate(request): Promise<GenerateResult> {
      const result = [...request.messages].reverse().find((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
      const usage = { inputTokens: 1, outputTokens: 1 };
      if (result === undefined) return { message: { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'charge', args: { amount: 30 } }] }, usage, finishReason: 'tool_calls' };
      return { message: { role: 'assistant', content: `Result: ${result.content}` }, usage, finishReason: 'stop' };
    },
  };
}

/** Effects outside the store, by idempotency key: what a payment API would remember. */
class Ledger {
  readonly executions: string[] = [];
  readonly charges = new Map<string, number>();
}

function charge(ledger: Ledger, options: { idempotent?: boolean; onInterrupted?: InterruptPolicy; during?: (ctx: ToolContext) => unknown } = {}) {
  return defineTool({
    name: 'charge',
    description: 'Charge the card',
    input: z.object({ amount: z.number() }),
    idempotent: options.idempotent,
    onInterrupted: options.onInterrupted,
    async execute({ amount }, ctx) {
      ledger.executions.push(ctx.idempotencyKey);
      if (!ledger.charges.has(ctx.idempotencyKey)) ledger.charges.set(ctx.idempotencyKey, amount);
      await options.during?.(ctx);
      return { charged: ledger.charges.get(ctx.idempotencyKey) };
    },
  });
}

const teller = (store: RunStore, tool: ReturnType<typeof charge>) => createAgent({ name: 'teller', model: cashier(), tools: [tool], store });

/**
 * A worker that died while asking the model for its second turn (its one call done and stored),
 * and a lease that has since expired: the store holds a run for recovery to continue.
 */
async function diedAfterTheCall(): Promise<{ store: RunStore; ledger: Ledger }> {
  const clock = manualClock();
  const store = memoryStore({ leaseMs: 1000, clock });
  const ledger = new Ledger();
  const a = mortal(store);
  let turns = 0;
  const dying: ModelProvider = { name: 'dying', generate: (request) => (++turns === 2 ? (a.die(), new Promise(() => undefined)) : cashier().generate(request)) };
  void createAgent({ name: 'teller', model: dying, tools: [charge(ledger)], store: a.store }).run('Charge me');
  await a.died;
  await clock.advance(1001);
  return { store, ledger };
}

/**
 * Worker A starts a run and dies where `die` says (during the tool, after its effect); worker B
 * recovers it once A's lease expired. Returns what B got and the effects.
 */
async function crashAndRecover(options: { idempotent?: boolean; onInterrupted?: InterruptPolicy; dieAfterTool?: boolean } = {}) {
  const clock = manualClock();
  const store = memoryStore({ leaseMs: 1000, clock });
  const ledger = new Ledger();
  const a = mortal(store);
  const tool = { idempotent: options.idempotent, onInterrupted: options.onInterrupted };
  void teller(a.store, charge(ledger, { ...tool, during: () => (options.dieAfterTool ? a.die() : (a.die(), new Promise(() => undefined))) })).run('Charge me');
  await a.died;
  const stored = (await store.listRuns())[0];
  expect(stored.status).toBe('running');
  // B cannot take the run while A's lease holds.
  const b = teller(store, charge(ledger, tool));
  expect(await b.runs.recover()).toEqual([]);
  await clock.advance(1001);
  const recovered = await b.runs.recover();
  return { store, ledger, b, recovered, runId: stored.runId };
}

describe('a durable run', () => {
  it('stores the call as running before the tool runs, and done with its result right after', async () => {
    const store = memoryStore();
    const ledger = new Ledger();
    const seen: unknown[] = [];
    const tool = charge(ledger, { during: async (ctx) => seen.push((await store.loadRun(ctx.runId))!.ledger) });
    const result = await teller(store, tool).run('Charge me');
    expect(seen).toEqual([[{ id: 'c1', entry: 'running' }]]);
    const stored = await store.loadRun(result.runId);
    expect(stored!.ledger).toEqual([{ id: 'c1', entry: 'done' }]);
    expect(stored).toEqual(result.state);
  });

  it('does not run the tool when its `running` write fails, and keeps the run at its last checkpoint', async () => {
    const inner = memoryStore({ leaseMs: 1000 });
    let failWrites = false;
    const store = overriding(inner, {
      checkpoint: (...args) => (failWrites ? Promise.reject(new Error('disk full')) : inner.checkpoint(...args)),
      createRun: (...args) => inner.createRun(...args).then((created) => ((failWrites = true), created)),
    });
    const ledger = new Ledger();
    const failure = await teller(store, charge(ledger)).run('Charge me').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RunFailedError);
    expect((failure as RunFailedError).code).toBe('store_error');
    expect((failure as RunFailedError).message).toBe('The run store failed: disk full; the run stays as of its last checkpoint');
    expect(ledger.executions).toEqual([]);
    const [stored] = await inner.listRuns();
    expect(stored).toMatchObject({ status: 'running', steps: 0 });
  });

  it('asks the model again only once the settled call is stored', async () => {
    const inner = memoryStore();
    // Every checkpoint lands a turn of the event loop later, as over a network.
    const store = overriding(inner, { checkpoint: (...args) => nextTurn().then(() => inner.checkpoint(...args)) });
    const seen: unknown[] = [];
    const watching: ModelProvider = {
      name: 'watching',
      async generate(request) {
        const [run] = await inner.listRuns();
        seen.push((await inner.loadRun(run.runId))!.ledger);
        return cashier().generate(request);
      },
    };
    await createAgent({ name: 'teller', model: watching, tools: [charge(new Ledger())], store }).run('Charge me');
    expect(seen).toEqual([[], [{ id: 'c1', entry: 'done' }]]);
  });

  it('rejects its result when the end of the run cannot be stored', async () => {
    const inner = memoryStore();
    const store = overriding(inner, {
      checkpoint: (lease, cp, final) => (final ? Promise.reject(new Error('connection reset')) : inner.checkpoint(lease, cp, final)),
    });
    const failure = await teller(store, charge(new Ledger())).run('Charge me').catch((e: unknown) => e);
    expect((failure as RunFailedError).code).toBe('store_error');
    expect((await inner.listRuns())[0].status).toBe('running');
  });
});

describe('agent.runs.recover()', () => {
  it('continues a run whose worker died after a tool call was done, without running it again', async () => {
    const { store, ledger } = await diedAfterTheCall();
    const [recovered] = await teller(store, charge(ledger)).runs.recover();
    expect(recovered.result).toMatchObject({ status: 'completed', text: 'Result: {"charged":30}' });
    expect(ledger.executions).toHaveLength(1);
    expect(recovered.result!.state.segment).toBe(2);
    expect(await store.loadRun(recovered.runId)).toEqual(recovered.result!.state);
  });

  it("reruns a call found running when its tool is idempotent, with the same idempotency key", async () => {
    const { ledger, recovered, runId } = await crashAndRecover({ idempotent: true });
    expect(recovered).toHaveLength(1);
    expect(recovered[0].result!.text).toBe('Result: {"charged":30}');
    expect(ledger.executions).toEqual([`${runId}:c1`, `${runId}:c1`]);
    expect([...ledger.charges.values()]).toEqual([30]);
  });

  it('tells the model the outcome is unknown for a call found running, by default', async () => {
    const { ledger, recovered, runId } = await crashAndRecover({ dieAfterTool: true });
    expect(ledger.executions).toEqual([`${runId}:c1`]);
    expect(recovered[0].result!.text).toBe(`Result: Error (execution): This call had started when the run was interrupted and may have taken effect; it is not run again (idempotency key ${runId}:c1)`);
  });

  it("asks a human about a call found running when its tool says 'ask', and runs it again only if approved", async () => {
    const { store, ledger, b, recovered, runId } = await crashAndRecover({ onInterrupted: 'ask' });
    expect(recovered[0].result).toMatchObject({ status: 'suspended', stopReason: 'approval' });
    const [waiting] = await b.runs.pendingApprovals();
    expect(waiting.runId).toBe(runId);
    expect(waiting.pendingApprovals).toEqual([{ toolCallId: 'c1', toolName: 'charge', args: { amount: 30 }, reason: `This call had started when the run was interrupted and may have taken effect (idempotency key ${runId}:c1); approve to run it again, deny to tell the model it did not complete` }]);
    expect((await store.loadRun(runId))!.ledger).toEqual([{ id: 'c1', entry: 'pending' }]);
    const approved = await b.resume(runId, { c1: true });
    expect(approved.text).toBe('Result: {"charged":30}');
    expect(ledger.executions).toEqual([`${runId}:c1`, `${runId}:c1`]);
  });

  it("settles a call found running as denied when the human says no", async () => {
    const { b, ledger, runId } = await crashAndRecover({ onInterrupted: 'ask' });
    const denied = await b.resume(runId, { c1: { approved: false, reason: 'Already charged by phone' } });
    expect(denied.text).toBe('Result: Error (denied): Already charged by phone');
    expect(ledger.executions).toHaveLength(1);
  });

  it('checks the arguments of a call it reruns against the bounds, as the stored state holds them', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const ledger = new Ledger();
    const a = mortal(store);
    void teller(a.store, charge(ledger, { idempotent: true, during: () => (a.die(), new Promise(() => undefined)) })).run('Charge me');
    await a.died;
    await clock.advance(1001);
    // A stored state is JSON anyone with access to the store can edit: its arguments are the model's again.
    const edited = overriding(store, {
      claimExpired: async (agentName, owner) => {
        const claimed = await store.claimExpired(agentName, owner);
        const reply = (claimed !== undefined && 'state' in claimed ? claimed.state.messages.at(-1) : undefined) as { toolCalls: { args: Record<string, unknown> }[] } | undefined;
        if (reply !== undefined) reply.toolCalls[0].args = { amount: 30, note: 'x'.repeat(2_000) };
        return claimed;
      },
    });
    const [recovered] = await createAgent({ name: 'teller', model: cashier(), tools: [charge(ledger, { idempotent: true })], store: edited, toolArguments: { maxBytes: 1_000 } }).runs.recover();
    expect(ledger.executions).toHaveLength(1);
    expect(recovered.result!.messages.find((m) => m.role === 'tool')?.metadata?.error).toEqual({ kind: 'validation', message: 'Invalid arguments for charge: the arguments are larger than the 1000 bytes of JSON allowed' });
  });

  it('leaves a run of another version of the agent (other tools) failed, for adoptState to take over on purpose', async () => {
    const { store, ledger } = await diedAfterTheCall();
    // The next version of the agent has one more tool: its calls may mean other things.
    const refund = defineTool({ name: 'refund', description: 'Refund', execute: () => 'refunded' });
    const v2 = createAgent({ name: 'teller', model: cashier(), tools: [charge(ledger), refund], store });
    const [refused] = await v2.runs.recover();
    expect(refused.error).toBeInstanceOf(RunFailedError);
    expect(refused.error!.code).toBe('invalid_resume');
    expect(refused.error!.message).toMatch(/is not continued, and is stored as failed: it was started by a version of this agent with other tools .*agent\.resume\(agent\.runs\.adoptState\(/);
    // Stored as failed: it is not claimed again.
    expect(await v2.runs.recover()).toEqual([]);
    const stored = (await store.loadRun(refused.runId))!;
    expect(stored).toMatchObject({ status: 'failed', error: { code: 'invalid_resume' } });
    await expect(v2.resume(refused.runId)).rejects.toThrow(/belongs to another agent named "teller" \(other tools.*agent\.runs\.adoptState\(state\)/);
    const result = await v2.resume(v2.runs.adoptState(stored));
    expect(result).toMatchObject({ status: 'completed', text: 'Result: {"charged":30}' });
    expect(ledger.executions).toHaveLength(1);
    // The stored run is v2's now.
    expect(await store.loadRun(refused.runId)).toEqual(result.state);
    expect(result.state.toolsFingerprint).not.toBe(stored.toolsFingerprint);
  });

  it('keeps the tools fingerprint of earlier versions of koagent, so the runs they stored still resume', async () => {
    const tools = [
      defineTool({ name: 'lookup', description: 'Look up', input: z.object({ city: z.string(), days: z.number().int().optional() }), execute: () => 'x' }),
      defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: () => 1 }),
    ];
    const agent = createAgent({ name: 'pinned', model: { name: 'm', generate: async (): Promise<GenerateResult> => ({ message: { role: 'assistant', content: 'ok' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' }) }, tools });
    const result = await agent.run('go');
    // The value 0.1 computed for these two tools: a change of how it is computed must not change it.
    expect(result.state.toolsFingerprint).toBe('804ac68ed82c28d9');
  });

  it('gives each tool set its own fingerprint, the same each time, past the few it keeps computed', async () => {
    const fingerprint = async (name: string) => (await createAgent({ model: mockModel(['ok']), tools: [defineTool({ name, description: 'd', execute: () => 1 })] }).run('go')).state.toolsFingerprint;
    const first = await fingerprint('tool_0');
    const all = [first];
    for (let i = 1; i < 100; i++) all.push(await fingerprint(`tool_${i}`));
    expect(new Set(all).size).toBe(100);
    expect(await fingerprint('tool_0')).toBe(first);
  });

  it('leaves a run whose stored state does not pass the checks of resume failed, naming what is wrong', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const agent = teller(store, charge(new Ledger()));
    const state = { ...(await agent.run('Charge me')).state, runId: 'run_bad', status: 'running' as const };
    state.messages = [...state.messages, { role: 'user', content: 5 } as never];
    await store.createRun({ state, owner: 'a worker that died' });
    await clock.advance(1001);
    const [refused] = await agent.runs.recover();
    expect(refused).toMatchObject({ runId: 'run_bad', error: { code: 'invalid_resume' } });
    expect(refused.error!.message).toMatch(/its stored state does not pass the checks of resume \(resume\(state\): state\.messages\[4\]/);
    expect((await store.loadRun('run_bad'))!.status).toBe('failed');
  });

  it('finds nothing to do when no run is left behind, and needs a store', async () => {
    expect(await teller(memoryStore(), charge(new Ledger())).runs.recover()).toEqual([]);
    await expect(createAgent({ model: cashier() }).runs.recover()).rejects.toThrow('agent.runs.recover() needs a run store: createAgent({ store }) with memoryStore(), sqliteStore() from koagent/sqlite or postgresStore() from koagent/postgres, or { store } in this call\'s options');
    await expect(teller(memoryStore(), charge(new Ledger())).runs.recover({ limit: 0 })).rejects.toThrow('agent.runs.recover(options): limit must be a whole number ≥ 1 or Infinity (got 0)');
  });
});

describe('the lease', () => {
  it('is held under one worker name for all of an agent object\'s runs, and under another for another agent object', async () => {
    const store = memoryStore();
    const owners: string[] = [];
    const recording = overriding(store, { createRun: (run) => (owners.push(run.owner), store.createRun(run)) });
    const one = teller(recording, charge(new Ledger()));
    await one.run('Charge me');
    await one.run('Charge me again');
    await teller(recording, charge(new Ledger())).run('Charge me');
    expect(owners).toHaveLength(3);
    expect(owners[1]).toBe(owners[0]);
    expect(owners[2]).not.toBe(owners[0]);
    expect(owners[0]).toMatch(new RegExp(`:${process.pid}:`));
  });

  it("is renewed every third of it, on its store's clock, while the segment runs: however far that clock moves, no other worker takes the run", async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const entered = gate();
    let release: () => void = () => undefined;
    const slow = charge(new Ledger(), { during: () => new Promise<void>((resolve) => (release = resolve, entered.open())) });
    const running = teller(store, slow).run('Charge me');
    await entered.promise;
    const start = clock.now();
    expect(clock.timers).toBe(1);
    await clock.advance(10_000);
    // Renewed every 333 ms: the 30th renewal, at 9 990 ms, holds it until 10 990 ms.
    expect((await store.listRuns())[0].leaseExpiresAt).toBe(start + 9990 + 1000);
    expect(await teller(store, charge(new Ledger())).runs.recover()).toEqual([]);
    release();
    expect((await running).status).toBe('completed');
    // The segment over, its renewals stop.
    expect(clock.timers).toBe(0);
  });

  it('stops a worker that lost it: another worker finishes the run, the first writes and runs nothing more', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const ledger = new Ledger();
    let release: () => void = () => undefined;
    const entered = gate();
    // A's tool stalls (a long GC pause, a blocked event loop): A cannot renew in time.
    const slow = charge(ledger, { idempotent: true, during: () => new Promise<void>((resolve) => (release = resolve, entered.open())) });
    const stalled = createAgent({ name: 'teller', model: cashier(), tools: [slow], store: overriding(store, { renew: async () => true }) }).run('Charge me');
    await entered.promise;
    await clock.advance(1001);
    const [recovered] = await teller(store, charge(ledger, { idempotent: true })).runs.recover();
    expect(recovered.result!.status).toBe('completed');
    release();
    const failure = await stalled.catch((e: unknown) => e);
    expect(KoagentError.is(failure) && failure.code).toBe('lease_lost');
    // A's done write was refused: the store holds B's run, and the effect happened once per key.
    expect(await store.loadRun(recovered.runId)).toEqual(recovered.result!.state);
    expect([...ledger.charges.keys()]).toEqual([`${recovered.runId}:c1`]);
  });

  it('cancels the segment when a renewal finds the lease lost, and the run fails with lease_lost', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 60, clock });
    const ledger = new Ledger();
    const cancelled: unknown[] = [];
    const entered = gate();
    const waitForCancel = charge(ledger, { during: (ctx) => new Promise((_, reject) => (entered.open(), ctx.signal.addEventListener('abort', () => (cancelled.push(ctx.signal.reason), reject(ctx.signal.reason))))) });
    // Its failure is taken at once, so it is never left unhandled while the test moves the clock.
    const first = teller(store, waitForCancel).run('Charge me').catch((e: unknown) => e);
    await entered.promise;
    // The worker stalls past its lease (its renewals are missed), and another takes the run over
    // meanwhile (its recovery reruns nothing: the call is reported).
    clock.jump(61);
    const claimed = gate();
    const takeover = teller(store, charge(ledger)).runs.recover({ onEvent: (e) => void (e.type === 'run.start' && claimed.open()) });
    await claimed.promise;
    // The first worker's renewal that was due runs now, and finds the lease lost.
    await clock.advance(0);
    const failure = await first;
    expect(KoagentError.is(failure) && failure.code).toBe('lease_lost');
    expect((failure as Error).message).toMatch(/its lease was lost while the segment ran/);
    expect(cancelled).toHaveLength(1);
    expect((await takeover)[0].result!.status).toBe('completed');
  });
});
