import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineMiddleware, defineTool, RunFailedError, type Message } from '../../../src/index.js';
import type { Hook } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';

async function failure(promise: Promise<unknown>): Promise<RunFailedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof RunFailedError)) throw new Error(`expected a RunFailedError, got ${String(error)}`);
  return error;
}

function countingTool(runs: { n: number }) {
  return defineTool({ name: 'ping', description: 'Ping', execute: () => { runs.n++; return 'pong'; } });
}

describe('criogen beforeModel', () => {
  it('{ messages } replaces the transcript that is sent and kept, in the same array everyone holds', async () => {
    const model = mockModel(['Short answer.']);
    let held: Message[] | undefined;
    const holder = defineMiddleware({
      name: 'holder',
      async model(ctx, next) {
        held = ctx.request.messages;
        return next();
      },
    });
    const lastTurnOnly: Hook = {
      name: 'last-turn-only',
      beforeModel: (ctx) => ({ messages: ctx.messages.filter((m) => m.role !== 'system').slice(-1) }),
    };
    const agent = createAgent({ instructions: 'Be brief.', model, middleware: [holder], hooks: [lastTurnOnly] });
    const result = await agent.send([{ role: 'user', content: 'first' }, { role: 'user', content: 'second' }]);
    expect(model.calls[0].messages).toEqual([{ role: 'user', content: 'second' }]);
    expect(result.messages).toEqual([{ role: 'user', content: 'second' }, { role: 'assistant', content: 'Short answer.' }]);
    expect(held).toEqual(result.messages);
  });

  it('{ end: true, output } ends the run with stop reason hook_end without calling the model', async () => {
    const model = mockModel([]);
    const log: string[] = [];
    const budget: Hook = { name: 'budget', beforeModel: () => ({ end: true, output: { refused: 'over budget' } }) };
    const outer: Hook = { name: 'outer', afterModel: () => void log.push('outer.afterModel'), onEnd: (_c, o) => void log.push(`outer.onEnd(${o})`) };
    const inner: Hook = { name: 'inner', beforeModel: () => void log.push('inner.beforeModel') };
    const agent = createAgent({ model, hooks: [outer, budget, inner] });
    const result = await agent.run('Hello');
    expect(result).toMatchObject({ status: 'completed', stopReason: 'hook_end', output: { refused: 'over budget' } });
    expect(model.calls).toHaveLength(0);
    expect(result.usage.modelCalls).toBe(0);
    // No reply was made, so there is none in the transcript, and no afterModel runs for it.
    expect(result.messages).toEqual([{ role: 'user', content: 'Hello' }]);
    expect(log).toEqual(['outer.onEnd(completed)']);
  });
});

describe('criogen afterModel', () => {
  it('sees ctx.messages ending with the new reply, and modelCalls counting it', async () => {
    const seen: unknown[] = [];
    const watcher: Hook = { afterModel: (ctx) => void seen.push(ctx.messages.at(-1), ctx.modelCalls) };
    await createAgent({ model: mockModel(['Hi there.']), hooks: [watcher] }).run('Hello');
    expect(seen).toEqual([{ role: 'assistant', content: 'Hi there.' }, 1]);
  });

  it('{ message } replaces the reply in the transcript, and hooks before it in the list see the replacement', async () => {
    const outerSaw: unknown[] = [];
    const outer: Hook = { name: 'outer', afterModel: (ctx) => void outerSaw.push(ctx.messages.at(-1)) };
    const redact: Hook = {
      name: 'redact',
      afterModel: (ctx) => {
        const reply = ctx.messages.at(-1)!;
        return { message: { role: 'assistant', content: String(reply.content).replace(/\d{4}-\d{4}/g, '[card]') } };
      },
    };
    const result = await createAgent({ model: mockModel(['Your card is 1234-5678.']), hooks: [outer, redact] }).run('Card?');
    expect(result.text).toBe('Your card is [card].');
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'Your card is [card].' }]);
    expect(outerSaw).toEqual([{ role: 'assistant', content: 'Your card is [card].' }]);
  });

  it('{ message } is in the transcript as soon as the hook returns, for middleware outside it too', async () => {
    let lastSeen: unknown;
    const outside = defineMiddleware({
      name: 'outside',
      async model(ctx, next) {
        const reply = await next();
        lastSeen = ctx.messages.at(-1);
        return reply;
      },
    });
    const polite: Hook = { afterModel: () => ({ message: { role: 'assistant', content: 'Hello, kindly.' } }) };
    await createAgent({ model: mockModel(['Hello.']), middleware: [outside], hooks: [polite] }).run('Hi');
    expect(lastSeen).toEqual({ role: 'assistant', content: 'Hello, kindly.' });
  });

  it('sees, at the end of ctx.messages, a reply that an inner layer gave instead of the model\'s', async () => {
    let lastSeen: unknown;
    const watcher: Hook = { afterModel: (ctx) => void (lastSeen = ctx.messages.at(-1)) };
    const canned = defineMiddleware({ name: 'canned', model: async (ctx, next) => ({ ...(await next()), message: { role: 'assistant', content: 'Canned.' } }) });
    const result = await createAgent({ model: mockModel(['Fresh.']), hooks: [watcher], }).use(canned).run('Hi');
    expect(lastSeen).toEqual({ role: 'assistant', content: 'Canned.' });
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'Canned.' }]);
  });

  it('{ message } without tool calls means the reply\'s tool calls do not run', async () => {
    const runs = { n: 0 };
    const noTools: Hook = { afterModel: () => ({ message: { role: 'assistant', content: 'I will not call tools.' } }) };
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ name: 'ping' }] }]), tools: [countingTool(runs)], hooks: [noTools] }).run('Ping');
    expect(runs.n).toBe(0);
    expect(result).toMatchObject({ stopReason: 'final', text: 'I will not call tools.' });
  });

  it('{ end, output } ends the run with hook_end, keeps the reply, and runs none of its tool calls', async () => {
    const runs = { n: 0 };
    const stop: Hook = { afterModel: (ctx) => ({ end: true, output: `stopped after ${ctx.modelCalls} call` }) };
    const result = await createAgent({ model: mockModel([{ text: 'Pinging.', toolCalls: [{ name: 'ping' }] }]), tools: [countingTool(runs)], hooks: [stop] }).run('Ping');
    expect(result).toMatchObject({ status: 'completed', stopReason: 'hook_end', output: 'stopped after 1 call', text: 'Pinging.' });
    expect(runs.n).toBe(0);
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Pinging.' });
  });
});

describe('criogen hooks: a throw in onStart, beforeModel or afterModel', () => {
  it.each(['onStart', 'beforeModel', 'afterModel'] as const)('in %s fails the run with hook_failed, the hook\'s name as layer and what was thrown as cause', async (method) => {
    const thrown = new Error(`${method} broke`);
    const hook: Hook = { name: 'fragile', [method]: () => { throw thrown; } };
    const error = await failure(createAgent({ model: mockModel(['Hi.']), hooks: [{ name: 'bystander', onStart: () => undefined }, hook] }).run('Hello'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'fragile' });
    expect(error.cause).toBe(thrown);
    expect(error.message).toMatch(`fragile failed: ${method} broke`);
  });

  it('keeps a thrown non-Error value as the cause', async () => {
    const hook: Hook = { name: 'stringly', beforeModel: () => { throw 'no budget left'; } };
    const error = await failure(createAgent({ model: mockModel(['Hi.']), hooks: [hook] }).run('Hello'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'stringly', cause: 'no budget left' });
  });

  it('takes a failed afterModel\'s reply back out of the transcript, so a retry asks the model again', async () => {
    let calls = 0;
    const flaky: Hook = { afterModel: () => { if (++calls === 1) throw new Error('checker down'); } };
    const agent = createAgent({ model: mockModel(['First.', 'Second.']), hooks: [flaky] });
    const error = await failure(agent.run('Hello'));
    expect(error.state.messages).toEqual([{ role: 'user', content: 'Hello' }]);
    const result = await agent.resume(error.state);
    expect(result.messages).toEqual([{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Second.' }]);
  });
});

describe('criogen hooks: what a HookAction may hold', () => {
  it.each([
    ['beforeModel', { message: { role: 'assistant', content: 'x' } }, /fragile\.beforeModel\(\) returned a field "message" that beforeModel cannot use: \{ message \} is for afterModel only/],
    ['afterModel', { messages: [] }, /fragile\.afterModel\(\) returned a field "messages" that afterModel cannot use: \{ messages \} is for beforeModel only/],
    ['onStart', { stop: true }, /returned a field "stop" that onStart cannot use: a HookAction has only state, messages, message, end, output/],
    ['onStart', 'end', /fragile\.onStart\(\) returned "end"; return a HookAction/],
    ['beforeModel', { end: 'yes' }, /end must be true \(end the run\) or false/],
    ['beforeModel', { messages: [{ role: 'robot', content: 'x' }] }, /returned messages\[0\] is not a message/],
    ['beforeModel', { messages: [{ role: 'tool', content: 'x' }] }, /messages\[0\] is a tool message without toolCallId and name/],
    ['afterModel', { message: { role: 'user', content: 'x' } }, /returned message must be an assistant message/],
    ['afterModel', { message: { role: 'assistant', content: 'x', toolCalls: [{ name: 'ping' }] } }, /toolCalls must be a list of \{ id: string, name: string, args \}/],
  ] as const)('refuses from %s: %j, with an error naming the hook and the fix', async (method, action, pattern) => {
    const hook = { name: 'fragile', [method]: () => action } as Hook;
    const error = await failure(createAgent({ model: mockModel(['Hi.']), hooks: [hook] }).run('Hello'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'fragile' });
    expect(error.message).toMatch(pattern);
  });

  it('treats null and fields set to undefined as nothing', async () => {
    const hook: Hook = { onStart: () => null, beforeModel: () => ({ messages: undefined, end: undefined }), afterModel: () => ({ message: undefined }) };
    const result = await createAgent({ model: mockModel(['Hi.']), hooks: [hook] }).run('Hello');
    expect(result).toMatchObject({ stopReason: 'final', text: 'Hi.' });
  });
});
