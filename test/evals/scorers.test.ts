// The built-in scorers, each on real runs of an agent on a scripted model: a full score when the
// run does what is expected, 0 with a reason that says what it did instead when it does not, and
// no score when the example gives the scorer nothing to check.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineMiddleware, defineTool, deny, type Middleware } from '../../src/index.js';
import { costBudgetMiddleware } from '../../src/middleware.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { costAtMost, exact, jsonSchema, matches, stepsAtMost, toolCalled, traceEffect, type EvalExample } from '../../src/evals.js';
import type { EvalRun } from '../../src/evals/scorers.js';
import { effectsOf, toolCallsOf } from '../../src/evals/run-facts.js';

const weather = defineTool({ name: 'weather', description: 'The weather in a city', input: z.object({ city: z.string(), units: z.string().optional() }), execute: ({ city }) => ({ city, sky: 'sunny' }) });
const transfer = defineTool({ name: 'transfer', description: 'Move money', input: z.object({ amount: z.number() }), execute: () => 'sent' });
/** Capitalises the city the model asked about: the tool runs with what this layer hands on. */
const tidyCity = defineMiddleware({ name: 'tidy-city', async tool(ctx, next) {
  if (ctx.toolName === 'weather') ctx.args = { ...(ctx.args as { city: string }), city: (ctx.args as { city: string }).city.replace(/^./, (c) => c.toUpperCase()) };
  return next();
} });
const spendLimit = defineMiddleware({ name: 'spend-limit', tool: async (ctx, next) => ((ctx.args as { amount?: number }).amount! > 100 ? deny('over the limit') : next()) });

/** A finished run of an agent on `script`, as a scorer sees it. */
async function ran(script: MockReply[], example: Partial<EvalExample> = {}, options: { middleware?: Middleware[]; layerTrace?: boolean; output?: z.ZodType } = {}): Promise<EvalRun> {
  const agent = createAgent({ model: mockModel(script), tools: [weather, transfer], middleware: options.middleware ?? [], layerTrace: options.layerTrace ?? true, ...(options.output ? { output: options.output } : {}) });
  const input = example.input ?? 'Hi';
  const result = await agent.run(input);
  return { example: { id: 'x', ...example, input }, runId: result.runId, status: result.status, text: result.text, output: result.output, state: result.state, toolCalls: toolCallsOf(result.state), effects: effectsOf(result.state) };
}

const parisCall: MockReply[] = [{ toolCalls: [{ name: 'weather', args: { city: 'paris' } }] }, 'Sunny in Paris.'];

describe('exact', () => {
  it("scores 1 when the output is the example's expected text (white space at either end aside), 0 with both shown when not", async () => {
    expect(await exact()(await ran([' Sunny in Paris.\n'], { expected: 'Sunny in Paris.' }))).toEqual({ score: 1 });
    expect(await exact()(await ran(['Rainy.'], { expected: 'Sunny in Paris.' }))).toEqual({ score: 0, reason: 'expected "Sunny in Paris.", got "Rainy."' });
  });

  it('compares case when asked not to, and an output schema\'s object whatever the order of its keys', async () => {
    expect(await exact({ ignoreCase: true })(await ran(['SUNNY.'], { expected: 'sunny.' }))).toEqual({ score: 1 });
    expect(await exact()(await ran(['SUNNY.'], { expected: 'sunny.' }))).toMatchObject({ score: 0 });
    const output = z.object({ city: z.string(), celsius: z.number() });
    expect(await exact()(await ran(['{"celsius": 21, "city": "Paris"}'], { expected: { city: 'Paris', celsius: 21 } }, { output }))).toEqual({ score: 1 });
    expect(await exact()(await ran(['{"celsius": 20, "city": "Paris"}'], { expected: { city: 'Paris', celsius: 21 } }, { output }))).toEqual({ score: 0, reason: 'expected {"city":"Paris","celsius":21}, got {"city":"Paris","celsius":20}' });
  });

  it('takes its expectation from a function of the example, and leaves out an example it gives nothing for', async () => {
    const answer = exact({ expected: (example) => (example.expected as { answer?: string }).answer });
    expect(await answer(await ran(['Yes.'], { expected: { answer: 'Yes.' } }))).toEqual({ score: 1 });
    expect(await answer(await ran(['Yes.'], { expected: {} }))).toBeUndefined();
    expect(await exact()(await ran(['Yes.']))).toBeUndefined();
  });

  it('refuses a misspelt option, naming the one meant', () => {
    expect(() => exact({ ignorecase: true } as never)).toThrow('exact(options): ignorecase is not an option of exact; did you mean `ignoreCase`?');
  });
});

describe('matches', () => {
  it('scores 1 when the text matches, 0 naming the pattern and the text when not', async () => {
    const run = await ran(['It is sunny in Paris.']);
    expect(await matches(/sunny/i)(run)).toEqual({ score: 1 });
    expect(await matches('^Rain')(run)).toEqual({ score: 0, reason: '"It is sunny in Paris." does not match /^Rain/' });
  });

  it('gives the same answer for every run with a global pattern (its position is not carried over)', async () => {
    const scorer = matches(/sunny/g);
    const run = await ran(['sunny']);
    expect([await scorer(run), await scorer(run)]).toEqual([{ score: 1 }, { score: 1 }]);
  });

  it('refuses a pattern that is none', () => {
    expect(() => matches(42 as never)).toThrow('matches(pattern): pattern must be a RegExp, a string');
  });
});

describe('jsonSchema', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'], additionalProperties: false };

  it('scores 1 when the output (JSON text read as JSON) fits the schema', async () => {
    expect(await jsonSchema(schema)(await ran(['{"city": "Paris", "celsius": 21}']))).toEqual({ score: 1 });
  });

  it('scores 0 with each problem and where it is', async () => {
    expect(await jsonSchema(schema)(await ran(['{"city": "Paris", "celsius": "warm", "sky": "blue"}']))).toEqual({ score: 0, reason: 'the value must NOT have additional properties ("sky"); /celsius must be number' });
  });

  it('scores 0 when the output is not JSON, quoting it', async () => {
    expect(await jsonSchema(schema)(await ran(['Sunny, 21 degrees.']))).toEqual({ score: 0, reason: 'the output is not JSON: "Sunny, 21 degrees."' });
  });

  it('checks formats, and the dialect the schema names (2020-12)', async () => {
    const dated = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { on: { type: 'string', format: 'date' } }, prefixItems: [], required: ['on'] };
    expect(await jsonSchema(dated)(await ran(['{"on": "2030-01-02"}']))).toEqual({ score: 1 });
    expect(await jsonSchema(dated)(await ran(['{"on": "soon"}']))).toEqual({ score: 0, reason: '/on must match format "date"' });
  });

  it('refuses a schema that is not an object', () => {
    expect(() => jsonSchema('object' as never)).toThrow('jsonSchema(schema): schema must be a JSON Schema object');
  });
});

describe('toolCalled', () => {
  it('scores 1 when the tool ran with arguments holding those given, as the layers handed them on', async () => {
    const run = await ran(parisCall, {}, { middleware: [tidyCity] });
    expect(await toolCalled('weather', { city: 'Paris' })(run)).toEqual({ score: 1 });
    expect(await toolCalled('weather')(run)).toEqual({ score: 1 });
  });

  it('scores 0 naming the calls made instead: here the model asked for "paris" and no layer tidied it', async () => {
    expect(await toolCalled('weather', { city: 'Paris' })(await ran(parisCall))).toEqual({ score: 0, reason: 'expected a call of weather with {"city":"Paris"}; the calls were weather {"city":"paris"}' });
    expect(await toolCalled('transfer')(await ran(['No tools.']))).toEqual({ score: 0, reason: 'expected a call of transfer; no tool was called' });
  });

  it("compares the model's own arguments when asked, and says so when the run has no trace to show rewrites", async () => {
    const traced = await ran(parisCall, {}, { middleware: [tidyCity] });
    expect(await toolCalled('weather', { city: 'paris' }, { args: 'asked' })(traced)).toEqual({ score: 1 });
    const untraced = await ran(parisCall, {}, { middleware: [tidyCity], layerTrace: false });
    expect(await toolCalled('weather', { city: 'Paris' })(untraced)).toEqual({ score: 0, reason: 'expected a call of weather with {"city":"Paris"}; the calls were weather {"city":"paris"} (as the model asked: the run recorded no layer trace)' });
  });

  it('counts calls when told how many (0: never called)', async () => {
    const run = await ran([{ toolCalls: [{ name: 'weather', args: { city: 'Oslo' } }, { name: 'weather', args: { city: 'Rome' } }] }, 'Done.']);
    expect(await toolCalled('weather', undefined, { times: 2 })(run)).toEqual({ score: 1 });
    expect(await toolCalled('transfer', undefined, { times: 0 })(run)).toEqual({ score: 1 });
    expect(await toolCalled('weather', { city: 'Rome' }, { times: 2 })(run)).toMatchObject({ score: 0, reason: expect.stringMatching(/^expected 2 calls of weather with \{"city":"Rome"\}, found 1; the calls were weather \{"city":"Oslo"\}, weather \{"city":"Rome"\}$/) });
  });

  it('takes the call from the example ({ name, args }), leaving out examples that expect none', async () => {
    const fromExample = toolCalled((example) => (example.expected as { tool?: { name: string; args?: unknown } }).tool);
    expect(await fromExample(await ran(parisCall, { expected: { tool: { name: 'weather', args: { city: 'paris' } } } }))).toEqual({ score: 1 });
    expect(await fromExample(await ran(parisCall, { expected: {} }))).toBeUndefined();
  });

  it('refuses a misspelt option', () => {
    expect(() => toolCalled('weather', undefined, { count: 1 } as never)).toThrow('toolCalled(tool, args, options): count is not an option of toolCalled; did you mean `times`?');
  });
});

describe('traceEffect', () => {
  const bigTransfer: MockReply[] = [{ toolCalls: [{ name: 'transfer', args: { amount: 500 } }] }, 'I could not send it.'];

  it("scores 1 when the layer trace shows the effect (a layer's denial, a rewrite), and with absent, when it does not", async () => {
    const denied = await ran(bigTransfer, {}, { middleware: [spendLimit] });
    expect(await traceEffect({ type: 'denied', layer: 'spend-limit', tool: 'transfer' })(denied)).toEqual({ score: 1 });
    expect(await traceEffect({ type: 'rewrote-args', absent: true })(denied)).toEqual({ score: 1 });
    expect(await traceEffect({ type: 'rewrote-args', layer: 'tidy-city' })(await ran(parisCall, {}, { middleware: [tidyCity] }))).toEqual({ score: 1 });
  });

  it('scores 0 listing the effects the trace does show', async () => {
    const tidied = await ran(parisCall, {}, { middleware: [tidyCity] });
    expect(await traceEffect({ type: 'denied', tool: 'weather' })(tidied)).toEqual({ score: 0, reason: 'expected denied on weather; the trace shows rewrote-args by tidy-city on weather' });
    expect(await traceEffect({ type: 'rewrote-args', absent: true })(tidied)).toEqual({ score: 0, reason: 'expected no rewrote-args, found rewrote-args by tidy-city on weather' });
    expect(await traceEffect({ type: 'denied' })(await ran(bigTransfer))).toEqual({ score: 0, reason: 'expected denied; the trace shows no effect' });
  });

  it('scores 0 when the run recorded no layer trace, saying how to record one', async () => {
    expect(await traceEffect({ type: 'denied' })(await ran(bigTransfer, {}, { layerTrace: false }))).toMatchObject({ score: 0, reason: expect.stringContaining('the run has no layer trace') });
  });

  it('refuses a misspelt field of the effect', () => {
    expect(() => traceEffect({ type: 'denied', by: 'guard' } as never)).toThrow('traceEffect(match): by is not a field of an effect to look for; did you mean `layer`?');
    expect(() => traceEffect({ kind: 'denied' } as never)).toThrow('traceEffect(match): kind is not a field of an effect to look for; did you mean `type`?');
  });
});

describe('costAtMost', () => {
  const priced = () => costBudgetMiddleware({ prices: { mock: { input: 1000, output: 1000 } } });

  it('scores 1 within the budget of dollars and tokens, 0 saying what was spent over it', async () => {
    const run = await ran([{ text: 'Hi.', usage: { inputTokens: 10, outputTokens: 5 } }], {}, { middleware: [priced()] });
    expect(run.state.usage.cost).toBeCloseTo(0.015);
    expect(await costAtMost({ usd: 0.02, tokens: 15 })(run)).toEqual({ score: 1 });
    expect(await costAtMost({ usd: 0.01, tokens: 10 })(run)).toEqual({ score: 0, reason: 'the run cost $0.0150, over $0.01 and used 15 tokens, over 10' });
  });

  it('scores 0 for a dollar budget when the run counted no cost, saying how to count it', async () => {
    expect(await costAtMost({ usd: 1 })(await ran(['Hi.']))).toMatchObject({ score: 0, reason: expect.stringContaining('price its model with costBudgetMiddleware({ prices })') });
  });

  it('refuses no limit at all', () => {
    expect(() => costAtMost({})).toThrow('costAtMost(limits): give usd, tokens or both');
  });
});

describe('stepsAtMost', () => {
  it('scores 1 within the steps, 0 with how many the run took', async () => {
    const run = await ran(parisCall);
    expect(run.state.steps).toBe(2);
    expect(await stepsAtMost(2)(run)).toEqual({ score: 1 });
    expect(await stepsAtMost(1)(run)).toEqual({ score: 0, reason: 'the run took 2 steps, over 1' });
    expect(() => stepsAtMost(0)).toThrow('stepsAtMost(max): max must be a whole number ≥ 1, got 0');
  });
});
