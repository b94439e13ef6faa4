// An evaluation run on the workers: evaluate({ client }) starts each example as a run of the agent
// by its name on a real PostgreSQL queue, a worker (another part of the system, with the agent's
// code) runs it, and the evaluation reads each run's state from the store the workers share and
// scores it as it would a run made here, layer trace included.
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineMiddleware, defineTool, type GenerateOptions, type GenerateResult, type ModelProvider } from '../../src/index.js';
import { createClient, createWorker } from '../../src/worker.js';
import { evaluate, exact, toolCalled, traceEffect } from '../../src/evals.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';

let server: TestPostgres;
beforeAll(async () => { server = await startPostgres(); }, 60_000);
afterAll(async () => { await server?.stop(); });
let closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
  closing = [];
});

/** Asks for the weather of the city the user typed (as typed), then says what the tool answered: any worker can run any example. */
const model: ModelProvider = {
  name: 'scripted',
  async generate(request: GenerateOptions): Promise<GenerateResult> {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { message: { role: 'assistant', content: `It is ${String(last.content)}.` }, usage: { inputTokens: 5, outputTokens: 3 }, finishReason: 'stop' };
    const city = /(\w+)\?$/.exec(String(last.content))![1];
    return { message: { role: 'assistant', content: '', toolCalls: [{ id: `w-${city}`, name: 'weather', args: { city } }] }, usage: { inputTokens: 5, outputTokens: 3 }, finishReason: 'tool_calls' };
  },
};
const weather = defineTool({ name: 'weather', description: 'The sky in a city', input: z.object({ city: z.string() }), execute: ({ city }) => (city === 'Oslo' ? 'raining' : 'sunny') });
const tidyCity = defineMiddleware({ name: 'tidy-city', tool: async (ctx, next) => ((ctx.args = { city: String((ctx.args as { city: string }).city).replace(/^./, (c) => c.toUpperCase()) }), next()) });

describe('evaluate on the workers', () => {
  it('runs each example on a worker by the agent\'s name, and scores the stored runs: text, tool arguments after the layers, trace effects', async () => {
    const url = await server.database();
    const agent = createAgent({ name: 'weather', model, tools: [weather], middleware: [tidyCity], layerTrace: true });
    const worker = await createWorker({ connectionString: url, agents: [agent], leaseMs: 1000, pollMs: 200, sweepMs: 200, maintenanceIntervalSeconds: 1, handleSignals: false, concurrency: 2 });
    closing.push(() => worker.stop({ deadlineMs: 2000 }));
    const client = await createClient({ connectionString: url });
    closing.push(() => client.close());

    const report = await evaluate({
      name: 'weather-workers',
      agent: 'weather',
      client,
      dataset: [{ id: 'paris', input: 'Sky in paris?', expected: { text: 'It is sunny.', city: 'Paris' } }, { id: 'oslo', input: 'Sky in oslo?', expected: { text: 'It is sunny.', city: 'Oslo' } }],
      scorers: {
        answer: exact({ expected: (example) => (example.expected as { text: string }).text }),
        tool: toolCalled((example) => ({ name: 'weather', args: { city: (example.expected as { city: string }).city } })),
        tidied: traceEffect({ type: 'rewrote-args', layer: 'tidy-city' }),
      },
      thresholds: { tool: 1, tidied: 1, answer: 1 },
      concurrency: 2,
    });

    expect(worker.counts.segments).toBe(2);
    for (const example of report.examples) {
      expect(await client.status(example.runId!)).toMatchObject({ agentName: 'weather', status: 'completed' });
    }
    expect(report.examples.map((e) => [e.id, e.scores])).toEqual([
      ['paris', { answer: { score: 1, pass: true }, tool: { score: 1, pass: true }, tidied: { score: 1, pass: true } }],
      ['oslo', { answer: { score: 0, pass: false, reason: 'expected "It is sunny.", got "It is raining."' }, tool: { score: 1, pass: true }, tidied: { score: 1, pass: true } }],
    ]);
    expect(report.checks.filter((check) => !check.passed).map((check) => check.scorer)).toEqual(['answer']);
    // The report is kept beside the runs, in the store the workers share.
    expect(await client.store.keyValues!.get(`koagent.eval:weather-workers:${report.id}`)).toEqual(report);
  }, 60_000);

  it('scores a run that failed on a worker 0, with its error', async () => {
    const url = await server.database();
    const failing = defineMiddleware({ name: 'breaks', run: async () => { throw new Error('the layer broke'); } });
    const agent = createAgent({ name: 'broken', model, tools: [weather], middleware: [failing] });
    const worker = await createWorker({ connectionString: url, agents: [agent], leaseMs: 1000, pollMs: 200, sweepMs: 200, maintenanceIntervalSeconds: 1, handleSignals: false });
    closing.push(() => worker.stop({ deadlineMs: 2000 }));
    const client = await createClient({ connectionString: url });
    closing.push(() => client.close());
    const report = await evaluate({ agent: 'broken', client, dataset: [{ input: 'Sky in paris?' }], scorers: { answer: exact({ expected: 'It is sunny.' }) } });
    expect(report.failedRuns).toBe(1);
    expect(report.examples[0]).toMatchObject({ status: 'failed', runId: expect.stringMatching(/^run_/), error: expect.stringContaining('the layer broke') });
    expect(report.examples[0].scores.answer).toMatchObject({ score: 0, error: true, reason: expect.stringContaining('the run failed: ') });
  }, 30_000);

  it('gives up on runs no worker takes when its signal aborts, and stores no report', async () => {
    const url = await server.database();
    const client = await createClient({ connectionString: url });
    closing.push(() => client.close());
    const signal = AbortSignal.timeout(1000);
    // No worker runs "nobody": the run stays queued until the evaluation's signal gives up on it.
    await expect(evaluate({ name: 'nobody', agent: 'nobody', client, dataset: [{ input: 'Sky in paris?' }], scorers: { answer: exact({ expected: 'x' }) }, signal })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(await client.store.keyValues!.get('koagent.eval:nobody:latest')).toBeUndefined();
  }, 30_000);
});
