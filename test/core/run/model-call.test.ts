// One model call: what the provider is sent, how its reply is checked and placed, how usage is
// counted, and that no step copies the transcript.
import { describe, expect, it } from 'vitest';
import { createAgent, type GenerateResult, type Message, type ModelProvider } from '../../../src/index.js';
import type { AssistantMessage } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';
import { add, provider, reply, runFailure } from '../../support/core.js';
import { nextTurn } from '../../support/waits.js';

const twoTurns = () => mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }, { toolCalls: [{ name: 'add', args: { a: 3, b: 4 } }] }, 'Done.']);

describe('the request', () => {
  it('carries the transcript, the tool specs, the agent\'s modelSettings and the run\'s signal', async () => {
    const sent: Message[][] = [];
    const controller = new AbortController();
    let abortReached: boolean | undefined;
    const model = provider((req) => {
      sent.push(structuredClone(req.messages));
      controller.abort();
      abortReached = req.signal?.aborted;
      return reply('ok');
    });
    const result = await createAgent({ model, tools: [add], modelSettings: { temperature: 0.3, maxTokens: 100 } }).run('Hi', { signal: controller.signal });
    const [request] = model.requests;
    expect(sent[0]).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(request.messages).toBe(result.messages);
    expect(request.tools).toEqual([add.spec]);
    expect(request).toMatchObject({ temperature: 0.3, maxTokens: 100 });
    expect(abortReached).toBe(true);
  });

  it('gives each model layer its step number and the purpose "turn"', async () => {
    const seen: string[] = [];
    await createAgent({ model: twoTurns(), tools: [add] }).use({ name: 'spy', model: (ctx, next) => { seen.push(`${ctx.step}:${ctx.purpose}`); return next(); } }).run('Hi');
    expect(seen).toEqual(['1:turn', '2:turn', '3:turn']);
  });
});

describe('the transcript is one array, never copied per step or per layer', () => {
  it('is one view in every layer\'s ctx.messages and request, and the same array in every provider request and in result.messages', async () => {
    const model = provider((_req, n) => (n < 4 ? reply('', [{ id: `c${n}`, name: 'add', args: { a: n, b: n } }]) : reply('done')));
    const seen = new Set<Message[]>();
    const agent = createAgent({ model, tools: [add] }).use({
      name: 'identity',
      run: (ctx, next) => { seen.add(ctx.messages); return next(); },
      model: (ctx, next) => { seen.add(ctx.messages); seen.add(ctx.request.messages); return next(); },
      tool: (ctx, next) => { seen.add(ctx.messages); return next(); },
    });
    const result = await agent.run('Count');
    expect(model.requests).toHaveLength(4);
    expect(seen.size).toBe(1);
    expect([...seen][0]).toEqual(result.messages);
    for (const request of model.requests) expect(request.messages).toBe(result.messages);
    expect(result.messages).toHaveLength(8);
  });
});

describe('checking the provider\'s reply', () => {
  const junk: [string, unknown, RegExp][] = [
    ['null', null, /returned null/],
    ['a string', 'hello', /returned hello/],
    ['an object without a message', { usage: {} }, /returned no assistant message/],
    ['a user message', { message: { role: 'user', content: 'x' } }, /returned no assistant message/],
    ['content that is a number', { message: { role: 'assistant', content: 42 } }, /content is neither text nor a list of parts/],
    ['toolCalls that are not a list', { message: { role: 'assistant', content: '', toolCalls: 'add' } }, /toolCalls that are not a list of \{ id, name, args \}/],
    ['a tool call without a name', { message: { role: 'assistant', content: '', toolCalls: [{ id: 'x', args: {} }] } }, /toolCalls that are not a list/],
  ];
  it.each(junk)('fails the run with invalid_reply for %s, naming the provider and the expected shape', async (_what, value, message) => {
    const junkProvider: ModelProvider = { name: 'junk-api', generate: async () => value as GenerateResult };
    const error = await runFailure(createAgent({ model: junkProvider }).run('Hi'), 'invalid_reply');
    expect(error.message).toMatch(message);
    expect(error.message).toMatch(/The model provider junk-api returned .*; generate\(\) must resolve to \{ message: \{ role: 'assistant', content, toolCalls\? \}, usage, finishReason \}/);
    expect(error.state.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('names a provider that has no name by its class, or says it has none', async () => {
    class AcmeProvider { async generate() { return null as unknown as GenerateResult; } }
    expect((await runFailure(createAgent({ model: new AcmeProvider() }).run('Hi'), 'invalid_reply')).message).toMatch(/^The model provider AcmeProvider returned null/);
    expect((await runFailure(createAgent({ model: { generate: async () => null as never } }).run('Hi'), 'invalid_reply')).message).toMatch(/^The model provider \(unnamed\) returned null/);
  });

  it('accepts a reply whose content is null or missing as empty text', async () => {
    const model = provider(() => ({ message: { role: 'assistant', content: null } as unknown as AssistantMessage, usage: { inputTokens: 0, outputTokens: 0 }, finishReason: 'stop' }));
    const result = await createAgent({ model }).run('Hi');
    expect(result.text).toBe('');
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: '' });
  });
});

describe('usage', () => {
  it('sums tokens over model calls and counts model and tool calls; a reply without usage counts as zero tokens', async () => {
    let n = 0;
    const model: ModelProvider = {
      async generate() {
        n++;
        if (n === 1) return { message: { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'add', args: { a: 1, b: 1 } }, { id: 'b', name: 'add', args: { a: 2, b: 2 } }] }, usage: { inputTokens: 7, outputTokens: 5 }, finishReason: 'tool_calls' };
        return { message: { role: 'assistant', content: 'ok' } } as GenerateResult;
      },
    };
    const { usage } = await createAgent({ model, tools: [add] }).run('Hi');
    expect(usage).toEqual({ inputTokens: 7, outputTokens: 5, totalTokens: 12, modelCalls: 2, toolCalls: 2 });
  });
});

describe('tool-call ids', () => {
  it('are made unique in the run when a provider repeats an id each turn, and the tool messages follow the new ids', async () => {
    const model = provider((_req, n) => (n < 3 ? reply('', [{ id: 'call_0', name: 'add', args: { a: n, b: 0 } }]) : reply('done')));
    const result = await createAgent({ model, tools: [add] }).run('Hi');
    const ids = result.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
    expect(new Set(ids).size).toBe(2);
    const answered = result.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
    expect(answered).toEqual(ids);
  });

  it('are given to tool calls that come without one', async () => {
    const model = provider((_req, n) => (n === 1 ? reply('', [{ id: '', name: 'add', args: { a: 1, b: 1 } }, { name: 'add', args: { a: 2, b: 2 } } as never]) : reply('done')));
    const result = await createAgent({ model, tools: [add] }).run('Hi');
    const calls = (result.messages[1] as AssistantMessage).toolCalls!;
    expect(calls.every((c) => typeof c.id === 'string' && c.id.length > 0)).toBe(true);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });
});

describe('nothing a layer changes leaks into the agent or another run', () => {
  it('a header a model layer sets reaches only its own run\'s requests, also across concurrent runs', async () => {
    const seen: { user: unknown; header: unknown }[] = [];
    const model = provider(async (request) => { await nextTurn(); seen.push({ user: request.metadataUser, header: request.headers?.['x-user'] }); return reply('ok'); });
    const settings = { temperature: 0, headers: { 'x-team': 'core' } as Record<string, string> };
    const agent = createAgent({ model, modelSettings: settings }).use({
      name: 'who',
      model(ctx, next) {
        const user = ctx.metadata.user as string;
        ctx.request.headers![`x-user`] = user;
        ctx.request.metadataUser = user;
        return next();
      },
    });
    await Promise.all(['alice', 'bob', 'carol'].map((user) => agent.run('Hi', { metadata: { user } })));
    expect(seen.map((s) => s.header).sort()).toEqual(['alice', 'bob', 'carol']);
    for (const s of seen) expect(s.header).toBe(s.user);
    expect(settings.headers).toEqual({ 'x-team': 'core' });
    await agent.run('Hi again', { metadata: { user: 'dave' } });
    expect(seen.at(-1)).toEqual({ user: 'dave', header: 'dave' });
  });

  it('what a layer writes into an object of ctx.metadata stays in its run', async () => {
    const shared = { counters: { calls: 0 } };
    const agent = createAgent({ model: mockModel(['a', 'b']), metadata: shared }).use({ name: 'count', model(ctx, next) { (ctx.metadata.counters as { calls: number }).calls++; return next(); } });
    await agent.run('one');
    await agent.run('two');
    expect(shared.counters.calls).toBe(0);
  });

  it('a tool spec cannot be changed for every run: the agent\'s specs are frozen, a layer replaces one in its own request', async () => {
    const model = mockModel(['ok', 'ok']);
    const agent = createAgent({ model, tools: [add] }).use({
      name: 'describe',
      model(ctx, next) {
        expect(() => { (ctx.request.tools[0] as { description: string }).description = 'changed'; }).toThrow(TypeError);
        ctx.request.tools = ctx.request.tools.map((spec) => ({ ...spec, description: `${spec.description} (this run)` }));
        return next();
      },
    });
    await agent.run('1');
    expect((model.calls[0].request.tools as { description: string }[])[0].description).toBe('Add two numbers (this run)');
    expect(add.spec.description).toBe('Add two numbers');
  });
});
