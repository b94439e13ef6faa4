// retryMiddleware: which failures it retries, how long it waits (backoff with jitter, or the
// server's Retry-After), when it stops, and that an abort ends it at once. Waits are recorded
// through the injectable `sleep`, so nothing here depends on the clock.
import { describe, expect, it } from 'vitest';
import { createAgent, ProviderError, type AgentEvent, type GenerateOptions } from '../../src/index.js';
import { isRetryableError, retryMiddleware } from '../../src/middleware.js';
import { provider, reply, runFailure } from '../support/core.js';

const rateLimited = (retryAfterMs?: number) => new ProviderError({ provider: 'test', kind: 'http', status: 429, providerMessage: 'slow down', retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
const serverError = () => new ProviderError({ provider: 'test', kind: 'http', status: 500, providerMessage: 'oops', retryable: true });
const badRequest = () => new ProviderError({ provider: 'test', kind: 'http', status: 400, providerMessage: 'bad', retryable: false });

/** A provider that throws `failures` in order, then answers. */
function flaky(failures: unknown[]) {
  return provider((_request: GenerateOptions, call: number) => {
    if (call <= failures.length) throw failures[call - 1];
    return reply(`answer after ${call - 1} failures`);
  });
}

function recorder() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => { waits.push(ms); } };
}

describe('retryMiddleware: what it retries', () => {
  it('retries retryable provider errors until the model answers', async () => {
    const model = flaky([serverError(), rateLimited()]);
    const { waits, sleep } = recorder();
    const result = await createAgent({ model, middleware: [retryMiddleware({ sleep })] }).run('Hi');
    expect(result.text).toBe('answer after 2 failures');
    expect(model.requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
    // Every attempt is a call made (what limits.modelCalls bounds); the failed ones add no tokens.
    expect(result.usage.modelCalls).toBe(3);
    expect(result.messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
  });

  it('does not retry an error that is not retryable', async () => {
    const model = flaky([badRequest()]);
    const error = await runFailure(createAgent({ model, middleware: [retryMiddleware({ sleep: recorder().sleep })] }).run('Hi'), 'model_error');
    expect(model.requests).toHaveLength(1);
    expect(error.cause).toMatchObject({ status: 400 });
  });

  it('does not retry plain errors, but does retry errors that say isRetryable (the AI SDK convention)', async () => {
    const plain = flaky([new Error('a bug')]);
    await runFailure(createAgent({ model: plain, middleware: [retryMiddleware({ sleep: recorder().sleep })] }).run('Hi'), 'model_error');
    expect(plain.requests).toHaveLength(1);
    const aiSdkStyle = flaky([Object.assign(new Error('overloaded'), { isRetryable: true })]);
    await createAgent({ model: aiSdkStyle, middleware: [retryMiddleware({ sleep: recorder().sleep })] }).run('Hi');
    expect(aiSdkStyle.requests).toHaveLength(2);
  });

  it('gives up after maxRetries, failing with the last error', async () => {
    const last = serverError();
    const model = flaky([serverError(), serverError(), last, serverError()]);
    const error = await runFailure(createAgent({ model, middleware: [retryMiddleware({ maxRetries: 2, sleep: recorder().sleep })] }).run('Hi'), 'model_error');
    expect(model.requests).toHaveLength(3);
    expect(error.cause).toBe(last);
  });

  it('asks shouldRetry when given one', async () => {
    const model = flaky([badRequest(), badRequest()]);
    const asked: number[] = [];
    const retry = retryMiddleware({ sleep: recorder().sleep, shouldRetry: (error, attempt) => { asked.push(attempt); return (error as ProviderError).status === 400; } });
    await createAgent({ model, middleware: [retry] }).run('Hi');
    expect(asked).toEqual([1, 2]);
  });
});

describe('isRetryableError: the default policy reads the common shapes of errors', () => {
  const withFields = (fields: object, message = 'failed') => Object.assign(new Error(message), fields);

  it.each([
    ['an HTTP status of 408, 409, 429 or 5xx on the error', [408, 409, 429, 500, 503, 529].map((status) => withFields({ status }))],
    ['a statusCode, or a response.status', [withFields({ statusCode: 502 }), withFields({ response: { status: 429 } })]],
    ['a network error code', ['ECONNRESET', 'ETIMEDOUT', 'ECONNREFUSED'].map((code) => withFields({ code }))],
    ['any of these on the cause', [new Error('fetch failed', { cause: withFields({ code: 'ECONNRESET' }) }), new Error('wrapped', { cause: withFields({ status: 503 }) })]],
    ['retryable: true or isRetryable: true', [withFields({ retryable: true }), withFields({ isRetryable: true })]],
  ])('retries %s', (_what, errors) => {
    for (const error of errors) expect(isRetryableError(error), String((error as Error).message)).toBe(true);
  });

  it.each([
    ['a plain error, even one whose message names a status', new Error('503 Service Unavailable')],
    ['a client error status', withFields({ status: 400 })],
    ['an error that says it is not retryable, whatever its status', withFields({ status: 503, retryable: false })],
    ['a value that is not an error', 'boom'],
  ])('does not retry %s', (_what, error) => {
    expect(isRetryableError(error)).toBe(false);
  });
});

describe('retryMiddleware: how long it waits', () => {
  it('backs off exponentially with equal jitter, capped at maxDelayMs', async () => {
    const model = flaky([serverError(), serverError(), serverError(), serverError()]);
    const { waits, sleep } = recorder();
    const randoms = [0, 0.999999, 0.5, 0];
    const retry = retryMiddleware({ maxRetries: 4, initialDelayMs: 100, factor: 3, maxDelayMs: 1000, sleep, random: () => randoms.shift()! });
    await createAgent({ model, middleware: [retry] }).run('Hi');
    // full delays 100, 300, 900, 1000 (capped); the wait is half of it plus up to the other half
    expect(waits).toEqual([50, 300, 675, 500]);
  });

  it('waits exactly what the server asked for (Retry-After) instead of the backoff', async () => {
    const model = flaky([rateLimited(1500), rateLimited(0)]);
    const { waits, sleep } = recorder();
    await createAgent({ model, middleware: [retryMiddleware({ sleep, random: () => 0.5 })] }).run('Hi');
    expect(waits).toEqual([1500, 0]);
  });

  it('raises at once when Retry-After asks for longer than maxDelayMs', async () => {
    const model = flaky([rateLimited(60_000)]);
    const { waits, sleep } = recorder();
    const error = await runFailure(createAgent({ model, middleware: [retryMiddleware({ sleep, maxDelayMs: 10_000 })] }).run('Hi'), 'model_error');
    expect(waits).toEqual([]);
    expect(model.requests).toHaveLength(1);
    expect(error.cause).toMatchObject({ retryAfterMs: 60_000 });
  });

  it('tells onRetry and the run\'s listeners about each retry', async () => {
    const model = flaky([rateLimited(20)]);
    const infos: unknown[] = [];
    const events: AgentEvent[] = [];
    const retry = retryMiddleware({ sleep: async () => {}, onRetry: (info) => infos.push(info) });
    await createAgent({ model, middleware: [retry], onEvent: (e) => events.push(e) }).run('Hi');
    expect(infos).toEqual([{ attempt: 1, delayMs: 20, fromRetryAfter: true, error: expect.any(ProviderError) }]);
    expect(events.filter((e) => e.type === 'model.retry')).toEqual([
      expect.objectContaining({ type: 'model.retry', step: 1, attempt: 1, delayMs: 20, fromRetryAfter: true, message: expect.stringContaining('slow down') }),
    ]);
  });
});

describe('retryMiddleware: abort', () => {
  it('an abort during the wait ends it at once: no further attempt, the run ends aborted', async () => {
    const controller = new AbortController();
    const model = flaky([serverError(), serverError()]);
    let slept = 0;
    // The real (default) sleep with a long delay: only the abort can end it.
    const retry = retryMiddleware({ initialDelayMs: 10_000_000, maxDelayMs: 10_000_000, onRetry: () => { slept++; queueMicrotask(() => controller.abort()); } });
    const result = await createAgent({ model, middleware: [retry] }).run('Hi', { signal: controller.signal });
    expect(result.stopReason).toBe('aborted');
    expect(slept).toBe(1);
    expect(model.requests).toHaveLength(1);
  });

  it('does not retry once the run was aborted', async () => {
    const controller = new AbortController();
    const model = provider(() => {
      controller.abort();
      throw serverError();
    });
    const { waits, sleep } = recorder();
    const result = await createAgent({ model, middleware: [retryMiddleware({ sleep })] }).run('Hi', { signal: controller.signal });
    expect(result.stopReason).toBe('aborted');
    expect(waits).toEqual([]);
    expect(model.requests).toHaveLength(1);
  });
});

describe('retryMiddleware: the middleware itself', () => {
  it('is named retry, with a named model function, and no other hook point', () => {
    const mw = retryMiddleware();
    expect(mw.name).toBe('retry');
    expect(mw.model?.name).toBe('retry');
    expect(Object.keys(mw).sort()).toEqual(['model', 'name']);
  });

  it('rejects bad options naming the option', () => {
    expect(() => retryMiddleware({ maxRetries: -1 })).toThrow(/retryMiddleware: maxRetries must be a whole number ≥ 0/);
    expect(() => retryMiddleware({ initialDelayMs: Number.NaN })).toThrow(/initialDelayMs must be a finite number/);
    expect(() => retryMiddleware({ maxDelayMs: Infinity })).toThrow(/maxDelayMs must be a finite number/);
    expect(() => retryMiddleware({ factor: 0.5 })).toThrow(/factor must be a number ≥ 1/);
    expect(() => retryMiddleware({ sleep: 5 as never })).toThrow(/sleep must be a function/);
    expect(() => retryMiddleware({ onRetry: 'x' as never })).toThrow(/onRetry must be a function/);
  });

  it('maxRetries: 0 turns retrying off', async () => {
    const model = flaky([serverError()]);
    await runFailure(createAgent({ model, middleware: [retryMiddleware({ maxRetries: 0, sleep: recorder().sleep })] }).run('Hi'), 'model_error');
    expect(model.requests).toHaveLength(1);
  });
});
