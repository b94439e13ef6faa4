import { functionSchema, isRetryableError, optionsSchema, parseOptions, wholeNumberSchema, type GenerateResult, type Middleware, type ModelContext } from '../api.js';

// The default policy lives with ProviderError in the public API (model fallback asks it too);
// exported here as well, where users of retryMiddleware have always found it.
export { isRetryableError };
import { z } from 'zod';

/**
 * What a retry is about to do, for logging (`onRetry`) and the `model.retry` event.
 *
 * @example retryMiddleware({ onRetry: ({ attempt, delayMs, error }) => log.warn(`retry ${attempt} in ${delayMs} ms`, error) })
 *
 * @inline
 */
export interface RetryAttempt {
  /** 1 for the first retry, 2 for the second … */
  attempt: number;
  /** How long it waits before calling the model again. */
  delayMs: number;
  /** True when the wait is the server's `Retry-After`, not the backoff. */
  fromRetryAfter: boolean;
  error: unknown;
}

/**
 * Options of `retryMiddleware`. Delays grow as `initialDelayMs * factor^(n-1)`, capped at
 * `maxDelayMs`, with jitter; a server's `Retry-After` replaces the backoff when it is present.
 *
 * @example retryMiddleware({ maxRetries: 5, initialDelayMs: 250 })
 *
 * @inline
 */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** The first backoff delay (default 500 ms). */
  initialDelayMs?: number;
  /** Growth of the delay per retry (default 2). */
  factor?: number;
  /**
   * The longest wait before one retry (default 30 000 ms). When the server's `Retry-After`
   * asks for longer, the error is raised at once instead: waiting less would only fail again.
   */
  maxDelayMs?: number;
  /** Which errors to retry (default `isRetryableError`: a retryable `ProviderError`, an HTTP 408/409/429/5xx status, a network error code). */
  shouldRetry?: (error: unknown, attempt: number) => boolean;
  /** Told before each wait. */
  onRetry?: (info: RetryAttempt) => void;
  /** The wait itself (default: a timer that the signal cancels); tests inject their own. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for the jitter (default `Math.random`). */
  random?: () => number;
}

const millis = (what: string) => z.number({ error: `must be ${what}` }).min(0, { error: `must be ${what}` }).refine(Number.isFinite, { error: `must be ${what}` });

/** The shape of `retryMiddleware`'s options, described once. */
const retryOptionsSchema = optionsSchema({
  maxRetries: wholeNumberSchema(0).optional(),
  initialDelayMs: millis('a finite number of milliseconds ≥ 0').optional(),
  factor: z.number({ error: 'must be a number ≥ 1' }).min(1, { error: 'must be a number ≥ 1' }).refine(Number.isFinite, { error: 'must be a number ≥ 1' }).optional(),
  maxDelayMs: millis('a finite number of milliseconds ≥ 0').optional(),
  shouldRetry: functionSchema('a function (error, attempt) => boolean').optional(),
  onRetry: functionSchema('a function (info) => void').optional(),
  sleep: functionSchema('a function (ms, signal) => Promise<void>').optional(),
  random: functionSchema('a function () => number in [0, 1)').optional(),
}, { noun: 'a retry option', aliases: { retries: 'maxRetries', attempts: 'maxRetries', maxAttempts: 'maxRetries', delay: 'initialDelayMs', initialDelay: 'initialDelayMs', maxDelay: 'maxDelayMs', backoff: 'factor', retryIf: 'shouldRetry' } });

function check(options: RetryOptions): Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'> {
  if (typeof options !== 'object' || options === null) throw new TypeError('retryMiddleware(options): options must be an object');
  parseOptions(retryOptionsSchema, options, 'retryMiddleware');
  const { maxRetries = 3, initialDelayMs = 500, factor = 2, maxDelayMs = 30_000, shouldRetry = isRetryableError, onRetry, sleep = abortableSleep, random = Math.random } = options;
  return { maxRetries, initialDelayMs, factor, maxDelayMs, shouldRetry, onRetry, sleep, random };
}

/**
 * A `model` middleware that calls the model again when it fails with a retryable error (429,
 * 5xx, a network failure): exponential backoff with jitter, the server's `Retry-After` when it
 * gives one, at most `maxRetries` times, and never after the run's signal aborted (an abort
 * during a wait ends the wait at once). Put it outermost, so every layer's retry is covered.
 *
 * @example createAgent({ model: 'openai:gpt-5-mini', middleware: [retryMiddleware({ maxRetries: 4 })] });
 */
export function retryMiddleware(options: RetryOptions = {}): Middleware & { name: 'retry' } {
  const o = check(options);
  return {
    name: 'retry',
    model: async function retry(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await next();
        } catch (error) {
          if (ctx.signal.aborted || attempt > o.maxRetries || !o.shouldRetry(error, attempt)) throw error;
          const asked = (error as { retryAfterMs?: unknown }).retryAfterMs;
          const fromRetryAfter = typeof asked === 'number' && asked >= 0;
          if (fromRetryAfter && asked > o.maxDelayMs) throw error;
          const delayMs = fromRetryAfter ? asked : backoff(o, attempt);
          const info: RetryAttempt = { attempt, delayMs, fromRetryAfter, error };
          o.onRetry?.(info);
          ctx.emit?.({ type: 'model.retry', step: ctx.step, attempt, delayMs, fromRetryAfter, message: (error as Error)?.message ?? String(error) });
          await o.sleep(delayMs, ctx.signal);
          // The wait may have ended because the run was cancelled: stop with the model's error.
          if (ctx.signal.aborted) throw error;
        }
      }
    },
  };
}

/**
 * The n-th backoff delay with "equal jitter": half of it fixed, half random, so retries of many
 * clients spread out while none retries at once.
 */
function backoff(o: { initialDelayMs: number; factor: number; maxDelayMs: number; random: () => number }, attempt: number): number {
  const full = Math.min(o.maxDelayMs, o.initialDelayMs * o.factor ** (attempt - 1));
  return Math.round(full / 2 + o.random() * (full / 2));
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
