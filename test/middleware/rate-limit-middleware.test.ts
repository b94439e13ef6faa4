// rateLimitMiddleware: calls over a limit wait rather than fail (an injected clock and sleep,
// so nothing depends on real time), an abort ends a wait, the counters are shared by every run
// of an instance (and, through a SQLite file, by another process: rate-limit-middleware-processes.test.ts),
// and a 429 with Retry-After pauses the provider for every run (a loopback server behind the real
// openai provider).
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, openai, type AgentEvent } from '../../src/index.js';
import { estimateRequest, type RateLimitOptions, type RateLimitWait } from '../../src/middleware/rate-limit-middleware.js';
import { memoryKeyValues, rateLimitMiddleware, retryMiddleware } from '../../src/middleware.js';
import { mockModel, openaiCompatibleServer } from '../../src/testing/index.js';

const look = defineTool({ name: 'look', description: 'Look', execute: () => 'seen' });

/** A clock that only the recorded sleeps move. */
function fakeTime(start = 1_000_000) {
  const time = { now: start, waits: [] as RateLimitWait[] };
  const options: Pick<RateLimitOptions, 'now' | 'sleep' | 'onWait'> = {
    now: () => time.now,
    sleep: async (ms) => void (time.now += ms),
    onWait: (wait) => void time.waits.push(wait),
  };
  return { time, options };
}

/** A model that asks for `look` `turns - 1` times, then answers. */
const lookingModel = (turns: number, usage?: { inputTokens: number; outputTokens: number }) =>
  mockModel([...Array.from({ length: turns - 1 }, (_, i) => ({ toolCalls: [{ id: `c${i}`, name: 'look', args: {} }], ...(usage ? { usage } : {}) })), { text: 'done', ...(usage ? { usage } : {}) }]);

describe('rateLimitMiddleware: requests per minute', () => {
  it('makes a call over the limit wait for the window to have room, then goes on; the wait is an event', async () => {
    const { time, options } = fakeTime(0);
    const events: AgentEvent[] = [];
    const model = lookingModel(3);
    const agent = createAgent({ model, tools: [look], middleware: [rateLimitMiddleware({ requestsPerMinute: 2, ...options })], onEvent: (e) => void events.push(e) });
    const result = await agent.run('Go');
    expect(result.status).toBe('completed');
    expect(model.calls).toHaveLength(3);
    // Two calls at t=0 fill the window; the third waits until the window's count, weighted in the next one, leaves room.
    expect(time.waits).toEqual([{ key: 'mockModel/mock', reason: 'requests', waitMs: 90_000 }]);
    expect(events.filter((e) => e.type === 'rate-limit.wait')).toHaveLength(time.waits.length);
    expect(events.find((e) => e.type === 'rate-limit.wait')).toMatchObject({ key: 'mockModel/mock', reason: 'requests', step: 3 });
  });

  it('counts in a sliding window: at the start of the next window the previous one still counts', async () => {
    const { time, options } = fakeTime(0);
    const limit = rateLimitMiddleware({ requestsPerMinute: 2, ...options });
    const agent = createAgent({ model: mockModel(['a', 'b', 'c']), middleware: [limit] });
    await agent.run('1');
    await agent.run('2');
    time.now = 60_000; // the next window opens with the previous one full: no room yet
    await agent.run('3');
    expect(time.waits[0]).toMatchObject({ reason: 'requests' });
    // Room comes when half the previous window has slid out: 2 * (1 - 0.5) + 0 + 1 ≤ 2.
    expect(time.now).toBe(90_000);
  });

  it('ends a wait at once when the run is aborted', async () => {
    const cancel = new AbortController();
    const limit = rateLimitMiddleware({ requestsPerMinute: 1, onWait: () => cancel.abort() });
    const model = mockModel(['a', 'b']);
    const agent = createAgent({ model, middleware: [limit] });
    await agent.run('first');
    // A minute's wait, cut short (else the test would time out): the run stopped as aborted, its call never made.
    const result = await agent.run('second', { signal: cancel.signal });
    expect(result.stopReason).toBe('aborted');
    expect(model.calls).toHaveLength(1);
  });
});

describe('rateLimitMiddleware: tokens per minute', () => {
  it('charges an estimate before the call and the reply usage after it', async () => {
    const { time, options } = fakeTime(0);
    const model = lookingModel(3, { inputTokens: 40, outputTokens: 20 });
    const agent = createAgent({ model, tools: [look], middleware: [rateLimitMiddleware({ tokensPerMinute: 100, ...options })] });
    await agent.run('Go');
    // 60 tokens for the first call (its estimate corrected to the usage), 120 after the second: the third waits.
    expect(model.calls).toHaveLength(3);
    expect(time.waits.map((w) => w.reason)).toContain('tokens');
  });

  it('estimates a run\'s live request as it estimates a plain copy of it, its tool calls and tools by their JSON', async () => {
    const estimates: [number, number][] = [];
    let withoutReply = 0;
    const measure = { name: 'measure', model: (ctx: { request: Parameters<typeof estimateRequest>[0] }, next: () => Promise<unknown>) => {
      estimates.push([estimateRequest(ctx.request), estimateRequest(JSON.parse(JSON.stringify({ ...ctx.request, signal: undefined })))]);
      withoutReply = estimateRequest({ ...ctx.request, maxTokens: undefined });
      return next();
    } };
    const agent = createAgent({ model: lookingModel(3), tools: [look], modelSettings: { maxTokens: 50 }, middleware: [measure as never] });
    await agent.run('x'.repeat(40));
    expect(estimates).toHaveLength(3);
    for (const [live, copy] of estimates) expect(live).toBe(copy);
    expect(estimates[2][0] - withoutReply).toBe(50);
    expect(estimates[1][0]).toBeGreaterThan(estimates[0][0]);
  });

  it('lets a call bigger than the whole budget through, alone in its window', async () => {
    const { time, options } = fakeTime(0);
    const agent = createAgent({ model: mockModel(['ok']), middleware: [rateLimitMiddleware({ tokensPerMinute: 10, ...options })] });
    expect((await agent.run('x'.repeat(400))).status).toBe('completed');
    expect(time.waits).toEqual([]);
  });
});

describe('rateLimitMiddleware: shared counters', () => {
  it('is shared by every run using the instance, of any agent', async () => {
    const { time, options } = fakeTime(0);
    const limit = rateLimitMiddleware({ requestsPerMinute: 1, key: () => 'one-budget', ...options });
    await createAgent({ model: mockModel(['a']), middleware: [limit] }).run('Hi');
    await createAgent({ model: mockModel(['b']), middleware: [limit] }).run('Hi');
    expect(time.waits).toHaveLength(1);
    // Two instances are two budgets.
    const other = fakeTime(0);
    await createAgent({ model: mockModel(['c']), middleware: [rateLimitMiddleware({ requestsPerMinute: 1, key: () => 'one-budget', ...other.options })] }).run('Hi');
    expect(other.time.waits).toEqual([]);
  });
});

describe('rateLimitMiddleware: learning from 429', () => {
  it('pauses the provider for every run until the Retry-After of a 429 from the real openai provider', async () => {
    const server = await openaiCompatibleServer({
      responses: [
        { status: 429, body: { error: { message: 'Rate limit reached', type: 'requests' } }, headers: { 'retry-after-ms': '1500' } },
        { reply: { text: 'hello' } },
        { reply: { text: 'hello again' } },
      ],
    });
    try {
      const { time, options } = fakeTime(5_000);
      const limit = rateLimitMiddleware({ requestsPerMinute: 100, ...options });
      const model = openai({ model: 'gpt-5-mini', baseURL: server.baseURL, apiKey: 'sk-test' });
      // The first run has no retry: it fails with the 429, and the limiter learns the pause.
      const first = await createAgent({ model, middleware: [limit] }).run('Hi').then(() => 'completed', (e: { cause?: { status?: number } }) => e.cause?.status);
      expect(first).toBe(429);
      // Another run, of another agent, waits out the pause before it asks the server.
      const second = await createAgent({ model, middleware: [limit] }).run('Hi');
      expect(second.text).toBe('hello');
      expect(time.waits).toEqual([{ key: 'openai/gpt-5-mini', reason: 'paused', waitMs: 1500 }]);
      expect(server.requests).toHaveLength(2);
      // With retryMiddleware outside it, a 429 is retried after the limiter's pause.
      expect((await createAgent({ model, middleware: [retryMiddleware({ sleep: async () => undefined }), limit] }).run('Hi')).text).toBe('hello again');
    } finally {
      await server.close();
    }
  });

  it('pauses for pauseMs after a 429 without Retry-After, in the store other processes read', async () => {
    const store = memoryKeyValues();
    const { time, options } = fakeTime(0);
    let calls = 0;
    const model = { name: 'p', modelId: 'm', async generate() {
      if (++calls === 1) throw Object.assign(new Error('slow down'), { status: 429 });
      return { message: { role: 'assistant' as const, content: 'ok' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' as const };
    } };
    const limit = rateLimitMiddleware({ pauseMs: 250, store, ...options });
    await createAgent({ model, middleware: [limit] }).run('Hi').catch(() => undefined);
    expect(await store.get('rate-limit:p/m:paused')).toBe(250);
    await createAgent({ model, middleware: [limit] }).run('Hi');
    expect(time.waits).toEqual([{ key: 'p/m', reason: 'paused', waitMs: 250 }]);
  });
});

describe('rateLimitMiddleware: options', () => {
  it('refuses what is not an option, naming the closest, and bad values with the fix', () => {
    expect(() => rateLimitMiddleware({ requestsPerMinut: 5 } as never)).toThrow('rateLimitMiddleware: requestsPerMinut is not a rate-limit option; did you mean `requestsPerMinute`?');
    expect(() => rateLimitMiddleware({ rpm: 5 } as never)).toThrow('did you mean `requestsPerMinute`?');
    expect(() => rateLimitMiddleware({ tokensPerMinute: 0 })).toThrow('rateLimitMiddleware: tokensPerMinute must be a positive number of tokens per window (got 0)');
    expect(() => rateLimitMiddleware({ key: 'openai' as never })).toThrow('key must be a function (ctx) => string');
    expect(rateLimitMiddleware().name).toBe('rate-limit');
    expect(rateLimitMiddleware().model!.name).toBe('rateLimit');
  });
});
