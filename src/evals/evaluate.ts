// evaluate(): each example of a dataset run by the agent (here, or on the workers when a client
// is given), at most `concurrency` at a time; each run scored by every scorer; the means held to
// their thresholds and to a baseline; the report kept in the store beside the runs.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { optionsSchema, parseOptions, RunFailedError, type RunInput, type RunResult, type RunState } from '../api.js';
import type { Agent } from '../agent/agent.js';
import type { RunStore } from '../stores/run-store.js';
import { checkExamples, loadDataset, type EvalExample, type LoadedExample } from './dataset.js';
import { checkBaseline, gateChecks, summarise } from './gate.js';
import { reportKeys, storeReport, type EvalReport, type ExampleResult, type ScoreResult } from './report.js';
import type { EvalRun, Scorer, ScoreValue } from './scorers.js';
import { effectsOf, toolCallsOf } from './run-facts.js';

/**
 * The agent an evaluation runs: an agent made with `createAgent` (what it uses of one).
 *
 * @example const agent: EvalAgent = createAgent({ model, tools });
 *
 * @inline
 */
export type EvalAgent = Pick<Agent<any, any>, 'name' | 'run'>;

/**
 * What an evaluation uses of the workers' client (`createClient` of `koagent/worker`): runs are
 * started by agent name and waited for, and their states read from its store.
 *
 * @example await evaluate({ agent: 'weather', client: await createClient({ connectionString }), dataset, scorers });
 *
 * @inline
 */
export interface EvalClient {
  /** The store the workers write the runs to, where their states are read. */
  readonly store: RunStore;
  /** Start a run of the agent named `agent` on the workers: its id. */
  start(agent: string, input: RunInput, options?: { context?: unknown; metadata?: Record<string, unknown> }): Promise<string>;
  /** Wait until the run is over (or waits for a human): its status, text and output, or its error. */
  wait(runId: string, options?: { signal?: AbortSignal }): Promise<{ status: string; text?: string; output?: unknown; error?: { code: string; message: string } }>;
}

/**
 * Options of `evaluate`.
 *
 * @example await evaluate({ name: 'weather', agent, dataset: new URL('./weather.jsonl', import.meta.url), scorers: { answer: exact() }, thresholds: { answer: 0.9 } })
 *
 * @inline
 */
export interface EvaluateOptions<E = any> {
  /** Names the evaluation in the reports and the store (default `evaluation`). */
  name?: string;
  /**
   * The agent; or a function making one for each example (a `mockModel` scripted for it, say);
   * with a `client`, the name of the agent the workers run (or an agent, for its name).
   */
  agent: EvalAgent | ((example: LoadedExample<E>) => EvalAgent | Promise<EvalAgent>) | string;
  /** The examples, or a JSONL file of them (a path from the working directory, or a file URL). */
  dataset: readonly EvalExample<E>[] | string | URL;
  /** The scorers, by the names the reports and thresholds use. */
  scorers: Record<string, Scorer<E>>;
  /** The least mean (0 to 1) each named scorer must reach. */
  thresholds?: Record<string, number>;
  /** An earlier report to compare with, or `'stored'`: the store's latest report of this name whose gate passed. */
  baseline?: EvalReport | 'stored';
  /** How far (0 to 1) a mean may fall below the baseline's (default 0); one for all, or by scorer. */
  margin?: number | Record<string, number>;
  /** Runs at once (default 4). */
  concurrency?: number;
  /** Run the examples on the workers, through this client. */
  client?: EvalClient;
  /** The run store for the runs (default: the agent's) and for the report (its key values). */
  store?: RunStore;
  /** Record each run's layer trace (default true; the trace-effect and tool-argument scorers read it). */
  layerTrace?: boolean;
  signal?: AbortSignal;
  /** Told each example's result as it is scored. */
  onExample?: (result: ExampleResult) => void;
}

const fn = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', { error: 'must be a function' });
const evaluateSchema = optionsSchema({
  name: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }).regex(/^[^:\s]+$/, { error: 'must be a name without spaces or colons, e.g. weather-v2' }).optional(),
  agent: z.unknown().optional(),
  dataset: z.unknown().optional(),
  scorers: z.record(z.string(), fn, { error: 'must be an object of scorers by name, e.g. { answer: exact() }' }),
  thresholds: z.record(z.string(), z.number()).optional(),
  baseline: z.unknown().optional(),
  margin: z.union([z.number().min(0).max(1), z.record(z.string(), z.number().min(0).max(1))], { error: 'must be a number from 0 to 1, or such numbers by scorer' }).optional(),
  concurrency: z.number().int({ error: 'must be a whole number ≥ 1' }).min(1, { error: 'must be a whole number ≥ 1' }).optional(),
  client: z.custom<EvalClient>((v) => typeof (v as EvalClient | null)?.start === 'function' && typeof (v as EvalClient).wait === 'function', { error: 'must be the workers\' client (createClient of koagent/worker)' }).optional(),
  store: z.custom<RunStore>((v) => typeof (v as RunStore | null)?.loadRun === 'function', { error: 'must be a run store (memoryStore(), sqliteStore(), postgresStore())' }).optional(),
  layerTrace: z.boolean({ error: 'must be true or false' }).optional(),
  signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
  onExample: fn.optional(),
}, { noun: 'an option of evaluate', aliases: { examples: 'dataset', data: 'dataset', cases: 'dataset', scorer: 'scorers', scores: 'scorers', threshold: 'thresholds', minimums: 'thresholds', parallel: 'concurrency', parallelism: 'concurrency', maxConcurrency: 'concurrency', tolerance: 'margin', trace: 'layerTrace', runStore: 'store', queue: 'client', worker: 'client', onResult: 'onExample' } });

/** The options checked up front, so a mistake fails before any run starts. */
function checkOptions(options: EvaluateOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('evaluate(options): options must be an object: { agent, dataset, scorers }');
  parseOptions(evaluateSchema, options, 'evaluate');
  if (options.agent === undefined) throw new TypeError('evaluate: agent is missing: give the agent made with createAgent (or a function of the example making one)');
  if (options.dataset === undefined) throw new TypeError("evaluate: dataset is missing: give the examples (an array of { input, expected }) or the path of a JSONL file of them");
  const names = Object.keys(options.scorers);
  if (names.length === 0) throw new TypeError('evaluate: scorers is empty: give at least one, e.g. { answer: exact() }');
  // Thresholds and margins name scorers: a misspelt one would check nothing.
  const byScorer = (what: string) => optionsSchema(Object.fromEntries(names.map((name) => [name, z.number({ error: `must be a number from 0 to 1` }).min(0, { error: 'must be a number from 0 to 1' }).max(1, { error: 'must be a number from 0 to 1' }).optional()])), { noun: `a scorer of this evaluation (${what} name scorers)` });
  if (options.thresholds !== undefined) parseOptions(byScorer('thresholds'), options.thresholds, 'evaluate: thresholds');
  if (typeof options.margin === 'object') parseOptions(byScorer('margins'), options.margin, 'evaluate: margin');
  const { agent, client } = options;
  if (client !== undefined) {
    if (typeof agent !== 'string' && typeof (agent as EvalAgent | null)?.name !== 'string') throw new TypeError("evaluate: with a client, agent is the name of the agent the workers run, e.g. 'weather' (or that agent)");
  } else if (typeof agent === 'string') throw new TypeError(`evaluate: agent "${agent}" is a name, which only the workers know: give the client too (client: await createClient(…)), or the agent itself`);
  else if (typeof agent !== 'function' && typeof (agent as EvalAgent | null)?.run !== 'function') throw new TypeError('evaluate: agent must be an agent made with createAgent, or a function of the example making one');
  if (options.baseline !== undefined && options.baseline !== 'stored') checkBaseline(options.baseline, 'evaluate: baseline');
}

/** A finished run, or why there is none to score. */
type Outcome = { run: Omit<EvalRun, 'example' | 'toolCalls' | 'effects'> } | { failed: string; runId?: string };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** One example run here, by the agent (or the agent made for it). */
async function runHere(options: EvaluateOptions, example: LoadedExample, metadata: Record<string, unknown>): Promise<Outcome> {
  let runId: string | undefined;
  try {
    const agent = typeof options.agent === 'function' ? await options.agent(example) : (options.agent as EvalAgent);
    const result: RunResult = await agent.run(example.input, {
      context: example.context, metadata, layerTrace: options.layerTrace ?? true,
      ...(options.store === undefined ? {} : { store: options.store }), ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    runId = result.runId;
    return { run: { runId, status: result.status, text: result.text, output: result.output, state: result.state } };
  } catch (error) {
    if (error instanceof RunFailedError) runId = error.runId;
    return { failed: message(error), ...(runId === undefined ? {} : { runId }) };
  }
}

/** One example run by the workers: started through the client, waited for, its state read from the client's store. */
async function runOnWorkers(options: EvaluateOptions, client: EvalClient, example: LoadedExample, metadata: Record<string, unknown>): Promise<Outcome> {
  let runId: string | undefined;
  try {
    const agentName = typeof options.agent === 'string' ? options.agent : (options.agent as EvalAgent).name;
    runId = await client.start(agentName, example.input, { ...(example.context === undefined ? {} : { context: example.context }), metadata });
    const report = await client.wait(runId, options.signal === undefined ? {} : { signal: options.signal });
    if (report.status !== 'completed' && report.status !== 'suspended') return { runId, failed: report.error?.message ?? `the run is ${report.status}` };
    const state: RunState | undefined = await client.store.loadRun(runId);
    if (state === undefined) return { runId, failed: "the run is not in the client's store" };
    return { run: { runId, status: report.status, text: report.text ?? '', output: report.output, state } };
  } catch (error) {
    return { failed: message(error), ...(runId === undefined ? {} : { runId }) };
  }
}

/** What a scorer returned, as a verdict; a value that is not a score is the scorer's error. */
function verdict(value: ScoreValue): ScoreResult | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') return { score: value ? 1 : 0, pass: value };
  const given = typeof value === 'number' ? { score: value } : value;
  const score = (given as { score?: unknown } | null)?.score;
  if (typeof score !== 'number' || !(score >= 0 && score <= 1)) {
    return { score: 0, pass: false, error: true, reason: `the scorer gave ${JSON.stringify(value) ?? String(value)}, not a score: return a number from 0 to 1, true or false, or { score, reason }` };
  }
  const result: ScoreResult = { score, pass: given.pass ?? score >= 1 };
  if (given.reason !== undefined) result.reason = given.reason;
  return result;
}

/** Every scorer's verdict on one run (a scorer that throws gives 0, with what it threw). */
async function scored(scorers: Record<string, Scorer>, run: EvalRun): Promise<Record<string, ScoreResult>> {
  const scores: Record<string, ScoreResult> = {};
  await Promise.all(Object.entries(scorers).map(async ([name, scorer]) => {
    let result: ScoreResult | undefined;
    try {
      result = verdict(await scorer(run));
    } catch (error) {
      result = { score: 0, pass: false, error: true, reason: `the scorer threw: ${message(error)}` };
    }
    if (result !== undefined) scores[name] = result;
  }));
  // In the order the scorers were given, whichever finished first.
  return Object.fromEntries(Object.keys(scorers).filter((name) => Object.hasOwn(scores, name)).map((name) => [name, scores[name]]));
}

/** Run `work` on each item, at most `limit` at once, in the items' order. */
async function inLanes<T>(items: readonly T[], limit: number, signal: AbortSignal | undefined, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      signal?.throwIfAborted();
      const index = next++;
      await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * Evaluate an agent: run each example of the dataset (at most `concurrency` at once, here or on
 * the workers through `client`), score each run with every scorer, and hold each scorer's mean
 * to its threshold and to the baseline less the margin. The report says whether the gate
 * passed; with a store, it is kept in the store's key values beside the runs (the latest, the
 * latest that passed, and by id). Offline, give an agent on `mockModel` (a function of the
 * example can script one for each).
 *
 * @example
 * const report = await evaluate({ agent, dataset: 'evals/weather.jsonl', scorers: { answer: exact(), tool: toolCalled('weather') }, thresholds: { answer: 1, tool: 1 } });
 * console.log(formatReport(report));
 */
export async function evaluate<E = any>(options: EvaluateOptions<E>): Promise<EvalReport> {
  checkOptions(options as EvaluateOptions);
  const started = Date.now();
  const name = options.name ?? 'evaluation';
  const id = `eval_${randomUUID()}`;
  const examples = typeof options.dataset === 'string' || options.dataset instanceof URL ? await loadDataset<E>(options.dataset) : checkExamples(options.dataset, 'evaluate: dataset');
  const keyValues = (options.store ?? options.client?.store)?.keyValues;
  let baseline = options.baseline === 'stored' ? undefined : options.baseline;
  if (options.baseline === 'stored') {
    if (keyValues === undefined) throw new TypeError("evaluate: baseline 'stored' is read from the store's key values: give store (a memory, SQLite or PostgreSQL run store) or client");
    const stored = await keyValues.get(reportKeys(name).passed);
    if (stored === undefined) throw new TypeError(`evaluate: baseline 'stored': the store holds no evaluation "${name}" that passed its gate yet; run one without a baseline first`);
    baseline = checkBaseline(stored, `the stored baseline of "${name}"`);
  }
  const results: ExampleResult[] = new Array(examples.length);
  const scorers = options.scorers as Record<string, Scorer>;
  await inLanes(examples, options.concurrency ?? 4, options.signal, async (example, index) => {
    const begun = Date.now();
    const metadata = { 'koagent.eval': { name, id, example: example.id } };
    const outcome = options.client === undefined ? await runHere(options as EvaluateOptions, example, metadata) : await runOnWorkers(options as EvaluateOptions, options.client, example, metadata);
    // An evaluation called off is no evaluation: nothing is scored or stored as if its runs had failed.
    options.signal?.throwIfAborted();
    let result: ExampleResult;
    if ('failed' in outcome) {
      const zero: ScoreResult = { score: 0, pass: false, error: true, reason: `the run failed: ${outcome.failed}` };
      result = { id: example.id, status: 'failed', error: outcome.failed, durationMs: Date.now() - begun, scores: Object.fromEntries(Object.keys(scorers).map((scorer) => [scorer, { ...zero }])) };
      if (outcome.runId !== undefined) result.runId = outcome.runId;
    } else {
      const scores = await scored(scorers, { example, ...outcome.run, toolCalls: toolCallsOf(outcome.run.state), effects: effectsOf(outcome.run.state) });
      result = { id: example.id, runId: outcome.run.runId, status: outcome.run.status, durationMs: Date.now() - begun, scores };
    }
    results[index] = result;
    options.onExample?.(result);
  });
  const summaries = summarise(Object.keys(scorers), results);
  const checks = gateChecks(summaries, { thresholds: options.thresholds ?? {}, margin: options.margin ?? 0, ...(baseline === undefined ? {} : { baseline }) });
  const report: EvalReport = {
    version: 1, name, id, startedAt: new Date(started).toISOString(), durationMs: Date.now() - started,
    passed: checks.every((check) => check.passed), failedRuns: results.filter((r) => r.status === 'failed').length,
    ...(baseline === undefined ? {} : { baseline: baseline.id }),
    examples: results, scorers: summaries, checks,
  };
  if (keyValues !== undefined) await storeReport(keyValues, report);
  return report;
}

/**
 * An evaluation as a module of its own declares it for `koagent eval <file>`: its default export
 * (the options of `evaluate`, typed by this function).
 *
 * @example export default defineEvaluation({ name: 'weather', agent, dataset: new URL('./weather.jsonl', import.meta.url), scorers: { answer: exact() }, thresholds: { answer: 1 } });
 */
export function defineEvaluation<E = any>(options: EvaluateOptions<E>): EvaluateOptions<E> {
  checkOptions(options as EvaluateOptions);
  return options;
}
