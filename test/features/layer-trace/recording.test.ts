// When the layer trace is recorded (off by default; an agent or run option), how both dialects'
// hooks are named in it, and how a sub-agent's calls nest under the lead's call that ran them.
import { describe, expect, it } from 'vitest';
import { createAgent, type Middleware } from '../../../src/index.js';
import type { Hook } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { TRACE_STATE } from '../../../src/features/layer-trace/record.js';
import { callsOf, layer, search, toolCall } from './support.js';

const searchOnce = () => mockModel([{ toolCalls: [{ name: 'search', args: { q: 'cats' }, id: 'c1' }] }, 'Done.']);
const look: Middleware = { name: 'look', tool: (_ctx, next) => next() };

describe('turning it on', () => {
  it('is off by default: the state has no trace', async () => {
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [look] }).run('Find cats');
    expect(Object.keys(result.state.hookState)).not.toContain(TRACE_STATE);
  });

  it('is off at no cost: the layers are called with koagent\'s own next(), not a recording one', async () => {
    const seen: string[] = [];
    const spy: Middleware = { name: 'spy', tool: (_ctx, next) => { seen.push(next.name); return next(); } };
    await createAgent({ model: searchOnce(), tools: [search], middleware: [spy] }).run('Find cats');
    await createAgent({ model: searchOnce(), tools: [search], middleware: [spy], layerTrace: true }).run('Find cats');
    expect(seen).toEqual(['next', 'counted']);
  });

  it('is on for one run with the run option, and off for one run of a traced agent', async () => {
    const agent = createAgent({ model: mockModel(['One.', 'Two.']), middleware: [look] });
    expect(callsOf(await agent.run('Hi', { layerTrace: true }))).toHaveLength(1);
    const traced = createAgent({ model: mockModel(['One.']), layerTrace: true });
    expect((await traced.run('Hi', { layerTrace: false })).state.hookState[TRACE_STATE]).toBeUndefined();
  });

  it('refuses a misspelt option, naming layerTrace', () => {
    expect(() => createAgent({ model: mockModel([]), trace: true } as never)).toThrow(/layerTrace/);
  });

  it('lists the calls in the order they started, model and tool, with their step', async () => {
    const result = await createAgent({ model: searchOnce(), tools: [search], layerTrace: true }).run('Find cats');
    expect(callsOf(result).map((c) => [c.kind, c.id, c.step, c.outcome])).toEqual([['model', 'model:1:1', 1, 'ok'], ['tool', 'c1', 1, 'ok'], ['model', 'model:2:1', 2, 'ok']]);
  });
});

describe('the dialects', () => {
  it('names AgentHooks and criogen Hooks by their own names, with the methods that ran', async () => {
    const audit = { name: 'audit', preToolCall: () => undefined, postToolCall: () => undefined, preGenerate: () => undefined };
    class Redact implements Hook {
      beforeTool() { return undefined; }
      afterTool() { return undefined; }
      afterModel() { return undefined; }
    }
    const result = await createAgent({ model: searchOnce(), tools: [search], hooks: [audit, new Redact()], layerTrace: true }).run('Find cats');
    const tool = toolCall(result, 'c1');
    expect(layer(tool, 'audit')).toMatchObject({ source: 'agent-hook', hooks: ['preToolCall', 'postToolCall'] });
    expect(layer(tool, 'Redact')).toMatchObject({ source: 'criogen', hooks: ['beforeTool', 'afterTool'] });
    const model = callsOf(result)[0];
    expect(layer(model, 'audit')).toMatchObject({ source: 'agent-hook', hooks: ['preGenerate'] });
    expect(layer(model, 'Redact')).toMatchObject({ source: 'criogen', hooks: ['afterModel'] });
  });

  it('puts the layers in the order they ran, outermost first, each one level deeper', async () => {
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [look], hooks: [{ name: 'audit', preToolCall: () => undefined }], layerTrace: true }).run('Find cats');
    const tool = toolCall(result, 'c1');
    expect(tool.layers.map((l) => [l.name, l.depth])).toEqual([['koagent:validate', 0], ['look', 1], ['audit', 2], ['koagent:resolve', 3]]);
  });
});

describe('sub-agents', () => {
  it('records a sub-agent\'s calls in the lead\'s trace, under the lead\'s call that ran it, with the path of agents', async () => {
    const researcher = createAgent({ name: 'researcher', model: mockModel([{ toolCalls: [{ name: 'search', args: { q: 'otters' }, id: 's1' }] }, 'Otters hold hands.']), tools: [search], middleware: [look] });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'Otters' }, id: 'r1' }] }, 'Done.']), tools: [researcher.asTool({ description: 'Researches' })], layerTrace: true });
    const result = await lead.run('Tell me of otters');
    const calls = callsOf(result);
    const nested = calls.filter((c) => c.parentCallId === 'r1');
    expect(nested.map((c) => [c.kind, c.id])).toEqual([['model', 'model:1:1'], ['tool', 's1'], ['model', 'model:2:1']]);
    expect(nested.every((c) => c.agentPath?.join('/') === 'researcher')).toBe(true);
    expect(layer(nested[1], 'look').source).toBe('middleware');
    expect(calls.filter((c) => c.parentCallId === undefined).map((c) => c.id)).toEqual(['model:1:1', 'r1', 'model:2:1']);
    // The lead's call opened before the sub-agent's, and closed after them.
    const r1 = calls.find((c) => c.id === 'r1')!;
    expect(calls.indexOf(r1)).toBeLessThan(calls.indexOf(nested[0]));
  });
});

describe('the model of a model call', () => {
  it('names the provider and the model id the call asked', async () => {
    const result = await createAgent({ model: mockModel(['Hi.']), layerTrace: true }).run('Hello');
    expect(callsOf(result)[0]).toMatchObject({ kind: 'model', provider: 'mockModel', model: 'mock' });
  });

  it('names the one a layer swapped in before next() (a fallback), not the agent\'s', async () => {
    const backup = { name: 'backup-provider', modelId: 'backup-large', generate: mockModel(['From the backup.']).generate };
    const fallback: Middleware = { name: 'fallback', model: (ctx, next) => { ctx.provider = backup; return next(); } };
    const result = await createAgent({ model: mockModel(['From the first.']), middleware: [fallback], layerTrace: true }).run('Hello');
    expect(result.text).toBe('From the backup.');
    expect(callsOf(result)[0]).toMatchObject({ provider: 'backup-provider', model: 'backup-large' });
  });

  it('leaves a tool call without a model', async () => {
    const tool = toolCall(await createAgent({ model: searchOnce(), tools: [search], layerTrace: true }).run('Find cats'), 'c1');
    expect(tool.model).toBeUndefined();
    expect(tool.provider).toBeUndefined();
  });
});
