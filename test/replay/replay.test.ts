// replay (koagent/replay): a stored run through the agent's layers as they are now, each model
// reply and tool result from the stored run's record, the model and the tools never called while
// the replay asks what the stored run asked; the first difference stops it, named.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool, deny, ProviderError, type Middleware, type RunState } from '../../src/index.js';
import { retryMiddleware, piiRedactionMiddleware } from '../../src/middleware.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import type { LayerTraceRecord } from '../../src/trace.js';
import { replay } from '../../src/replay.js';
import { effects, notingAgent, SCRIPT } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-replay-'));
const file = join(dir, 'effects.txt');
const store = sqliteStore({ path: join(dir, 'runs.db') });
let stored: RunState;

beforeAll(async () => {
  stored = (await notingAgent(file, { store }).agent.run('Note four things')).state;
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A trace without what differs from run to run (times), to compare two traces whole. */
function withoutTimes(trace: LayerTraceRecord): unknown {
  return JSON.parse(JSON.stringify(trace, (key, value: unknown) => (['startedAt', 'durationMs', 'inAt', 'outAt', 'selfMs'].includes(key) ? undefined : value)));
}

describe('replay with no change', () => {
  it('gives a trace equal to the stored one and the same transcript, and calls neither the model nor a tool', async () => {
    const { agent, model } = notingAgent(file, { store });
    const noted = effects(file).length;
    const report = await replay(agent, stored.runId);
    expect(report.same).toBe(true);
    expect(report.divergence).toBeUndefined();
    expect(report.status).toBe('completed');
    expect(model.calls).toHaveLength(0);
    expect(effects(file)).toHaveLength(noted);
    expect(report.answered).toEqual({ models: 4, tools: 4 });
    expect(report.live).toEqual({ models: 0, tools: 0 });
    expect(withoutTimes(report.trace)).toEqual(withoutTimes(report.storedTrace));
    expect(report.comparison.same).toBe(true);
    expect(report.state.messages).toEqual(stored.messages);
    expect(report.state.usage).toEqual(stored.usage);
    expect(report.state.hookState.turns).toBe(4);
    // Nothing is stored: the store holds the one run.
    expect((await store.listRuns()).map((r) => r.runId)).toEqual([stored.runId]);
  });

  it('gives back a provider failure the stored run retried, so the retry layer does the same again', async () => {
    const overloaded = new ProviderError({ provider: 'mockModel', kind: 'http', status: 503, providerMessage: 'overloaded', retryable: true });
    const retry = retryMiddleware({ maxRetries: 2, sleep: async () => undefined });
    const make = () => notingAgent(file, { middleware: [retry], model: mockModel([{ error: overloaded }, ...SCRIPT]) });
    const run = await make().agent.run('Note four things');
    const { agent, model } = make();
    const report = await replay(agent, run.state);
    expect(report.same).toBe(true);
    expect(report.answered.models).toBe(5);
    expect(model.calls).toHaveLength(0);
  });
});

describe('replay with a changed layer', () => {
  it('stops at a tool call with other arguments, naming it and how it differs; nothing after it is asked', async () => {
    const louder: Middleware = { name: 'louder', tool: (ctx, next) => { if (ctx.toolCallId === 'c2') ctx.args = { text: 'TWO' }; return next(); } };
    const { agent, model } = notingAgent(file, { store, middleware: [louder] });
    const noted = effects(file).length;
    const report = await replay(agent, stored.runId);
    expect(report.same).toBe(false);
    expect(report.divergence).toEqual({ kind: 'tool', id: 'c2', name: 'note', step: 2, reason: 'the call runs with other arguments', changes: [{ path: '/args/text', before: 'two', after: 'TWO' }] });
    expect(report.status).toBe('failed');
    expect(report.error?.code).toBe('replay_diverged');
    expect(model.calls).toHaveLength(0);
    expect(effects(file)).toHaveLength(noted);
    const c2 = report.comparison.calls.find((c) => c.id === 'c2')!;
    expect(c2.same).toBe(false);
    expect(c2.layers.find((l) => l.name === 'louder')?.now?.effects[0]).toMatchObject({ type: 'rewrote-args', changes: [{ path: '/args/text', before: 'two', after: 'TWO' }] });
    expect(report.comparison.calls.find((c) => c.id === 'model:3:1')).toMatchObject({ then: 'ok', same: false });
    expect(report.comparison.calls.find((c) => c.id === 'model:3:1')?.now).toBeUndefined();
  });

  it('stops at a model call whose request a layer changed, naming the field', async () => {
    const cooler: Middleware = { name: 'cooler', model: (ctx, next) => { if (ctx.step === 2) ctx.request.temperature = 0; return next(); } };
    const report = await replay(notingAgent(file, { store }).agent, stored.runId, { layers: [cooler] });
    expect(report.divergence).toMatchObject({ kind: 'model', id: 'turn:2:1', name: 'turn', step: 2, reason: 'the request the provider gets differs from the stored one (a layer changed it)', changes: [{ path: '/temperature', after: 0 }] });
  });

  it('stops where a layer that now denies a call changed what the model reads next, naming the message', async () => {
    const noThree: Middleware = { name: 'no-three', tool: (ctx, next) => ((ctx.args as { text: string }).text === 'three' ? deny('Not three') : next()) };
    const { agent } = notingAgent(file, { store, middleware: [noThree] });
    const report = await replay(agent, stored.runId);
    expect(report.divergence).toMatchObject({ kind: 'model', id: 'turn:3:1', step: 3, changes: [{ path: '/messages/6/content', before: '{"noted":"three"}', after: 'Error (denied): Not three' }, expect.anything()] });
    expect(report.comparison.calls.find((c) => c.id === 'c3')).toMatchObject({ then: 'ok', now: 'denied', same: false });
  });

  it('with live: true, goes on with the real model and tools from the first difference', async () => {
    const louder: Middleware = { name: 'louder', tool: (ctx, next) => { if (ctx.toolCallId === 'c4') ctx.args = { text: 'FOUR' }; return next(); } };
    const { agent, model } = notingAgent(file, { store, middleware: [louder] });
    const noted = effects(file).length;
    const report = await replay(agent, stored.runId, { live: true });
    expect(report.wentLive).toBe(true);
    expect(report.divergence).toMatchObject({ kind: 'tool', id: 'c4' });
    expect(report.status).toBe('completed');
    expect(effects(file).slice(noted)).toEqual(['FOUR']);
    expect(model.calls).toHaveLength(1);
    expect(report.live).toEqual({ models: 1, tools: 1 });
    expect(report.answered).toEqual({ models: 3, tools: 3 });
  });
});

describe('replay of a run a human decided on', () => {
  it('gives the replay the stored run\'s decisions, edited arguments included, and comes out the same', async () => {
    const pay = defineTool({ name: 'pay', description: 'Pays', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => `paid ${amount}` });
    const make = () => createAgent({ name: 'payer', model: mockModel([{ toolCalls: [{ id: 'p1', name: 'pay', args: { amount: 50 } }] }, 'Paid.'], { resumable: true }), tools: [pay], layerTrace: true });
    const first = await make().run('Pay 50');
    const done = await make().resume(first.state, { p1: { approved: true, args: { amount: 40 }, actor: 'ada', surface: 'cli' } });
    expect(done.messages.at(-2)?.content).toBe('paid 40');
    const report = await replay(make(), done.state);
    expect(report.same).toBe(true);
    expect(report.state.decisionLog?.map((d) => [d.decision, d.editedArgs, d.actor?.id, d.surface])).toEqual([['approved', { amount: 40 }, 'ada', 'cli']]);
  });
});

describe('what replay refuses', () => {
  it('a run recorded without its layer trace', async () => {
    const { agent } = notingAgent(file, { layerTrace: false });
    const run = await agent.run('Note four things');
    await expect(replay(agent, run.state)).rejects.toThrow(/was not recorded: record it with its layer trace/);
  });

  it('a run whose agent keeps values out of traces: its replies and results were not kept', async () => {
    const { agent } = notingAgent(file, { middleware: [piiRedactionMiddleware()] });
    const run = await agent.run('Note four things');
    await expect(replay(agent, run.state)).rejects.toThrow(/kept no replies or results: a layer of its agent keeps values out of traces/);
  });

  it('a misspelt option, naming the one meant', async () => {
    await expect(replay(notingAgent(file, { store }).agent, stored.runId, { lve: true } as never)).rejects.toThrow(/lve is not an option of replay; did you mean `live`\?/);
  });
});
