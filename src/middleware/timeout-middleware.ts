import { KoagentError, optionsSchema, parseOptions, toolError, type GenerateResult, type Middleware, type ModelContext, type ToolContext, type ToolOutcome } from '../api.js';
import { z } from 'zod';

type Next<T> = () => Promise<T>;

/**
 * Milliseconds a model call and a tool call may take.
 *
 * @example timeoutMiddleware({ model: 60_000, tool: 15_000 })
 *
 * @inline
 */
export interface TimeoutOptions {
  model?: number;
  tool?: number;
}

/**
 * A model call that took too long. `retryable`, so `retryMiddleware` outside it tries again.
 *
 * @example if (TimeoutError.is(error.cause)) console.warn('the model did not answer in time');
 */
export class TimeoutError extends KoagentError {
  readonly retryable = true;
  /** The AI SDK's spelling of `retryable`, which `isRetryableError` (and so `retryMiddleware`) reads. */
  readonly isRetryable = true;
  constructor(what: string, readonly ms: number) {
    super('timeout', `${what} timed out after ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Run `next()` with a deadline: the inner calls get a signal that aborts at the deadline, and
 * the layer stops waiting then even if they ignore it.
 */
async function withDeadline<T>(ms: number, error: () => Error, narrow: (signal: AbortSignal) => (timedOut: boolean) => void, next: Next<T>, onTimeout: () => T | Promise<T>): Promise<T> {
  const deadline = new AbortController();
  const restore = narrow(deadline.signal);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<T>((resolve) => {
    timer = setTimeout(() => {
      deadline.abort(error());
      resolve(onTimeout());
    }, ms);
  });
  try {
    return await Promise.race([next(), expired]);
  } finally {
    clearTimeout(timer);
    restore(deadline.signal.aborted);
  }
}

// The signal a call had before a deadline that expired narrowed it, by call (its context or
// request): a timed-out call keeps its aborted signal — code still running for it (a tool that
// ignored the signal, then checks it) must see that it is over — and a retry starts afresh.
const beforeTimeout = new WeakMap<object, AbortSignal | undefined>();

function before(owner: object, current: AbortSignal | undefined): AbortSignal | undefined {
  return beforeTimeout.has(owner) ? beforeTimeout.get(owner) : current;
}

function after(owner: object, original: AbortSignal | undefined, timedOut: boolean, set: (signal: AbortSignal | undefined) => void): void {
  if (timedOut) {
    beforeTimeout.set(owner, original);
    return;
  }
  beforeTimeout.delete(owner);
  set(original);
}

const ms = z.number({ error: 'must be a number of milliseconds > 0' }).gt(0, { error: 'must be a number of milliseconds > 0' }).refine(Number.isFinite, { error: 'must be a number of milliseconds > 0' });

/** The shape of `timeoutMiddleware`'s options, described once. */
const timeoutOptionsSchema = optionsSchema({ model: ms.optional(), tool: ms.optional() }, { noun: 'a timeout', aliases: { models: 'model', tools: 'tool', modelMs: 'model', toolMs: 'tool', ms: 'model' } });

/**
 * Deadlines for model calls and tool calls. A model call past its deadline fails with a
 * `TimeoutError` (code `timeout`, retryable); a tool call past its deadline settles as an
 * `aborted` tool error the model sees, and the tool's `ctx.signal` aborts.
 *
 * @example agent.use(timeoutMiddleware({ model: 30_000, tool: 10_000 }))
 */
export function timeoutMiddleware(options: TimeoutOptions): Middleware & { name: string } {
  if (typeof options !== 'object' || options === null) throw new TypeError('timeoutMiddleware(options): give { model?: ms, tool?: ms }');
  parseOptions(timeoutOptionsSchema, options, 'timeoutMiddleware');
  if (options.model === undefined && options.tool === undefined) throw new TypeError('timeoutMiddleware(options): give { model?: ms, tool?: ms }');
  const { model: modelMs, tool: toolMs } = options;
  const mw: Middleware & { name: string } = { name: 'timeout' };
  if (modelMs !== undefined) {
    mw.model = function timeout(ctx: ModelContext, next: Next<GenerateResult>) {
      const error = new TimeoutError('the model call', modelMs);
      return withDeadline(modelMs, () => error, (deadline) => {
        const original = before(ctx.request, ctx.request.signal);
        ctx.request.signal = original === undefined ? deadline : AbortSignal.any([original, deadline]);
        return (timedOut) => after(ctx.request, original, timedOut, (signal) => { ctx.request.signal = signal; });
      }, next, () => Promise.reject(error));
    };
  }
  if (toolMs !== undefined) {
    mw.tool = function timeout(ctx: ToolContext, next: Next<ToolOutcome>) {
      const message = `${ctx.toolName} timed out after ${toolMs} ms`;
      return withDeadline(toolMs, () => new KoagentError('timeout', message), (deadline) => {
        const original = before(ctx, ctx.signal)!;
        ctx.signal = AbortSignal.any([original, deadline]);
        return (timedOut) => after(ctx, original, timedOut, (signal) => { ctx.signal = signal!; });
      }, next, () => toolError('aborted', message, 'timeout'));
    };
  }
  return mw;
}
