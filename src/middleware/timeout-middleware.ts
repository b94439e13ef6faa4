import { KoagentError, toolError, type GenerateResult, type Middleware, type ModelContext, type ToolContext, type ToolOutcome } from '../api.js';

type Next<T> = () => Promise<T>;

/**
 * Milliseconds a model call and a tool call may take.
 *
 * @example timeoutMiddleware({ model: 60_000, tool: 15_000 })
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
async function withDeadline<T>(ms: number, error: () => Error, narrow: (signal: AbortSignal) => () => void, next: Next<T>, onTimeout: () => T | Promise<T>): Promise<T> {
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
    restore();
  }
}

function checkMs(value: unknown, which: string): void {
  if (value !== undefined && (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))) {
    throw new TypeError(`timeoutMiddleware: ${which} must be a number of milliseconds > 0 (got ${String(value)})`);
  }
}

/**
 * Deadlines for model calls and tool calls. A model call past its deadline fails with a
 * `TimeoutError` (code `timeout`, retryable); a tool call past its deadline settles as an
 * `aborted` tool error the model sees, and the tool's `ctx.signal` aborts.
 *
 * @example agent.use(timeoutMiddleware({ model: 30_000, tool: 10_000 }))
 */
export function timeoutMiddleware(options: TimeoutOptions): Middleware & { name: string } {
  if (typeof options !== 'object' || options === null || (options.model === undefined && options.tool === undefined)) {
    throw new TypeError('timeoutMiddleware(options): give { model?: ms, tool?: ms }');
  }
  checkMs(options.model, 'model');
  checkMs(options.tool, 'tool');
  const { model: modelMs, tool: toolMs } = options;
  const mw: Middleware & { name: string } = { name: 'timeout' };
  if (modelMs !== undefined) {
    mw.model = function timeout(ctx: ModelContext, next: Next<GenerateResult>) {
      const error = new TimeoutError('the model call', modelMs);
      return withDeadline(modelMs, () => error, (deadline) => {
        const original = ctx.request.signal;
        ctx.request.signal = original === undefined ? deadline : AbortSignal.any([original, deadline]);
        return () => { ctx.request.signal = original; };
      }, next, () => Promise.reject(error));
    };
  }
  if (toolMs !== undefined) {
    mw.tool = function timeout(ctx: ToolContext, next: Next<ToolOutcome>) {
      const message = `${ctx.toolName} timed out after ${toolMs} ms`;
      return withDeadline(toolMs, () => new KoagentError('timeout', message), (deadline) => {
        const original = ctx.signal;
        ctx.signal = AbortSignal.any([original, deadline]);
        return () => { ctx.signal = original; };
      }, next, () => toolError('aborted', message, 'timeout'));
    };
  }
  return mw;
}
