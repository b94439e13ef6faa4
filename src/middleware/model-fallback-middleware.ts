import { functionSchema, isRetryableError, optionsSchema, ownValue, setOwn, parseOptions, type GenerateResult, type Middleware, type ModelContext, type ModelProvider } from '../api.js';
import { z } from 'zod';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'model.fallback': { step: number; from: string; to: string; attempt: number; message: string };
  }
}

/**
 * What a fallback is about to do, for logging (`onFallback`) and the `model.fallback` event.
 *
 * @example modelFallbackMiddleware({ models: [backup], onFallback: ({ from, to, error }) => log.warn(`${from} failed, asking ${to}`, error) })
 *
 * @inline
 */
export interface FallbackAttempt {
  /** The model that failed (its `modelId`, else its `name`). */
  from: string;
  /** The model asked next. */
  to: string;
  /** 1 for the first fallback of this call, 2 for the second … */
  attempt: number;
  error: unknown;
}

/**
 * What the middleware keeps in hook state (`state.hookState['model-fallback']`): per model, the
 * calls it answered and their tokens, the calls that failed over to the next, and which model
 * answered last.
 *
 * @example const { byModel } = result.state.hookState['model-fallback'] as FallbackRecord;
 */
export interface FallbackRecord {
  byModel: Record<string, { calls: number; failures: number; inputTokens: number; outputTokens: number }>;
  /** The model that answered the last call. */
  lastModel?: string;
}

/**
 * Options of `modelFallbackMiddleware`.
 *
 * @example modelFallbackMiddleware({ models: [resolveModel('openai:gpt-5-mini'), anthropicModel] })
 *
 * @inline
 */
export interface ModelFallbackOptions {
  /**
   * The models to ask, in order, after the one the call was going to ask (the agent's model)
   * failed. Providers: for a model string use `resolveModel('openai:gpt-5-mini')` from the
   * package root, which resolves it exactly as the agent's `model` option does.
   */
  models: ModelProvider[];
  /** Which failures move on to the next model (default `isRetryableError`: 408, 409, 429, 5xx, network errors). */
  shouldFallback?: (error: unknown, provider: ModelProvider) => boolean;
  /** Told before each fallback. */
  onFallback?: (info: FallbackAttempt) => void;
}

const NAME = 'model-fallback';

const provider = z.custom<ModelProvider>((value) => typeof value === 'object' && value !== null && typeof (value as ModelProvider).generate === 'function', {
  error: "must be a model provider (an object with generate); for a model string write resolveModel('openai:gpt-5-mini') (from 'koagent')",
});

/** The shape of `modelFallbackMiddleware`'s options, described once. */
const fallbackOptionsSchema = optionsSchema({
  models: z.array(provider, { error: 'must be a list of model providers to ask in order' }).min(1, { error: 'must name at least one model to fall back to' }),
  shouldFallback: functionSchema('a function (error, provider) => boolean').optional(),
  onFallback: functionSchema('a function (info) => void').optional(),
}, { noun: 'a model fallback option', aliases: { fallbacks: 'models', providers: 'models', fallbackModels: 'models', when: 'shouldFallback', shouldRetry: 'shouldFallback', isRetryable: 'shouldFallback' } });

/** How spans, events and the record name a model: its id, else its name. */
export function modelName(model: ModelProvider): string {
  return model.modelId ?? model.name ?? 'unnamed';
}

/**
 * A `model` middleware that, when the model fails with a retryable error (a 503, a rate limit,
 * a dropped connection — or whatever `shouldFallback` says), asks the next model of `models`
 * with the same request, until one answers or the list is used up (then the last error is
 * raised). It sets `ctx.provider`, so the layers inside and the provider call see the model
 * asked, and leaves it set to the one that answered (a cost layer outside reads it). Each
 * fallback emits `model.fallback` `{ step, from, to, attempt, message }`; hook state
 * `model-fallback` counts per model the calls answered and their tokens (`FallbackRecord`), and
 * usage counts `modelFallbacks`. Every attempt has its own `chat <model>` span.
 *
 * With `retryMiddleware` outside it, a failing model costs one attempt and the next is asked at
 * once; the retry then repeats the whole list after its backoff. Inside it, each model is
 * retried first, then the next is asked.
 *
 * @example createAgent({ model: 'openai:gpt-5-mini', middleware: [retryMiddleware(), modelFallbackMiddleware({ models: [resolveModel('ollama:llama3.2')] })] });
 */
export function modelFallbackMiddleware(options: ModelFallbackOptions): Middleware & { name: 'model-fallback' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('modelFallbackMiddleware(options): options must be an object with models: [provider, …]');
  parseOptions(fallbackOptionsSchema, options, 'modelFallbackMiddleware');
  const models = [...options.models];
  const shouldFallback = options.shouldFallback ?? isRetryableError;
  const { onFallback } = options;
  return {
    name: NAME,
    model: async function modelFallback(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      // The model this call was going to ask; a retry outside re-enters with it again.
      const first = ctx.provider;
      const chain = [first, ...models.filter((model) => model !== first)];
      for (let i = 0; ; i++) {
        const asked = chain[i];
        ctx.provider = asked;
        try {
          const result = await next();
          record(ctx, asked, result);
          return result;
        } catch (error) {
          const to = chain[i + 1];
          if (to === undefined || ctx.signal.aborted || !shouldFallback(error, asked)) {
            ctx.provider = first;
            throw error;
          }
          failed(ctx, asked);
          const info: FallbackAttempt = { from: modelName(asked), to: modelName(to), attempt: i + 1, error };
          onFallback?.(info);
          ctx.countUsage('modelFallbacks', 1);
          ctx.emit?.({ type: 'model.fallback', step: ctx.step, from: info.from, to: info.to, attempt: info.attempt, message: (error as Error)?.message ?? String(error) });
        }
      }
    },
  };
}

function recordOf(ctx: ModelContext): FallbackRecord {
  const kept = ctx.state.hookState[NAME] as FallbackRecord | undefined;
  // A copy: the state is read-only, and setHookState keeps what it is given.
  return kept === undefined ? { byModel: {} } : { ...kept, byModel: { ...kept.byModel } };
}

function entryOf(kept: FallbackRecord, name: string) {
  // A model's name is a key of its own, whatever it is (`constructor` too).
  const was = ownValue(kept.byModel, name);
  const entry = was === undefined ? { calls: 0, failures: 0, inputTokens: 0, outputTokens: 0 } : { ...was };
  setOwn(kept.byModel, name, entry);
  return entry;
}

function record(ctx: ModelContext, model: ModelProvider, result: GenerateResult): void {
  const kept = recordOf(ctx);
  const name = modelName(model);
  const entry = entryOf(kept, name);
  entry.calls += 1;
  entry.inputTokens += result.usage?.inputTokens ?? 0;
  entry.outputTokens += result.usage?.outputTokens ?? 0;
  kept.lastModel = name;
  ctx.setHookState(NAME, kept);
}

function failed(ctx: ModelContext, model: ModelProvider): void {
  const kept = recordOf(ctx);
  entryOf(kept, modelName(model)).failures += 1;
  ctx.setHookState(NAME, kept);
}
