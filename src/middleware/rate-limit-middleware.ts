import { z } from 'zod';
import { estimateTokens, functionSchema, jsonOf, optionsSchema, parseOptions, type GenerateOptions, type GenerateResult, type Middleware, type ModelContext } from '../api.js';
import { keyValuesOf, type KeyValueSource, type KeyValueStore } from '../stores/key-values.js';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'rate-limit.wait': { step: number } & RateLimitWait;
  }
}

/**
 * Why a call waits, and for how long: what `onWait` and the `rate-limit.wait` event get.
 *
 * @example rateLimitMiddleware({ requestsPerMinute: 60, onWait: ({ key, reason, waitMs }) => log.info(`${key}: waiting ${waitMs} ms (${reason})`) })
 *
 * @inline
 */
export interface RateLimitWait {
  /** The limited key (by default the provider's `name/modelId`). */
  key: string;
  /** `requests` or `tokens`: the window is full; `paused`: the server said 429 and asked to wait. */
  reason: 'requests' | 'tokens' | 'paused';
  waitMs: number;
}

/**
 * Options of `rateLimitMiddleware`. Limits count per key, in a sliding window of `windowMs`
 * (a minute): the current fixed window's count plus the previous one's, weighted by how much of
 * it still lies within the last `windowMs`.
 *
 * @example rateLimitMiddleware({ requestsPerMinute: 500, tokensPerMinute: 200_000, store: await postgresStore({ connectionString }) })
 *
 * @inline
 */
export interface RateLimitOptions {
  /** Model calls per window and key (default: no limit). */
  requestsPerMinute?: number;
  /** Tokens per window and key: estimated before a call (input and `maxTokens`), corrected by the reply's usage after (default: no limit). */
  tokensPerMinute?: number;
  /** Which budget a call draws on (default: the provider's `name/modelId`, e.g. `openai/gpt-5-mini`). */
  key?: (ctx: ModelContext) => string;
  /** Where the counters and pauses live: a key-value store or a run store (default: this instance's memory). A SQLite or PostgreSQL store shares them between processes. */
  store?: KeyValueSource;
  /** How long a 429 without `Retry-After` pauses its key (default 1000 ms; 0: no pause). */
  pauseMs?: number;
  /** The window's length (default 60 000 ms); `…PerMinute` then means per window. */
  windowMs?: number;
  /** Told before each wait. */
  onWait?: (info: RateLimitWait) => void;
  /** The clock, in milliseconds (default `Date.now`); tests inject their own. */
  now?: () => number;
  /** The wait itself (default: a timer that the signal cancels); tests inject their own. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const positive = (what: string) => z.number({ error: `must be ${what}` }).positive({ error: `must be ${what}` }).refine(Number.isFinite, { error: `must be ${what}` });

const rateLimitSchema = optionsSchema({
  requestsPerMinute: positive('a positive number of model calls per window').optional(),
  tokensPerMinute: positive('a positive number of tokens per window').optional(),
  key: functionSchema('a function (ctx) => string').optional(),
  store: z.custom<KeyValueSource>((value) => typeof value === 'object' && value !== null, { error: 'must be a key-value store or a run store (memoryKeyValues(), sqliteStore(…), postgresStore(…))' }).optional(),
  pauseMs: z.number({ error: 'must be a number of milliseconds ≥ 0' }).min(0, { error: 'must be a number of milliseconds ≥ 0' }).refine(Number.isFinite, { error: 'must be a number of milliseconds ≥ 0' }).optional(),
  windowMs: positive('a positive number of milliseconds').optional(),
  onWait: functionSchema('a function (info) => void').optional(),
  now: functionSchema('a function () => milliseconds').optional(),
  sleep: functionSchema('a function (ms, signal) => Promise<void>').optional(),
}, { noun: 'a rate-limit option', aliases: { rpm: 'requestsPerMinute', requests: 'requestsPerMinute', requestsPerMin: 'requestsPerMinute', tpm: 'tokensPerMinute', tokens: 'tokensPerMinute', keyValues: 'store', window: 'windowMs', clock: 'now' } });

/**
 * A `model` middleware that keeps model calls within requests and tokens per minute, per
 * provider: a call over the limit waits (abortably, on the run's signal) until the window has
 * room, rather than failing. Every run using the instance shares the counters; with
 * `store: sqliteStore(…)` or `postgresStore(…)` every process does. A 429 pauses the key for
 * every run until the server's `Retry-After`, and the pause is kept in the store, so other
 * processes wait too. Put it inside `retryMiddleware` (each attempt is a request) and inside a
 * response cache (a hit spends nothing).
 *
 * @example createAgent({ model, middleware: [retryMiddleware(), rateLimitMiddleware({ requestsPerMinute: 60, tokensPerMinute: 90_000 })] });
 */
export function rateLimitMiddleware(options: RateLimitOptions = {}): Middleware & { name: 'rate-limit' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('rateLimitMiddleware(options): options must be an object');
  parseOptions(rateLimitSchema, options, 'rateLimitMiddleware');
  const { requestsPerMinute, tokensPerMinute, key = providerKey, pauseMs = 1000, windowMs = 60_000, onWait, now = Date.now, sleep = abortableSleep } = options;
  const values = keyValuesOf(options.store);
  const counters = new Counters(values, windowMs, now);
  return {
    name: 'rate-limit',
    model: async function rateLimit(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const limited = key(ctx);
      if (typeof limited !== 'string' || limited === '') throw new TypeError('rateLimitMiddleware: key(ctx) must return a non-empty string');
      const tokens = tokensPerMinute === undefined ? 0 : estimateRequest(ctx.request);
      let taken: Taken;
      for (;;) {
        const wait = await counters.take(limited, requestsPerMinute, tokensPerMinute, tokens);
        if ('window' in wait) {
          taken = wait;
          break;
        }
        const info: RateLimitWait = { key: limited, reason: wait.reason, waitMs: wait.waitMs };
        onWait?.(info);
        ctx.emit?.({ type: 'rate-limit.wait', step: ctx.step, ...info });
        await sleep(wait.waitMs, ctx.signal);
        ctx.signal.throwIfAborted();
      }
      let result: GenerateResult;
      try {
        result = await next();
      } catch (error) {
        // A refused call spent no tokens; it was a request all the same.
        if (tokensPerMinute !== undefined) await counters.correct(limited, taken.window, -tokens);
        const status = (error as { status?: unknown })?.status;
        if (status === 429) {
          const asked = (error as { retryAfterMs?: unknown }).retryAfterMs;
          const ms = typeof asked === 'number' && asked >= 0 ? asked : pauseMs;
          if (ms > 0) await counters.pause(limited, ms);
        }
        throw error;
      }
      if (tokensPerMinute !== undefined) {
        const spent = result.usage.inputTokens + result.usage.outputTokens;
        if (spent !== tokens) await counters.correct(limited, taken.window, spent - tokens);
      }
      return result;
    },
  };
}

/** The default key: the provider's name and model id. */
function providerKey(ctx: ModelContext): string {
  const { name, modelId } = ctx.provider;
  return `${name ?? 'model'}/${modelId ?? ''}`;
}

/**
 * The tokens a request is estimated to spend before it is made (what `rateLimitMiddleware`
 * charges, then corrects by the reply's usage): its messages and tool calls at four characters a
 * token (`estimateTokens`), its tools' specs, and the reply it allows (`maxTokens`).
 *
 * @example const tokens = estimateRequest(ctx.request);
 */
export function estimateRequest(request: GenerateOptions): number {
  let tokens = 0;
  // jsonOf, not JSON.stringify: the same length, without reading the transcript's views one property at a time.
  for (const message of request.messages) {
    tokens += estimateTokens(message.content);
    if (message.role === 'assistant' && message.toolCalls !== undefined) tokens += Math.ceil(jsonOf(message.toolCalls)!.length / 4);
  }
  if (request.tools.length > 0) tokens += Math.ceil(jsonOf(request.tools)!.length / 4);
  return tokens + (typeof request.maxTokens === 'number' ? request.maxTokens : 0);
}

type Taken = { window: number };
type Wait = { reason: RateLimitWait['reason']; waitMs: number };

/**
 * The counters of one instance, in its key-value store: per key and fixed window (its index),
 * one for requests and one for tokens, each kept two windows; and the key's pause (until when).
 */
class Counters {
  constructor(private readonly values: KeyValueStore, private readonly windowMs: number, private readonly now: () => number) {}

  #name(key: string, what: 'requests' | 'tokens', window: number): string {
    return `rate-limit:${key}:${what}:${window}`;
  }

  /**
   * Take a request and `tokens` from the key's window, or say how long to wait. A counter is
   * added to first and read back (one atomic step), and given back when it went over: two
   * processes taking the last place at once cannot both have it.
   */
  async take(key: string, requests: number | undefined, tokensLimit: number | undefined, tokens: number): Promise<Taken | Wait> {
    const now = this.now();
    const until = Number(await this.values.get(`rate-limit:${key}:paused`));
    if (until > now) return { reason: 'paused', waitMs: until - now };
    const window = Math.floor(now / this.windowMs);
    const into = (now - window * this.windowMs) / this.windowMs;
    const ttlMs = 2 * this.windowMs + 1000;
    if (requests !== undefined) {
      const wait = await this.#draw(key, 'requests', window, into, requests, 1, ttlMs);
      if (wait !== undefined) return wait;
    }
    if (tokensLimit !== undefined) {
      // A call bigger than the whole budget goes alone, into a window otherwise empty.
      const wait = await this.#draw(key, 'tokens', window, into, tokensLimit, Math.min(tokens, tokensLimit), ttlMs, tokens - Math.min(tokens, tokensLimit));
      if (wait !== undefined) {
        if (requests !== undefined) await this.values.add(this.#name(key, 'requests', window), -1, { ttlMs });
        return wait;
      }
    }
    return { window };
  }

  async #draw(key: string, what: 'requests' | 'tokens', window: number, into: number, limit: number, amount: number, ttlMs: number, extra = 0): Promise<Wait | undefined> {
    const name = this.#name(key, what, window);
    const current = await this.values.add(name, amount + extra, { ttlMs });
    const previous = Number(await this.values.get(this.#name(key, what, window - 1))) || 0;
    const weighted = previous * (1 - into);
    if (weighted + current - extra <= limit) return undefined;
    await this.values.add(name, -(amount + extra), { ttlMs });
    const before = current - amount - extra;
    // When the previous window's share has shrunk enough; when this window alone is too full,
    // into the next one, as far as this window's count (then the weighted one) must shrink.
    const room = limit - before - amount;
    const at = room >= 0 ? 1 - room / previous : 1 + Math.max(0, 1 - (limit - amount) / before);
    const waitMs = Math.max(1, Math.ceil((at - into) * this.windowMs));
    return { reason: what, waitMs };
  }

  /** Add `delta` tokens to the window a call was taken from (the reply's usage, less the estimate). */
  async correct(key: string, window: number, delta: number): Promise<void> {
    await this.values.add(this.#name(key, 'tokens', window), delta, { ttlMs: 2 * this.windowMs + 1000 });
  }

  /** Pause the key for every run and process until `ms` from now (a later pause wins). */
  async pause(key: string, ms: number): Promise<void> {
    const name = `rate-limit:${key}:paused`;
    const until = this.now() + ms;
    const held = Number(await this.values.get(name)) || 0;
    if (until > held) await this.values.set(name, until, { ttlMs: Math.max(1, ms) });
  }
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
