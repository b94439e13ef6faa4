// ProviderError and the helpers that decide what is retryable and how long to wait.
import { describe, expect, it } from 'vitest';
import { createAgent, KoagentError, ProviderError } from '../../src/index.js';
import { isRetryableStatus } from '../../src/core/vocabulary/provider-error.js';
import { retryAfterMs } from '../../src/providers/retry-after.js';
import { provider, runFailure } from '../support/core.js';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads Retry-After in seconds, fractions included', () => {
    expect(retryAfterMs(new Headers({ 'Retry-After': '7' }), now)).toBe(7000);
    expect(retryAfterMs({ 'retry-after': '0.25' }, now)).toBe(250);
  });

  it('prefers retry-after-ms (OpenAI\'s header) over Retry-After', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '120', 'retry-after': '9' }), now)).toBe(120);
  });

  it('reads an HTTP date as the time left until then, never negative', () => {
    expect(retryAfterMs({ 'Retry-After': 'Thu, 01 Jan 2026 00:00:30 GMT' }, now)).toBe(30_000);
    expect(retryAfterMs({ 'Retry-After': 'Wed, 31 Dec 2025 23:00:00 GMT' }, now)).toBe(0);
  });

  it('is undefined when there is no header, or it cannot be read', () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after-ms': '-5' }, now)).toBeUndefined();
  });
});

describe('isRetryableStatus', () => {
  it('retries timeouts, conflicts, rate limits and server errors, nothing else', () => {
    expect([408, 409, 429, 500, 502, 503, 504, 529].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 413, 422].some(isRetryableStatus)).toBe(false);
  });
});

describe('ProviderError', () => {
  it('is a KoagentError with code model_error whose message says who, what, and whether to retry', () => {
    const error = new ProviderError({ provider: 'openai', modelId: 'gpt-5-mini', kind: 'http', status: 429, providerMessage: 'Rate limit reached.', retryable: true, retryAfterMs: 1500 });
    expect(KoagentError.is(error)).toBe(true);
    expect(ProviderError.is(error)).toBe(true);
    expect(error.code).toBe('model_error');
    expect(error.message).toBe('openai (gpt-5-mini): HTTP 429: Rate limit reached. (retryable, the server asks to wait 1500 ms)');
    expect(ProviderError.is(new KoagentError('model_error', 'x'))).toBe(false);
  });

  it('keeps the cause of a network failure', () => {
    const cause = new TypeError('fetch failed');
    const error = new ProviderError({ provider: 'p', kind: 'network', providerMessage: 'fetch failed', retryable: true, cause });
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('p: network failure: fetch failed (retryable)');
  });
});

describe('a run failed by a ProviderError', () => {
  it('has the ProviderError itself as cause, not the error it wraps, and its message', async () => {
    const failure = new ProviderError({ provider: 'p', kind: 'network', providerMessage: 'socket hang up', retryable: true, cause: new Error('ECONNRESET') });
    const error = await runFailure(createAgent({ model: provider(() => { throw failure; }) }).run('Hi'), 'model_error');
    expect(error.cause).toBe(failure);
    expect(error.message).toBe(failure.message);
  });
});
