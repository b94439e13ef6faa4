// The layer trace records what each layer did to a call: rewrites (with the change), replaced
// results and replies, short-circuits, denials, approval requests, next() again and throws.
import { describe, expect, it } from 'vitest';
import { createAgent, deny, ProviderError, type Middleware } from '../../../src/index.js';
import { retryMiddleware } from '../../../src/middleware.js';
import { mockModel } from '../../../src/testing/index.js';
import { callsOf, deploy, layer, search, toolCall } from './support.js';

const searchOnce = () => mockModel([{ toolCalls: [{ name: 'search', args: { q: 'cats' }, id: 'c1' }] }, 'Done.']);

describe('rewrites', () => {
  it('shows a middleware that rewrites the arguments as rewrote-args, with the change', async () => {
    const lang: Middleware = { name: 'lang', tool: (ctx, next) => { ctx.args = { ...ctx.args, q: `${String(ctx.args.q)} lang:en` }; return next(); } };
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [lang], layerTrace: true }).run('Find cats');
    expect(layer(toolCall(result, 'c1'), 'lang').effects).toEqual([{ type: 'rewrote-args', changes: [{ path: '/args/q', before: 'cats', after: 'cats lang:en' }] }]);
  });

  it('shows a model layer that changes the request as rewrote-request', async () => {
    const cool: Middleware = { name: 'cool', model: (ctx, next) => { ctx.request.temperature = 0; return next(); } };
    const result = await createAgent({ model: mockModel(['Hi.']), middleware: [cool], layerTrace: true }).run('Hi');
    const call = callsOf(result).find((c) => c.kind === 'model')!;
    expect(call).toMatchObject({ id: 'model:1:1', name: 'turn', step: 1, segment: 1 });
    expect(layer(call, 'cool').effects).toEqual([{ type: 'rewrote-request', changes: [{ path: '/request/temperature', after: 0 }] }]);
  });

  it('shows a model layer that adds a message as the message added to the request', async () => {
    const brief: Middleware = { name: 'brief', model: (ctx, next) => { ctx.messages.push({ role: 'user', content: 'Be brief.' }); return next(); } };
    const result = await createAgent({ model: mockModel(['Hi.']), middleware: [brief], layerTrace: true }).run('Hi');
    expect(layer(callsOf(result)[0], 'brief').effects).toEqual([{ type: 'rewrote-request', changes: [{ path: '/messages/1', after: { role: 'user', content: 'Be brief.' } }] }]);
  });

  it('leaves a layer that passes the call on unchanged without effects', async () => {
    const look: Middleware = { name: 'look', tool: (_ctx, next) => next() };
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [look], layerTrace: true }).run('Find cats');
    expect(layer(toolCall(result, 'c1'), 'look')).toMatchObject({ effects: [], nextCalls: 1, source: 'middleware' });
  });
});

describe('replacements', () => {
  it('shows a layer that replaces the result as replaced-result, with what it was and what it became', async () => {
    const upper: Middleware = { name: 'upper', async tool(_ctx, next) { const out = await next(); return { ...out, result: String(out.result).toUpperCase() }; } };
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [upper], layerTrace: true }).run('Find cats');
    expect(layer(toolCall(result, 'c1'), 'upper').effects).toEqual([{ type: 'replaced-result', changes: [{ path: '/result', before: 'found cats', after: 'FOUND CATS' }] }]);
  });

  it('shows a model layer that replaces the reply as replaced-reply', async () => {
    const polite: Middleware = { name: 'polite', async model(_ctx, next) { const out = await next(); return { ...out, message: { ...out.message, content: 'Hello, kindly.' } }; } };
    const result = await createAgent({ model: mockModel(['Hi.']), middleware: [polite], layerTrace: true }).run('Hi');
    expect(layer(callsOf(result)[0], 'polite').effects).toEqual([{ type: 'replaced-reply', changes: [{ path: '/message/content', before: 'Hi.', after: 'Hello, kindly.' }] }]);
  });
});

describe('values a layer keeps out of the trace (traceValues: false)', () => {
  const upper = (name: string, traceValues?: boolean): Middleware => ({ name, ...(traceValues === undefined ? {} : { traceValues }), async tool(_ctx, next) { const out = await next(); return { ...out, result: `${name}: ${String(out.result)}` }; } });

  it('records its changes by path, each value withheld, and so those of every layer inside it in that call', async () => {
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [upper('outer'), upper('redact', false), upper('inner')], layerTrace: true }).run('Find cats');
    const call = toolCall(result, 'c1');
    expect(layer(call, 'redact').effects).toEqual([{ type: 'replaced-result', changes: [{ path: '/result', before: '[withheld]', after: '[withheld]' }] }]);
    expect(layer(call, 'inner').effects).toEqual([{ type: 'replaced-result', changes: [{ path: '/result', before: '[withheld]', after: '[withheld]' }] }]);
    // A layer outside it sees only what it let out, and records it.
    expect(layer(call, 'outer').effects).toEqual([{ type: 'replaced-result', changes: [{ path: '/result', before: 'redact: inner: found cats', after: 'outer: redact: inner: found cats' }] }]);
    expect(JSON.stringify(result.state)).not.toContain('"inner: found cats"');
  });

  it('withholds nothing by default, nor with traceValues: true, and refuses the field misspelt', async () => {
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [upper('a', true)], layerTrace: true }).run('Find cats');
    expect(layer(toolCall(result, 'c1'), 'a').effects).toEqual([{ type: 'replaced-result', changes: [{ path: '/result', before: 'found cats', after: 'a: found cats' }] }]);
    expect(() => createAgent({ model: searchOnce(), middleware: [{ name: 'x', tracevalues: false, tool: (_ctx: unknown, next: () => unknown) => next() } as never] })).toThrow(/tracevalues is not a field of a middleware; did you mean `traceValues`\?/);
  });
});

describe('settling a call', () => {
  it('shows a layer that answers without next() as short-circuit, and the layers inside it never entered', async () => {
    const cache: Middleware = { name: 'cache', tool: () => ({ result: 'cached cats' }) };
    const inner: Middleware = { name: 'inner', tool: (_ctx, next) => next() };
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [cache, inner], layerTrace: true }).run('Find cats');
    const call = toolCall(result, 'c1');
    expect(call.outcome).toBe('short-circuit');
    expect(layer(call, 'cache')).toMatchObject({ nextCalls: 0, effects: [{ type: 'short-circuit' }] });
    expect(call.layers.map((l) => l.name)).not.toContain('inner');
  });

  it('shows an AgentHook preToolCall deny as denied, with the reason and the hook', async () => {
    const guard = { name: 'guard', preToolCall: () => ({ deny: 'No searching today' }) };
    const result = await createAgent({ model: searchOnce(), tools: [search], hooks: [guard], layerTrace: true }).run('Find cats');
    const call = toolCall(result, 'c1');
    expect(call.outcome).toBe('denied');
    expect(layer(call, 'guard')).toMatchObject({ source: 'agent-hook', hooks: ['preToolCall'] });
    expect(layer(call, 'guard').effects).toContainEqual({ type: 'denied', reason: 'No searching today', by: 'guard' });
  });

  it('shows a permission rule that denies as the permissions step denying, with the rule\'s reason', async () => {
    const result = await createAgent({ model: searchOnce(), tools: [search], permissions: [{ tool: 'search', decision: 'deny', reason: 'search is off' }], layerTrace: true }).run('Find cats');
    const call = toolCall(result, 'c1');
    expect(call.outcome).toBe('denied');
    const step = layer(call, 'koagent:permissions');
    expect(step.source).toBe('builtin');
    expect(step.effects).toContainEqual(expect.objectContaining({ type: 'denied', reason: expect.stringContaining('search is off') }));
  });

  it('shows a middleware returning deny() as denied by that middleware', async () => {
    const noShell: Middleware = { name: 'no-search', tool: () => deny('not here') };
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [noShell], layerTrace: true }).run('Find cats');
    expect(layer(toolCall(result, 'c1'), 'no-search').effects).toContainEqual({ type: 'denied', reason: 'not here', by: 'no-search' });
  });

  it('shows a call that waits for a human as asked-approval in the approval step, and the call as approval', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'deploy', args: { env: 'prod' }, id: 'd1' }] }, 'Deployed.']);
    const result = await createAgent({ model, tools: [deploy], layerTrace: true }).run('Deploy');
    expect(result.status).toBe('suspended');
    const call = toolCall(result, 'd1');
    expect(call.outcome).toBe('approval');
    expect(layer(call, 'koagent:approval').effects).toContainEqual(expect.objectContaining({ type: 'asked-approval' }));
  });

  it('shows a layer that threw as threw, with the message, and no time it returned', async () => {
    const broken: Middleware = { name: 'broken', tool: () => { throw new Error('wires crossed'); } };
    const error = await createAgent({ model: searchOnce(), tools: [search], middleware: [broken], layerTrace: true }).run('Find cats').catch((e: unknown) => e as { state: unknown });
    const threw = layer(toolCall(error, 'c1'), 'broken');
    expect(threw.effects).toEqual([{ type: 'threw', message: 'wires crossed' }]);
    expect(threw.outAt).toBeUndefined();
    expect(toolCall(error, 'c1').outcome).toBe('error');
  });
});

describe('next() again', () => {
  it('shows retryMiddleware calling next() again as next-again, and each attempt inside it', async () => {
    let calls = 0;
    const model = mockModel(['Hi.']);
    const flaky = { ...model, generate: (request: Parameters<typeof model.generate>[0]) => (++calls === 1 ? Promise.reject(new ProviderError({ provider: 'test', kind: 'http', status: 500, providerMessage: 'oops', retryable: true })) : model.generate(request)) };
    const inner: Middleware = { name: 'inner', model: (_ctx, next) => next() };
    const result = await createAgent({ model: flaky, middleware: [retryMiddleware({ sleep: async () => undefined }), inner], layerTrace: true }).run('Hi');
    const call = callsOf(result)[0];
    const retry = layer(call, 'retry');
    expect(retry.nextCalls).toBe(2);
    expect(retry.effects).toContainEqual({ type: 'next-again', times: 1 });
    const attempts = call.layers.filter((l) => l.name === 'inner');
    expect(attempts).toHaveLength(2);
    expect(attempts[0].effects).toContainEqual(expect.objectContaining({ type: 'threw' }));
    expect(attempts[0].outAt).toBeUndefined();
    expect(attempts.map((a) => a.depth)).toEqual([retry.depth + 1, retry.depth + 1]);
  });
});

describe('times', () => {
  it('gives each layer an entry time within its call, a return time after it, and its own time without the time inside next()', async () => {
    const outer: Middleware = { name: 'outer', tool: (_ctx, next) => next() };
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [outer], layerTrace: true }).run('Find cats');
    const call = toolCall(result, 'c1');
    for (const l of call.layers) {
      expect(l.inAt).toBeGreaterThanOrEqual(0);
      expect(l.outAt!).toBeGreaterThanOrEqual(l.inAt);
      expect(l.outAt!).toBeLessThanOrEqual(call.durationMs);
      expect(l.selfMs).toBeLessThanOrEqual(l.outAt! - l.inAt + 0.001);
    }
    expect(call.startedAt).toBeGreaterThan(0);
  });
});
