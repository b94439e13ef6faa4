// npx tsx examples/evals.ts
// Evaluate an agent offline, with a gate. A weather agent whose `tidy-city` layer capitalises the
// city before the tool runs is evaluated over a small dataset (scripted models, one per example,
// so no key and no network), with plain-function scorers and a grader model. The report prints as
// a table and is written as JUnit XML and JSON. Then a deliberate regression (the layer left out)
// is evaluated against the first report as its baseline: the gate fails, and says why.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createAgent, defineMiddleware, defineTool, type Middleware } from 'koagent';
import { mockModel } from 'koagent/testing';
import { evaluate, exact, formatReport, junitXml, modelGraded, stepsAtMost, toolCalled, traceEffect, type EvalExample } from 'koagent/evals';

interface Expected { answer: string; city: string }

const forecasts: Record<string, string> = { Paris: 'Sunny, 24 °C', Oslo: 'Rain, 9 °C', Rome: 'Sunny, 27 °C' };
const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => forecasts[city] ?? 'no forecast for that city',
});

/** Users type "paris"; the weather service knows "Paris". */
const tidyCity = defineMiddleware({
  name: 'tidy-city',
  async tool(ctx, next) {
    const { city } = ctx.args as { city: string };
    ctx.args = { city: city.charAt(0).toUpperCase() + city.slice(1).toLowerCase() };
    return next();
  },
});

// A dataset is an array (or a JSONL file, one example a line): inputs, and what each run should do.
const dataset: EvalExample<Expected>[] = [
  { id: 'paris', input: 'Weather in paris?', expected: { answer: 'Sunny in Paris, 24 °C.', city: 'Paris' } },
  { id: 'oslo', input: 'Weather in oslo?', expected: { answer: 'Rain in Oslo, 9 °C.', city: 'Oslo' } },
  { id: 'rome', input: 'Weather in rome?', expected: { answer: 'Sunny in Rome, 27 °C.', city: 'Rome' } },
];

/** The agent for one example: its model is scripted for that example, so the examples may run at once. */
function weatherAgent(middleware: Middleware[]) {
  return (example: EvalExample<Expected>) => createAgent({
    name: 'weather',
    model: mockModel([
      { toolCalls: [{ name: 'weather', args: { city: example.expected!.city.toLowerCase() } }] },
      example.expected!.answer,
    ]),
    tools: [weather],
    middleware,
  });
}

// The grader is a model you give; offline, a scripted one (a real one: openai({ model: 'gpt-5-mini' })).
const grader = () => mockModel(Array.from({ length: 3 }, () => '{"score": 0.9, "reason": "Gives the sky and the temperature."}'));

const scorers = {
  answer: exact<Expected>({ expected: (example) => example.expected?.answer }),
  tool: toolCalled<Expected>((example) => ({ name: 'weather', args: { city: example.expected!.city } })),
  tidied: traceEffect({ type: 'rewrote-args', layer: 'tidy-city' }),
  steps: stepsAtMost(2),
  helpful: modelGraded<Expected>({ model: grader(), criteria: 'Gives the sky and the temperature of the city asked about.' }),
};

const before = await evaluate({ name: 'weather', agent: weatherAgent([tidyCity]), dataset, scorers, thresholds: { answer: 1, tool: 1, helpful: 0.8 }, concurrency: 3 });
console.log(formatReport(before));

const out = mkdtempSync(join(tmpdir(), 'koagent-evals-'));
writeFileSync(join(out, 'weather.xml'), junitXml(before));
writeFileSync(join(out, 'weather.json'), JSON.stringify(before, null, 2));
console.log(`\nwrote weather.xml (JUnit) and weather.json (the report, a baseline for the next evaluation)`);

// A deliberate regression: the layer is gone. Held to the first report, less a margin of 0.05.
console.log('\n--- after a change that drops tidy-city ---\n');
const after = await evaluate({
  name: 'weather', agent: weatherAgent([]), dataset, scorers: { ...scorers, helpful: modelGraded<Expected>({ model: grader(), criteria: 'Gives the sky and the temperature of the city asked about.' }) },
  thresholds: { answer: 1, tool: 1, helpful: 0.8 }, baseline: before, margin: 0.05,
});
console.log(formatReport(after));
console.log(`\ngate: ${before.passed ? 'passed' : 'failed'} before, ${after.passed ? 'passed' : 'failed'} after (koagent eval exits 1 when it fails)`);
