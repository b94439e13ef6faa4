// The loop: model call → the reply's tool calls → repeat, until a final reply, maxSteps, an
// abort, or a layer ending the run. Concurrency is proven by counting, never by timing.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type RunFailedError } from '../../../src/index.js';
import type { AssistantMessage } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';
import { add, gate, toolError, toolMessages } from '../../support/core.js';

/** Let other tasks run `n` times (macrotask turns, so timers and I/O could interleave too). */
const yieldTimes = async (n: number) => { for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r)); };

/** A tool that counts how many of its calls are running at once. */
function inFlightCounter() {
  const counter = { now: 0, max: 0, finished: [] as number[] };
  const tool = defineTool({
    name: 'work',
    description: 'Does some work',
    input: z.object({ n: z.number() }),
    async execute({ n }) {
      counter.now++;
      counter.max = Math.max(counter.max, counter.now);
      // Earlier calls take more turns, so they finish after later ones.
      await yieldTimes(2 * (5 - n));
      counter.now--;
      counter.finished.push(n);
      return `done ${n}`;
    },
  });
  return { counter, tool };
}

const fourCalls = () => mockModel([{ toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'work', args: { n } })) }, 'All done.']);

describe('stopping', () => {
  it('stops at a reply without tool calls: stopReason final, with its text as text and output', async () => {
    const result = await createAgent({ model: mockModel(['The answer.']) }).run('Q?');
    expect(result).toMatchObject({ status: 'completed', stopReason: 'final', text: 'The answer.', output: 'The answer.' });
  });

  it('stops after maxSteps model turns with stopReason max_steps, the transcript intact and the state plain JSON', async () => {
    const looping = mockModel(Array.from({ length: 5 }, (_, i) => ({ toolCalls: [{ name: 'add', args: { a: i, b: 1 } }] })));
    const result = await createAgent({ model: looping, tools: [add], maxSteps: 3 }).run('Count');
    expect(result.stopReason).toBe('max_steps');
    expect(looping.calls).toHaveLength(3);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
    expect(toolMessages(result.messages).map((m) => m.content)).toEqual(['1', '2', '3']);
    expect(result.state.steps).toBe(3);
    expect(JSON.parse(JSON.stringify(result.state))).toStrictEqual(result.state);
  });

  it('uses 20 as the default maxSteps', async () => {
    const looping = mockModel(Array.from({ length: 25 }, () => ({ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] })));
    const result = await createAgent({ model: looping, tools: [add] }).run('Loop');
    expect(result.stopReason).toBe('max_steps');
    expect(looping.calls).toHaveLength(20);
  });
});

describe('tool calls of one turn', () => {
  it('run concurrently by default', async () => {
    const { counter, tool } = inFlightCounter();
    await createAgent({ model: fourCalls(), tools: [tool] }).run('Go');
    expect(counter.max).toBe(4);
  });

  it('run one at a time with toolConcurrency: 1, and at most N at a time with N', async () => {
    const one = inFlightCounter();
    await createAgent({ model: fourCalls(), tools: [one.tool], toolConcurrency: 1 }).run('Go');
    expect(one.counter.max).toBe(1);
    expect(one.counter.finished).toEqual([1, 2, 3, 4]);
    const two = inFlightCounter();
    await createAgent({ model: fourCalls(), tools: [two.tool], toolConcurrency: 2 }).run('Go');
    expect(two.counter.max).toBe(2);
  });

  it('enter the transcript in the order the model made them, whatever order they finished in', async () => {
    const { counter, tool } = inFlightCounter();
    const result = await createAgent({ model: fourCalls(), tools: [tool] }).run('Go');
    expect(counter.finished).toEqual([4, 3, 2, 1]);
    const reply = result.messages[1] as AssistantMessage;
    const tools = toolMessages(result.messages);
    expect(tools.map((m) => m.content)).toEqual(['done 1', 'done 2', 'done 3', 'done 4']);
    expect(tools.map((m) => m.toolCallId)).toEqual(reply.toolCalls!.map((c) => c.id));
  });
});

describe('ctx.end() from a model layer', () => {
  it('after calling the model: stopReason hook_end with the given output; the reply is kept and its tool calls do not run', async () => {
    let executed = 0;
    const counted = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => { executed++; return a + b; } });
    const model = mockModel([{ text: 'Let me add.', toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }]);
    const agent = createAgent({ model, tools: [counted] }).use({ name: 'stopper', async model(ctx, next) {
      const reply = await next();
      ctx.end({ verdict: 'enough' });
      return reply;
    } });
    const result = await agent.run('Hi');
    expect(result).toMatchObject({ status: 'completed', stopReason: 'hook_end', output: { verdict: 'enough' }, text: 'Let me add.' });
    expect(executed).toBe(0);
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Let me add.' });
  });

  it('without calling the model: stopReason hook_end, no provider call and no reply in the transcript', async () => {
    const model = mockModel(['never']);
    const agent = createAgent({ model }).use({ name: 'budget', model: async (ctx) => ctx.end('out of budget') });
    const result = await agent.run('Hi');
    expect(result).toMatchObject({ stopReason: 'hook_end', output: 'out of budget' });
    expect(model.calls).toHaveLength(0);
    expect(result.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(result.usage.modelCalls).toBe(0);
  });
});

describe('ctx.end() output', () => {
  it('must be JSON, since the run state keeps it: a Map fails the run naming the layer and the fix', async () => {
    const agent = createAgent({ model: mockModel(['never']) }).use({ name: 'ender', model: async (ctx) => ctx.end(new Map([['a', 1]])) });
    const error = await agent.run('go').then(() => undefined, (e: unknown) => e as RunFailedError);
    expect(error?.code).toBe('hook_failed');
    expect(error?.layer).toBe('ender');
    expect(error?.message).toMatch(/ctx\.end\(output\).*must be JSON.*a Map \(convert it with Object\.fromEntries\)/);
  });
});

describe('aborting', () => {
  it('with a signal aborted before the run: stopReason aborted, the model is never called', async () => {
    const model = mockModel(['never']);
    const result = await createAgent({ model }).run('Hi', { signal: AbortSignal.abort() });
    expect(result).toMatchObject({ status: 'completed', stopReason: 'aborted' });
    expect(model.calls).toHaveLength(0);
    expect(result.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('during a slow model call: stopReason aborted and no half reply in the transcript', async () => {
    const model = mockModel(['too late'], { latencyMs: 60_000 });
    const controller = new AbortController();
    const asked = gate();
    const running = createAgent({ model }).run('Hi', { signal: controller.signal, onEvent: (e) => void (e.type === 'model.start' && asked.open()) });
    await asked.promise;
    controller.abort(new Error('user pressed stop'));
    const result = await running;
    expect(result.stopReason).toBe('aborted');
    expect(result.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('during a slow tool that honours ctx.signal: stopReason aborted, and every tool call has a tool message', async () => {
    const started = gate();
    const slow = defineTool({
      name: 'slow',
      description: 'Waits until cancelled',
      input: z.object({}),
      execute: (_args, ctx) => new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        started.open();
      }),
    });
    const model = mockModel([{ toolCalls: [{ name: 'slow', args: {} }, { name: 'slow', args: {} }, { name: 'slow', args: {} }] }, 'never asked']);
    const controller = new AbortController();
    const running = createAgent({ model, tools: [slow], toolConcurrency: 1 }).run('Hi', { signal: controller.signal });
    await started.promise;
    controller.abort(new Error('stop'));
    const result = await running;
    expect(result.stopReason).toBe('aborted');
    expect(model.calls).toHaveLength(1);
    const reply = result.messages[1] as AssistantMessage;
    const tools = toolMessages(result.messages);
    expect(tools.map((m) => m.toolCallId)).toEqual(reply.toolCalls!.map((c) => c.id));
    expect(tools.map((m) => toolError(m)?.kind)).toEqual(['aborted', 'aborted', 'aborted']);
    expect(JSON.parse(JSON.stringify(result.state))).toStrictEqual(result.state);
  });
});
