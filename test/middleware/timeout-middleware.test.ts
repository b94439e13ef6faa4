// timeoutMiddleware: deadlines for model calls and tool calls. Timers are faked, so a deadline
// passes exactly when the test moves the clock, and no test depends on how fast the machine is.
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAgent, defineTool, KoagentError, RunFailedError, type GenerateOptions, type GenerateResult, type Middleware } from '../../src/index.js';
import { isRetryableError, retryMiddleware, TimeoutError, timeoutMiddleware } from '../../src/middleware.js';
import { mockModel } from '../../src/testing/index.js';
import { add, rejection, reply } from '../support/core.js';

beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
afterEach(() => void vi.useRealTimers());

/** A provider that answers each request only when the test says so (or never). */
function heldModel() {
  const requests: GenerateOptions[] = [];
  const answers: ((result: GenerateResult) => void)[] = [];
  return {
    name: 'held',
    requests,
    answer: (i: number, result: GenerateResult) => answers[i](result),
    generate(request: GenerateOptions) {
      requests.push(request);
      return new Promise<GenerateResult>((resolve) => answers.push(resolve));
    },
  };
}

/** A tool that waits for its signal; `ignoreSignal` makes it wait for the test instead. */
function slowTool(seen: { signals: AbortSignal[]; finish?: () => void }, ignoreSignal = false) {
  return defineTool({
    name: 'slow',
    description: 'Slow',
    input: z.object({}),
    execute: (_args, ctx) => new Promise<string>((resolve, reject) => {
      seen.signals.push(ctx.signal);
      seen.finish = () => resolve('finished late');
      if (!ignoreSignal) ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
    }),
  });
}

const retryTimeouts: Middleware = {
  name: 'retry-timeouts',
  async model(_ctx, next) {
    try {
      return await next();
    } catch (error) {
      if ((error as { retryable?: boolean }).retryable !== true) throw error;
      return next();
    }
  },
};

describe('timeoutMiddleware: model calls', () => {
  it('fails the run with a TimeoutError (code timeout, retryable) when the call passes its deadline, and aborts the request', async () => {
    const model = heldModel();
    const agent = createAgent({ model }).use(timeoutMiddleware({ model: 1000 }));
    const running = rejection(agent.run('Hi'));
    await vi.advanceTimersByTimeAsync(999);
    expect(model.requests[0].signal!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await running;
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error.code).toBe('timeout');
    expect(error.layer).toBe('timeout');
    expect(error.cause).toBeInstanceOf(TimeoutError);
    const timeout = error.cause as TimeoutError;
    expect(timeout).toMatchObject({ code: 'timeout', retryable: true, ms: 1000, message: 'the model call timed out after 1000 ms' });
    expect(KoagentError.is(timeout)).toBe(true);
    expect(model.requests[0].signal!.aborted).toBe(true);
    expect(model.requests[0].signal!.reason).toBe(timeout);
    expect(error.state.messages.map((m) => m.role)).toEqual(['user']);
  });

  it('lets a call within its deadline through and leaves no timer behind', async () => {
    const agent = createAgent({ model: mockModel(['Quick.']) }).use(timeoutMiddleware({ model: 1000, tool: 1000 }));
    expect((await agent.run('Hi')).text).toBe('Quick.');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives the layers outside it the request signal they had, once the call settled', async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const outer: Middleware = { name: 'outer', async model(ctx, next) { seen.push(ctx.request.signal); const r = await next(); seen.push(ctx.request.signal); return r; } };
    await createAgent({ model: mockModel(['Hi.']), middleware: [outer, timeoutMiddleware({ model: 1000 })] }).run('Hi');
    expect(seen[1]).toBe(seen[0]);
  });

  it('is retried by a layer outside it, and the late reply of the given-up attempt never enters the transcript', async () => {
    const model = heldModel();
    const agent = createAgent({ model, middleware: [retryTimeouts, timeoutMiddleware({ model: 1000 })] });
    const running = agent.run('Hi');
    await vi.advanceTimersByTimeAsync(1000);
    expect(model.requests).toHaveLength(2);
    model.answer(1, reply('On time.'));
    const result = await running;
    model.answer(0, reply('Too late.'));
    await vi.advanceTimersByTimeAsync(0);
    expect(result.text).toBe('On time.');
    expect(result.messages).toEqual([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'On time.' }]);
    expect(result.usage.modelCalls).toBe(1);
  });

  it('is retried by the built-in retryMiddleware placed outside it', async () => {
    const model = heldModel();
    const retries: number[] = [];
    const agent = createAgent({ model, middleware: [retryMiddleware({ initialDelayMs: 0, onRetry: ({ attempt }) => void retries.push(attempt) }), timeoutMiddleware({ model: 1000 })] });
    const running = agent.run('Hi');
    await vi.advanceTimersByTimeAsync(1000);
    // The backoff before the retry (0 ms; a fake timer of 0 runs on the next tick).
    await vi.advanceTimersByTimeAsync(1);
    expect(model.requests).toHaveLength(2);
    model.answer(1, reply('Second time lucky.'));
    expect((await running).text).toBe('Second time lucky.');
    expect(retries).toEqual([1]);
    expect(isRetryableError(new TimeoutError('the model call', 5))).toBe(true);
  });

  it('aborts a streamed call at its deadline too', async () => {
    const agent = createAgent({ model: mockModel(['one two three four'], { deltaLatencyMs: 400 }) }).use(timeoutMiddleware({ model: 1000 }));
    const stream = agent.stream('Count');
    const deltas: string[] = [];
    const consumed = (async () => {
      try {
        for await (const event of stream) if (event.type === 'text.delta') deltas.push(event.delta);
      } catch {
        // the run's failure ends the loop; `result` carries it
      }
    })();
    await vi.advanceTimersByTimeAsync(1000);
    const error = await rejection(stream.result);
    await consumed;
    expect(error.code).toBe('timeout');
    expect(deltas).toEqual(['one ', 'two ']);
  });
});

describe('timeoutMiddleware: tool calls', () => {
  it('leaves a timed-out call\'s ctx.signal aborted: a tool that ignored it and checks it afterwards sees the call is over', async () => {
    let sawAborted: boolean | undefined;
    const stubborn = defineTool({
      name: 'stubborn', description: 'Ignores its signal for a while',
      async execute(_args, ctx) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        sawAborted = ctx.signal.aborted;
        return 'finished anyway';
      },
    });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'stubborn' }] }, 'It timed out.']), tools: [stubborn] }).use(timeoutMiddleware({ tool: 500 }));
    const running = agent.run('Go');
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await running).text).toBe('It timed out.');
    expect(sawAborted).toBe(true);
  });

  it('settles a call past its deadline as an aborted tool error the model sees, and aborts the tool\'s signal', async () => {
    const seen: { signals: AbortSignal[] } = { signals: [] };
    const model = mockModel([{ toolCalls: [{ name: 'slow' }] }, 'It timed out.']);
    const agent = createAgent({ model, tools: [slowTool(seen)] }).use(timeoutMiddleware({ tool: 500 }));
    const running = agent.run('Go');
    await vi.advanceTimersByTimeAsync(500);
    const result = await running;
    expect(seen.signals[0].aborted).toBe(true);
    expect(seen.signals[0].reason).toMatchObject({ code: 'timeout', message: 'slow timed out after 500 ms' });
    const toolMessage = result.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.metadata?.error).toEqual({ kind: 'aborted', message: 'slow timed out after 500 ms', by: 'timeout' });
    expect(model.calls[1].messages.at(-1)?.content).toBe('Error (aborted): slow timed out after 500 ms');
    expect(result.text).toBe('It timed out.');
  });

  it('stops waiting at the deadline even for a tool that ignores its signal', async () => {
    const seen: { signals: AbortSignal[]; finish?: () => void } = { signals: [] };
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'slow' }] }, 'Moved on.']), tools: [slowTool(seen, true)] }).use(timeoutMiddleware({ tool: 500 }));
    const running = agent.run('Go');
    await vi.advanceTimersByTimeAsync(500);
    const result = await running;
    expect(result.text).toBe('Moved on.');
    seen.finish!();
    await vi.advanceTimersByTimeAsync(0);
    expect(result.messages.filter((m) => m.role === 'tool').map((m) => m.metadata?.error)).toEqual([{ kind: 'aborted', message: 'slow timed out after 500 ms', by: 'timeout' }]);
  });

  it('narrows ctx.signal only for the layers inside it, and still aborts it when the run is cancelled', async () => {
    const seen: { signals: AbortSignal[] } = { signals: [] };
    const outerSignals: AbortSignal[] = [];
    const outer: Middleware = { name: 'outer', async tool(ctx, next) { outerSignals.push(ctx.signal); const out = await next(); outerSignals.push(ctx.signal); return out; } };
    const controller = new AbortController();
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'slow' }] }]), tools: [slowTool(seen)], middleware: [outer, timeoutMiddleware({ tool: 60_000 })] });
    const running = agent.run('Go', { signal: controller.signal });
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.signals[0]).not.toBe(outerSignals[0]);
    controller.abort('user stop');
    const result = await running;
    expect(seen.signals[0].aborted).toBe(true);
    expect(outerSignals[1]).toBe(outerSignals[0]);
    expect(result.stopReason).toBe('aborted');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves other tools alone: a fast call keeps its result', async () => {
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 2 } }] }, 'Four.']), tools: [add] }).use(timeoutMiddleware({ tool: 500 }));
    const result = await agent.run('2+2');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toBe('4');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('timeoutMiddleware: options', () => {
  it('needs at least one deadline', () => {
    expect(() => timeoutMiddleware({})).toThrow(new TypeError('timeoutMiddleware(options): give { model?: ms, tool?: ms }'));
    expect(() => timeoutMiddleware(undefined as never)).toThrow(TypeError);
  });

  it.each([0, -5, Number.NaN, Infinity, '500'])('rejects %s as a deadline, naming which one', (ms) => {
    const got = typeof ms === 'string' ? `the string "${ms}"` : String(ms);
    expect(() => timeoutMiddleware({ tool: ms as number })).toThrow(new TypeError(`timeoutMiddleware: tool must be a number of milliseconds > 0 (got ${got})`));
    expect(() => timeoutMiddleware({ model: ms as number })).toThrow(/timeoutMiddleware: model must be a number of milliseconds > 0/);
  });

  it('is one layer named "timeout" with only the hook points it was given', () => {
    expect(Object.keys(timeoutMiddleware({ tool: 5 })).sort()).toEqual(['name', 'tool']);
    expect(timeoutMiddleware({ model: 5 }).name).toBe('timeout');
  });
});
