// DESIGN.md §1 on each of the three stacks, through the public API: order, short-circuit,
// rewrite before next(), replace after it, and sequential re-entry (retry).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Middleware, type RunResult, type RunState } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { add, provider, reply, toolMessages } from '../../support/core.js';
import { mapText, textOf } from '../../../src/core/vocabulary/content.js';

/** Three layers a, b, c on one hook point, logging their way in and out. */
function traced(point: 'run' | 'model' | 'tool', log: string[]): Middleware[] {
  return ['a', 'b', 'c'].map((name) => ({
    name,
    async [point](_ctx: unknown, next: () => Promise<unknown>) {
      log.push(`in ${name}`);
      const out = await next();
      log.push(`out ${name}`);
      return out;
    },
  }) as Middleware);
}

const oneToolTurn = () => mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] }, 'The sum is 5.']);

describe('run stack', () => {
  it('runs code before next() in registration order and after it in reverse, with the loop innermost', async () => {
    const log: string[] = [];
    const model = provider(() => { log.push('model'); return reply('hi'); });
    await createAgent({ model, middleware: traced('run', log) }).run('Hello');
    expect(log).toEqual(['in a', 'in b', 'in c', 'model', 'out c', 'out b', 'out a']);
  });

  it('short-circuits: a layer returning a result without next() skips inner layers and the loop; outer layers see it', async () => {
    const log: string[] = [];
    const model = mockModel(['never sent']);
    let seenByOuter: RunResult | undefined;
    const agent = createAgent({ model }).use({ name: 'a', async run(_ctx, next) { seenByOuter = await next(); return seenByOuter; } })
      .use({ name: 'cached', async run(ctx) {
        log.push('cached');
        const state = ctx.state as RunState;
        return { runId: ctx.runId, sessionId: ctx.sessionId, status: 'completed', stopReason: 'hook_end', text: 'from cache', output: 'from cache', messages: ctx.messages, usage: state.usage, pendingApprovals: [], state };
      } })
      .use({ name: 'c', async run(_ctx, next) { log.push('c'); return next(); } });
    const result = await agent.run('Hello');
    expect(result.text).toBe('from cache');
    expect(seenByOuter?.text).toBe('from cache');
    expect(log).toEqual(['cached']);
    expect(model.calls).toHaveLength(0);
    expect(result.state).toMatchObject({ status: 'completed', stopReason: 'hook_end' });
  });

  it('rewrites before next(): a message a layer appends to ctx.messages reaches the model', async () => {
    const model = mockModel(['ok']);
    const agent = createAgent({ model }).use({ name: 'context', run: (ctx, next) => { ctx.messages.push({ role: 'system', content: 'Today is Monday.' }); return next(); } });
    await agent.run('What day is it?');
    expect(model.calls[0].messages.at(-1)).toEqual({ role: 'system', content: 'Today is Monday.' });
  });

  it('replaces after next(): the caller gets the result the layer returned', async () => {
    const agent = createAgent({ model: mockModel(['original']) })
      .use({ name: 'shout', async run(_ctx, next) { const r = await next(); return { ...r, text: r.text.toUpperCase(), output: 'custom' }; } });
    const result = await agent.run('Hi');
    expect(result.text).toBe('ORIGINAL');
    expect(result.output).toBe('custom');
  });

  it('allows calling next() again after the first call failed (retry): the loop runs again', async () => {
    const model = mockModel([{ error: 'overloaded' }, 'second time lucky']);
    let attempts = 0;
    const agent = createAgent({ model }).use({ name: 'retry', async run(_ctx, next) {
      for (;;) {
        attempts++;
        try { return await next(); } catch (error) { if (attempts >= 3) throw error; }
      }
    } });
    const result = await agent.run('Hi');
    expect(result.text).toBe('second time lucky');
    expect(attempts).toBe(2);
    expect(model.calls).toHaveLength(2);
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'second time lucky' }]);
  });
});

describe('model stack', () => {
  it('runs code before next() in registration order and after it in reverse, with the provider innermost', async () => {
    const log: string[] = [];
    const model = provider(() => { log.push('provider'); return reply('hi'); });
    await createAgent({ model, middleware: traced('model', log) }).run('Hello');
    expect(log).toEqual(['in a', 'in b', 'in c', 'provider', 'out c', 'out b', 'out a']);
  });

  it('short-circuits: a canned reply skips inner layers and the provider, outer layers see it, and it enters the transcript', async () => {
    const model = mockModel(['never sent']);
    const log: string[] = [];
    const agent = createAgent({ model })
      .use({ name: 'a', async model(_ctx, next) { const r = await next(); log.push(`a saw ${r.message.content}`); return r; } })
      .use({ name: 'canned', async model() { log.push('canned'); return reply('canned answer'); } })
      .use({ name: 'c', async model(_ctx, next) { log.push('c'); return next(); } });
    const result = await agent.run('Hi');
    expect(log).toEqual(['canned', 'a saw canned answer']);
    expect(model.calls).toHaveLength(0);
    expect(model.remaining).toBe(1);
    expect(result.text).toBe('canned answer');
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: 'canned answer' });
  });

  it('rewrites before next(): request fields a layer sets reach the provider', async () => {
    const model = mockModel(['ok']);
    const agent = createAgent({ model, modelSettings: { temperature: 0.9 } }).use({ name: 'tune', model(ctx, next) {
      ctx.request.temperature = 0.2;
      ctx.request.maxTokens = 64;
      ctx.request.headers = { 'x-team': 'core' };
      return next();
    } });
    await agent.run('Hi');
    expect(model.calls[0].request).toMatchObject({ temperature: 0.2, maxTokens: 64, headers: { 'x-team': 'core' } });
  });

  it('replaces after next(): the returned reply takes the provider reply\'s place in the transcript', async () => {
    const agent = createAgent({ model: mockModel(['my password is hunter2']) })
      .use({ name: 'redact', async model(_ctx, next) {
        const r = await next();
        return { ...r, message: { ...r.message, content: mapText(r.message.content, (t) => t.replace('hunter2', '[redacted]')) } };
      } });
    const result = await agent.run('Hi');
    expect(result.text).toBe('my password is [redacted]');
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'my password is [redacted]' }]);
  });

  it('allows a retry layer to call next() twice: the provider runs twice, sees the same transcript, and only the final reply is kept', async () => {
    const model = mockModel(['bad answer', 'good answer']);
    const agent = createAgent({ model }).use({ name: 'retry', async model(_ctx, next) {
      const first = await next();
      return textOf(first.message.content).startsWith('bad') ? next() : first;
    } });
    const result = await agent.run('Hi');
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1].messages).toEqual(model.calls[0].messages);
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'good answer' }]);
    expect(result.usage.modelCalls).toBe(2);
  });
});

describe('tool stack', () => {
  it('runs code before next() in registration order and after it in reverse, with the tool innermost', async () => {
    const log: string[] = [];
    const logged = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => { log.push('execute'); return a + b; } });
    await createAgent({ model: oneToolTurn(), tools: [logged], middleware: traced('tool', log) }).run('2+3?');
    expect(log).toEqual(['in a', 'in b', 'in c', 'execute', 'out c', 'out b', 'out a']);
  });

  it('short-circuits: an outcome returned without next() skips inner layers and the tool; outer layers see it, stamped with who gave it', async () => {
    let executed = 0;
    const counted = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => { executed++; return a + b; } });
    const log: string[] = [];
    const agent = createAgent({ model: oneToolTurn(), tools: [counted] })
      .use({ name: 'a', async tool(_ctx, next) { const o = await next(); log.push(`a saw ${JSON.stringify(o)}`); return o; } })
      .use({ name: 'cache', async tool() { return { result: 42 }; } })
      .use({ name: 'c', async tool(_ctx, next) { log.push('c'); return next(); } });
    const result = await agent.run('2+3?');
    expect(executed).toBe(0);
    expect(log).toEqual(['a saw {"result":42,"replacedBy":"cache"}']);
    expect(toolMessages(result.messages)[0]).toMatchObject({ content: '42', metadata: { replacedBy: 'cache' } });
  });

  it('rewrites args before next(): the tool gets the changed args, and the transcript keeps what the model wrote', async () => {
    const agent = createAgent({ model: oneToolTurn(), tools: [add] }).use({ name: 'double', tool(ctx, next) { ctx.args.a = 20; return next(); } });
    const result = await agent.run('2+3?');
    expect(toolMessages(result.messages)[0].content).toBe('23');
    const call = result.messages.find((m) => m.role === 'assistant' && m.toolCalls)!;
    expect(call.role === 'assistant' && call.toolCalls?.[0].args).toEqual({ a: 2, b: 3 });
  });

  it('rewrites the tool name before next(): the other tool runs, with the args revalidated against its schema', async () => {
    let received: unknown;
    const power = defineTool({ name: 'power', description: 'x to the y', input: z.object({ x: z.number(), y: z.number().default(2) }), execute: (args) => { received = args; return args.x ** args.y; } });
    const agent = createAgent({ model: oneToolTurn(), tools: [add, power] }).use({ name: 'reroute', tool(ctx, next) {
      ctx.toolName = 'power';
      ctx.args = { x: 7 };
      return next();
    } });
    const result = await agent.run('2+3?');
    expect(received).toEqual({ x: 7, y: 2 });
    expect(toolMessages(result.messages)[0].content).toBe('49');
  });

  it('a rewrite the new schema rejects settles the call with a validation error naming the layer change', async () => {
    const power = defineTool({ name: 'power', description: 'x to the y', input: z.object({ x: z.number(), y: z.number() }), execute: ({ x, y }) => x ** y });
    const agent = createAgent({ model: oneToolTurn(), tools: [add, power] }).use({ name: 'reroute', tool(ctx, next) { ctx.toolName = 'power'; return next(); } });
    const result = await agent.run('2+3?');
    expect(toolMessages(result.messages)[0].content).toMatch(/^Error \(validation\): Invalid arguments for power \(as changed by a layer\)/);
  });

  it('replaces after next(): the model sees the outcome the layer returned', async () => {
    const agent = createAgent({ model: oneToolTurn(), tools: [add] })
      .use({ name: 'scale', async tool(_ctx, next) { const o = await next(); return { ...o, result: (o.result as number) * 100 }; } });
    const result = await agent.run('2+3?');
    expect(toolMessages(result.messages)[0]).toEqual({ role: 'tool', toolCallId: expect.any(String), name: 'add', content: '500' });
  });

  it('allows a retry layer to call next() twice, but the tool executes once: the retry gets the first execution\'s outcome', async () => {
    let executed = 0;
    const once = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => ({ sum: a + b, execution: ++executed }) });
    const outcomes: unknown[] = [];
    const agent = createAgent({ model: oneToolTurn(), tools: [once] }).use({ name: 'retry', async tool(_ctx, next) {
      outcomes.push(await next());
      outcomes.push(await next());
      return outcomes[1] as never;
    } });
    const result = await agent.run('2+3?');
    expect(executed).toBe(1);
    expect(outcomes[0]).toEqual({ result: { sum: 5, execution: 1 } });
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(toolMessages(result.messages)).toHaveLength(1);
  });
});
