import { functionSchema, optionsSchema, ownValue, setOwn, parseOptions, type GenerateResult, type Middleware, type ModelContext, type ModelProvider, type Usage } from '../api.js';
import { keyValuesOf, type KeyValueSource } from '../stores/key-values.js';
import { z } from 'zod';

/**
 * The price of one model, in US dollars per million tokens: `input` for input tokens read fresh,
 * `cachedInput` for input tokens read from the provider's prompt cache (default: `input`),
 * `cacheWriteInput` for input tokens written to it (default: `input`), and `output`.
 *
 * @example const price: ModelPrice = { input: 3, cachedInput: 0.3, cacheWriteInput: 3.75, output: 15 };
 *
 * @inline
 */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWriteInput?: number;
}

/**
 * Prices by model. A key is a model id (`gpt-5-mini`), a provider-qualified id
 * (`openai:gpt-5-mini`, the provider's `name` before the colon), or either with `*` wildcards
 * (`gpt-5-mini*` for dated snapshots, `claude-*-haiku*`). An exact key wins; of the wildcard
 * keys that match, the most specific one (the most characters besides `*`).
 *
 * @example const prices: PriceTable = { 'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 }, 'claude-sonnet-4*': { input: 3, cachedInput: 0.3, output: 15 } };
 */
export type PriceTable = Record<string, ModelPrice>;

/**
 * What the middleware keeps in hook state (`state.hookState['cost-budget']`): dollars per model.
 *
 * @example const { byModel } = result.state.hookState['cost-budget'] as CostRecord;
 */
export interface CostRecord {
  byModel: Record<string, number>;
}

/**
 * Options of `costBudgetMiddleware`.
 *
 * @example costBudgetMiddleware({ prices: { 'gpt-5-mini': { input: 0.25, output: 2 } }, runBudget: 0.5, sessionBudget: 5 })
 *
 * @inline
 */
export interface CostBudgetOptions {
  /** Prices per model, in USD per million tokens (see `PriceTable` for how keys match). */
  prices: PriceTable;
  /** Dollars one run may spend (its sub-agents' included); the run ends with `limit:cost` before the call that would start over it. */
  runBudget?: number;
  /** Dollars all runs of one session may spend together, kept in `store`. */
  sessionBudget?: number;
  /** A model the table has no price for: `'error'` (default: fail the run, naming the model), `'ignore'` (count it as free), or a price to use. */
  unknownModel?: 'error' | 'ignore' | ModelPrice;
  /** Where session spending is kept: a key-value store or a run store with one (default: this process's memory). */
  store?: KeyValueSource;
  /** Told each priced call's cost. */
  onCost?: (info: { model: string; usd: number; runSpent: number }) => void;
}

const NAME = 'cost-budget';

const dollars = (what: string) => z.number({ error: `must be ${what}` }).min(0, { error: `must be ${what}` }).refine(Number.isFinite, { error: `must be ${what}` });

const priceSchema = optionsSchema({
  input: dollars('a price in USD per million input tokens (a finite number ≥ 0)'),
  output: dollars('a price in USD per million output tokens (a finite number ≥ 0)'),
  cachedInput: dollars('a price in USD per million cached input tokens (a finite number ≥ 0)').optional(),
  cacheWriteInput: dollars('a price in USD per million input tokens written to the cache (a finite number ≥ 0)').optional(),
}, {
  noun: 'a price field',
  aliases: {
    inputTokens: 'input', outputTokens: 'output', cached: 'cachedInput', cachedInputTokens: 'cachedInput', cacheRead: 'cachedInput', prompt: 'input', completion: 'output',
    cacheWrite: 'cacheWriteInput', cacheWriteInputTokens: 'cacheWriteInput', cacheCreation: 'cacheWriteInput', cacheCreationInputTokens: 'cacheWriteInput', cachedWrite: 'cacheWriteInput',
  },
});

/** The shape of `costBudgetMiddleware`'s options, described once. */
const costOptionsSchema = optionsSchema({
  prices: z.record(z.string(), priceSchema, { error: 'must be an object of model ids to { input, output, cachedInput?, cacheWriteInput? } in USD per million tokens' }),
  runBudget: dollars('a number of dollars ≥ 0').optional(),
  sessionBudget: dollars('a number of dollars ≥ 0').optional(),
  unknownModel: z.union([z.literal('error'), z.literal('ignore'), priceSchema], { error: "must be 'error', 'ignore' or a price { input, output, cachedInput?, cacheWriteInput? }" }).optional(),
  store: z.custom<KeyValueSource>((value) => typeof value === 'object' && value !== null, { error: 'must be a key-value store or a run store' }).optional(),
  onCost: functionSchema('a function ({ model, usd, runSpent }) => void').optional(),
}, { noun: 'a cost budget option', aliases: { priceTable: 'prices', pricing: 'prices', budget: 'runBudget', maxCost: 'runBudget', perRun: 'runBudget', perSession: 'sessionBudget', unknown: 'unknownModel', keyValues: 'store' } });

type Counts = { input: number; cached: number; written: number; output: number };

/**
 * A `model` middleware that prices every model call by a table you give (USD per million input,
 * cached input, cache-write input and output tokens), adds the cost to the run's usage (`usage.cost`, summed into a
 * parent run's for sub-agents) and to hook state per model, and ends the run with stop reason
 * `limit:cost` and output `{ spent, budget, scope }` before a model call that would start over
 * the run's budget or the session's (all runs of one `sessionId`, kept in `store`).
 *
 * It prices what the run's usage grew by while the call was inside it: the turn's tokens, at
 * the price of the model that answered (`ctx.provider` after `next()`, so a fallback inside is
 * priced right), and side calls (`ctx.generate`) of the layers inside it, at the price of the
 * agent's model. Side calls of layers outside it are not seen: put it outermost.
 *
 * @example createAgent({ model: 'openai:gpt-5-mini', middleware: [costBudgetMiddleware({ prices: { 'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 } }, runBudget: 0.25 })] });
 */
export function costBudgetMiddleware(options: CostBudgetOptions): Middleware & { name: 'cost-budget' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('costBudgetMiddleware(options): options must be an object with prices: { [modelId]: { input, output, cachedInput? } }');
  parseOptions(costOptionsSchema, options, 'costBudgetMiddleware');
  const { runBudget, sessionBudget, unknownModel = 'error', onCost } = options;
  const table = priceTable(options.prices);
  const values = keyValuesOf(options.store);
  const sessionKey = (sessionId: string) => `${NAME}:session:${sessionId}`;

  function priceOf(model: ModelProvider): ModelPrice | undefined {
    const found = table(model);
    if (found !== undefined) return found;
    if (unknownModel === 'ignore') return undefined;
    if (unknownModel === 'error') {
      throw new TypeError(`costBudgetMiddleware: no price for the model ${describe(model)}; add it to prices (e.g. '${model.modelId ?? model.name}': { input, output }), or set unknownModel`);
    }
    return unknownModel;
  }

  return {
    name: NAME,
    model: async function costBudget(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const runSpent = ctx.state.usage.cost ?? 0;
      if (runBudget !== undefined && runSpent >= runBudget) return ctx.end({ spent: runSpent, budget: runBudget, scope: 'run' }, 'limit:cost');
      if (sessionBudget !== undefined) {
        const spent = Number(await values.get(sessionKey(ctx.sessionId)) ?? 0);
        if (spent >= sessionBudget) return ctx.end({ spent, budget: sessionBudget, scope: 'session' }, 'limit:cost');
      }
      const agentModel = ctx.provider;
      // Refuse an unpriced model before paying for it.
      priceOf(agentModel);
      const before = counts(ctx.state.usage);
      const result = await next();
      const grown = minus(counts(ctx.state.usage), before);
      // The turn's own tokens (as far as the usage grew by them), at the answering model's price;
      // the rest came from side calls inside, at the agent's model's.
      const turn = smaller(grown, counts(result.usage ?? {}));
      const side = minus(grown, turn);
      const charges: Array<[ModelProvider, Counts]> = [[ctx.provider, turn], [agentModel, side]];
      let usd = 0;
      const kept = ctx.state.hookState[NAME] as CostRecord | undefined;
      const byModel = { ...kept?.byModel };
      for (const [model, tokens] of charges) {
        const price = priceOf(model);
        if (price === undefined || (tokens.input === 0 && tokens.output === 0)) continue;
        const cost = costOf(price, tokens);
        usd += cost;
        const name = model.modelId ?? model.name ?? 'unnamed';
        // A model's name is a key of its own, whatever it is (`constructor` too).
        setOwn(byModel, name, (ownValue(byModel, name) ?? 0) + cost);
      }
      if (usd > 0) {
        ctx.countUsage('cost', usd);
        ctx.setHookState(NAME, { byModel } satisfies CostRecord);
        if (sessionBudget !== undefined) await values.add(sessionKey(ctx.sessionId), usd);
        onCost?.({ model: ctx.provider.modelId ?? ctx.provider.name ?? 'unnamed', usd, runSpent: ctx.state.usage.cost ?? usd });
      }
      return result;
    },
  };
}

/**
 * Dollars for `tokens` at `price` (per million). Cache reads and writes are part of the input:
 * only the rest is priced at `input` (a count beyond the input is capped at what is left).
 */
export function costOf(price: ModelPrice, tokens: Counts): number {
  const cached = Math.min(tokens.cached, tokens.input);
  const written = Math.min(tokens.written, tokens.input - cached);
  const fresh = tokens.input - cached - written;
  return (fresh * price.input + cached * (price.cachedInput ?? price.input) + written * (price.cacheWriteInput ?? price.input) + tokens.output * price.output) / 1_000_000;
}

/** The counts of a run's usage or of one call's (a count it lacks is 0). */
function counts(usage: Readonly<Partial<Pick<Usage, 'inputTokens' | 'outputTokens' | 'cachedInputTokens' | 'cacheWriteInputTokens'>>>): Counts {
  return { input: usage.inputTokens ?? 0, cached: usage.cachedInputTokens ?? 0, written: usage.cacheWriteInputTokens ?? 0, output: usage.outputTokens ?? 0 };
}

const KEYS = ['input', 'cached', 'written', 'output'] as const;

function minus(a: Counts, b: Counts): Counts {
  return Object.fromEntries(KEYS.map((key) => [key, Math.max(0, a[key] - b[key])])) as Counts;
}

function smaller(a: Counts, b: Counts): Counts {
  return Object.fromEntries(KEYS.map((key) => [key, Math.min(a[key], b[key])])) as Counts;
}

function describe(model: ModelProvider): string {
  return model.name !== undefined && model.modelId !== undefined ? `${model.name}:${model.modelId}` : String(model.modelId ?? model.name ?? '(unnamed: give it a modelId)');
}

/** The lookup of a price table: exact keys first, then the most specific wildcard key. */
function priceTable(prices: PriceTable): (model: ModelProvider) => ModelPrice | undefined {
  const patterns = Object.keys(prices)
    .filter((key) => key.includes('*'))
    .map((key) => ({ key, specificity: key.replace(/\*/g, '').length, regex: new RegExp(`^${key.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`) }))
    .sort((a, b) => b.specificity - a.specificity);
  return (model) => {
    const ids = [model.name !== undefined && model.modelId !== undefined ? `${model.name}:${model.modelId}` : undefined, model.modelId].filter((id): id is string => id !== undefined);
    for (const id of ids) if (Object.prototype.hasOwnProperty.call(prices, id) && !id.includes('*')) return prices[id];
    const match = patterns.find((pattern) => ids.some((id) => pattern.regex.test(id)));
    return match === undefined ? undefined : prices[match.key];
  };
}
