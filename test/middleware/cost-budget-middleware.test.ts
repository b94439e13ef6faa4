// costBudgetMiddleware: how calls are priced (the table's matching rules, cached input and cache writes, side
// calls, the model that answered), the run and session budgets that end a run with limit:cost,
// and that what it counts survives suspend → JSON → resume.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, ProviderError, type Middleware, type ModelProvider } from '../../src/index.js';
import { costBudgetMiddleware, memoryKeyValues, modelFallbackMiddleware, type PriceTable } from '../../src/middleware.js';
import type { CostRecord } from '../../src/middleware/cost-budget-middleware.js';
import { mockModel } from '../../src/testing/index.js';
import { runFailure } from '../support/core.js';

const M = 1_000_000;
/** $1 per million input tokens, $0.10 cached, $10 output: easy sums. */
const prices: PriceTable = { 'model-a': { input: 1, cachedInput: 0.1, output: 10 } };
const named = <T extends ModelProvider>(model: T, modelId: string): T => Object.assign(model, { modelId });
const lookup = defineTool({ name: 'lookup', description: 'Looks up', input: z.object({}), execute: () => 'found' });
const callTool = (usage: object) => ({ toolCalls: [{ name: 'lookup' }], usage });

describe('costBudgetMiddleware: pricing', () => {
  it('adds each call\'s cost to usage.cost and to hook state per model', async () => {
    const model = named(mockModel([callTool({ inputTokens: M, outputTokens: 0 }), { text: 'Done.', usage: { inputTokens: 2 * M, outputTokens: M / 10 } }]), 'model-a');
    const result = await createAgent({ model, tools: [lookup], middleware: [costBudgetMiddleware({ prices })] }).run('Hi');
    // 1 + (2 + 1) dollars
    expect(result.usage.cost).toBeCloseTo(4, 10);
    expect((result.state.hookState['cost-budget'] as CostRecord).byModel['model-a']).toBeCloseTo(4, 10);
  });

  it('prices cached input tokens at the cached rate', async () => {
    const model = named(mockModel([{ text: 'Hi.', usage: { inputTokens: M, cachedInputTokens: 0.8 * M, outputTokens: 0 } }]), 'model-a');
    const result = await createAgent({ model, middleware: [costBudgetMiddleware({ prices })] }).run('Hi');
    // 0.2 M fresh at $1 + 0.8 M cached at $0.10
    expect(result.usage.cost).toBeCloseTo(0.28, 10);
    expect(result.usage.cachedInputTokens).toBe(0.8 * M);
  });

  it('prices cache writes at cacheWriteInput, apart from the reads and the fresh input they are part of', async () => {
    const model = named(mockModel([{ text: 'Hi.', usage: { inputTokens: M, cachedInputTokens: 0.5 * M, cacheWriteInputTokens: 0.3 * M, outputTokens: 0 } }]), 'model-a');
    const table: PriceTable = { 'model-a': { input: 1, cachedInput: 0.1, cacheWriteInput: 1.25, output: 10 } };
    const result = await createAgent({ model, middleware: [costBudgetMiddleware({ prices: table })] }).run('Hi');
    // 0.2 M fresh at $1 + 0.5 M read at $0.10 + 0.3 M written at $1.25
    expect(result.usage.cost).toBeCloseTo(0.2 + 0.05 + 0.375, 10);
    expect(result.usage).toMatchObject({ cachedInputTokens: 0.5 * M, cacheWriteInputTokens: 0.3 * M });
  });

  it('prices cache writes at input when the table has no cacheWriteInput', async () => {
    const model = named(mockModel([{ text: 'Hi.', usage: { inputTokens: M, cachedInputTokens: 0.5 * M, cacheWriteInputTokens: 0.3 * M, outputTokens: 0 } }]), 'model-a');
    const result = await createAgent({ model, middleware: [costBudgetMiddleware({ prices })] }).run('Hi');
    // 0.5 M (fresh and written) at $1 + 0.5 M read at $0.10
    expect(result.usage.cost).toBeCloseTo(0.55, 10);
  });

  it('prices cache writes of every step and of a side call inside it', async () => {
    const summarizer: Middleware = { name: 'summarizer', model: async (ctx, next) => { await ctx.generate({ messages: [{ role: 'user', content: 'Sum up' }] }, 'summary'); return next(); } };
    const model = named(mockModel([
      { text: 'short', usage: { inputTokens: M, cacheWriteInputTokens: M, outputTokens: 0 } },
      callTool({ inputTokens: 2 * M, cacheWriteInputTokens: 2 * M, outputTokens: 0 }),
      { text: 'short', usage: { inputTokens: M, cachedInputTokens: M, outputTokens: 0 } },
      { text: 'Done.', usage: { inputTokens: 3 * M, cachedInputTokens: 2 * M, cacheWriteInputTokens: M, outputTokens: 0 } },
    ]), 'model-a');
    const table: PriceTable = { 'model-a': { input: 1, cachedInput: 0.1, cacheWriteInput: 2, output: 0 } };
    const result = await createAgent({ model, tools: [lookup], middleware: [costBudgetMiddleware({ prices: table }), summarizer] }).run('Hi');
    // writes 1 + 2 + 1 M at $2, reads 1 + 2 M at $0.10
    expect(result.usage.cost).toBeCloseTo(8.3, 10);
    expect(result.usage).toMatchObject({ inputTokens: 7 * M, cachedInputTokens: 3 * M, cacheWriteInputTokens: 4 * M });
  });

  it('matches exact ids first, then provider-qualified ids, then the most specific wildcard', async () => {
    const table: PriceTable = { 'gpt-*': { input: 1, output: 0 }, 'gpt-5-mini*': { input: 2, output: 0 }, 'openai:gpt-5': { input: 3, output: 0 }, 'gpt-5-mini': { input: 4, output: 0 } };
    const costFor = async (modelId: string, name?: string) => {
      const model = Object.assign(mockModel([{ text: 'x', usage: { inputTokens: M, outputTokens: 0 } }]), { modelId, ...(name ? { name } : {}) });
      return (await createAgent({ model, middleware: [costBudgetMiddleware({ prices: table })] }).run('Hi')).usage.cost;
    };
    expect(await costFor('gpt-5-mini')).toBe(4);
    expect(await costFor('gpt-5-mini-2025-08-07')).toBe(2);
    expect(await costFor('gpt-5', 'openai')).toBe(3);
    expect(await costFor('gpt-4o')).toBe(1);
  });

  it('prices side calls of the layers inside it, at the agent\'s model\'s price', async () => {
    const classifier: Middleware = { name: 'classifier', model: async (ctx, next) => { await ctx.generate({ messages: [{ role: 'user', content: 'Classify' }] }, 'classify'); return next(); } };
    const model = named(mockModel([{ text: 'label', usage: { inputTokens: M, outputTokens: 0 } }, { text: 'Answer.', usage: { inputTokens: 2 * M, outputTokens: 0 } }]), 'model-a');
    const result = await createAgent({ model, middleware: [costBudgetMiddleware({ prices }), classifier] }).run('Hi');
    expect(result.usage.cost).toBeCloseTo(3, 10);
  });

  it('prices a call at the model that answered when a fallback inside it asked another', async () => {
    const primary = named({ async generate(): Promise<never> { throw new ProviderError({ provider: 'a', kind: 'http', status: 503, providerMessage: 'down', retryable: true }); } }, 'model-a');
    const backup = named(mockModel([{ text: 'Hi.', usage: { inputTokens: M, outputTokens: 0 } }]), 'model-b');
    const result = await createAgent({ model: primary, middleware: [costBudgetMiddleware({ prices: { ...prices, 'model-b': { input: 5, output: 0 } } }), modelFallbackMiddleware({ models: [backup] })] }).run('Hi');
    expect(result.usage.cost).toBe(5);
    expect((result.state.hookState['cost-budget'] as CostRecord).byModel).toEqual({ 'model-b': 5 });
  });

  it('treats a model without a price as the unknownModel option says', async () => {
    const model = () => named(mockModel([{ text: 'Hi.', usage: { inputTokens: M, outputTokens: 0 } }]), 'mystery');
    const failed = await runFailure(createAgent({ model: model(), middleware: [costBudgetMiddleware({ prices })] }).run('Hi'), 'hook_failed');
    expect(String((failed.cause as Error).message)).toMatch(/no price for the model mockModel:mystery.*unknownModel/);
    expect((await createAgent({ model: model(), middleware: [costBudgetMiddleware({ prices, unknownModel: 'ignore' })] }).run('Hi')).usage.cost).toBeUndefined();
    expect((await createAgent({ model: model(), middleware: [costBudgetMiddleware({ prices, unknownModel: { input: 7, output: 0 } })] }).run('Hi')).usage.cost).toBe(7);
  });
});

describe('costBudgetMiddleware: budgets', () => {
  it('ends the run with limit:cost before the model call that would start over the run budget', async () => {
    const model = named(mockModel([callTool({ inputTokens: M, outputTokens: 0 }), callTool({ inputTokens: M, outputTokens: 0 }), 'Never said.']), 'model-a');
    const result = await createAgent({ model, tools: [lookup], middleware: [costBudgetMiddleware({ prices, runBudget: 1.5 })] }).run('Hi');
    expect(result.stopReason).toBe('limit:cost');
    expect(result.output).toEqual({ spent: 2, budget: 1.5, scope: 'run' });
    // Two calls were made (the second started under budget); the third was not.
    expect(model.calls).toHaveLength(2);
    expect(result.usage.cost).toBe(2);
  });

  it('keeps a session budget across the session\'s runs, in the store given', async () => {
    const store = memoryKeyValues();
    const budget = costBudgetMiddleware({ prices, sessionBudget: 1.5, store });
    const model = named(mockModel([{ text: 'One.', usage: { inputTokens: M, outputTokens: 0 } }, { text: 'Two.', usage: { inputTokens: M, outputTokens: 0 } }, 'Three.']), 'model-a');
    const agent = createAgent({ model, middleware: [budget] });
    expect((await agent.run('1', { sessionId: 's1' })).stopReason).not.toBe('limit:cost');
    expect((await agent.run('2', { sessionId: 's1' })).text).toBe('Two.');
    const third = await agent.run('3', { sessionId: 's1' });
    expect(third.stopReason).toBe('limit:cost');
    expect(third.output).toEqual({ spent: 2, budget: 1.5, scope: 'session' });
    // Another session has its own budget.
    expect((await agent.run('4', { sessionId: 's2' })).text).toBe('Three.');
    expect(await store.get('cost-budget:session:s1')).toBe(2);
  });

  it('counts across suspend → JSON → resume', async () => {
    const approve = defineTool({ name: 'pay', description: 'Pays', input: z.object({}), needsApproval: true, execute: () => 'paid' });
    const script = [{ toolCalls: [{ name: 'pay', id: 'p1' }], usage: { inputTokens: M, outputTokens: 0 } }, { text: 'Paid.', usage: { inputTokens: M, outputTokens: 0 } }];
    const agent = createAgent({ model: named(mockModel(script, { resumable: true }), 'model-a'), tools: [approve], middleware: [costBudgetMiddleware({ prices, runBudget: 1 })] });
    const paused = await agent.run('Pay');
    expect(paused.status).toBe('suspended');
    const stored = JSON.parse(JSON.stringify(paused.state));
    // Another agent (as in another process) with a fresh middleware instance.
    const other = createAgent({ model: named(mockModel(script, { resumable: true }), 'model-a'), tools: [approve], middleware: [costBudgetMiddleware({ prices, runBudget: 1 })] });
    const done = await other.resume(stored, { p1: true });
    expect(done.stopReason).toBe('limit:cost');
    expect(done.output).toEqual({ spent: 1, budget: 1, scope: 'run' });
    expect((done.state.hookState['cost-budget'] as CostRecord).byModel['model-a']).toBe(1);
  });
});

describe('costBudgetMiddleware: options', () => {
  it('refuses unknown keys naming the closest one, in the options and in a price', () => {
    expect(() => costBudgetMiddleware({ prices, runBudgt: 1 } as never)).toThrow(/runBudgt is not a cost budget option; did you mean `runBudget`\?/);
    expect(() => costBudgetMiddleware({ prices: { x: { input: 1, ouput: 2 } } } as never)).toThrow(/ouput is not a price field; did you mean `output`\?/);
    expect(() => costBudgetMiddleware({ prices: { x: { input: -1, output: 2 } } })).toThrow(/prices\.x\.input must be a price/);
    for (const alias of ['cacheWrite', 'cacheCreation', 'cacheCreationInputTokens']) {
      expect(() => costBudgetMiddleware({ prices: { x: { input: 3, output: 15, [alias]: 3.75 } } } as never)).toThrow(new RegExp(`${alias} is not a price field; did you mean \`cacheWriteInput\`\?`));
    }
    expect(() => costBudgetMiddleware({ prices: { x: { input: 3, output: 15, cacheWriteInput: -1 } } })).toThrow(/prices\.x\.cacheWriteInput must be a price in USD per million input tokens written to the cache/);
  });

  it('is a named middleware whose model layer is a named function', () => {
    const mw = costBudgetMiddleware({ prices });
    expect([mw.name, mw.model?.name]).toEqual(['cost-budget', 'costBudget']);
  });
});
