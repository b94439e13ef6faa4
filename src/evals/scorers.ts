// Scorers are plain functions of a finished run: (run) => a score from 0 to 1, true or false, or
// { score, reason }. The built-ins below read the run's text or output, its tool calls, its layer
// trace and its usage; each says in its reason what it found when a run loses points.
import { z } from 'zod';
import { optionsSchema, parseOptions, type RunState } from '../api.js';
import type { LoadedExample } from './dataset.js';
import { TRACE_STATE } from '../features/layer-trace/record.js';
import { schemaCheck } from './json-schema.js';
import type { RunEffect, RunToolCall } from './run-facts.js';

/**
 * A finished run as a scorer sees it: the example it ran, its text and output, and its state
 * (transcript, tool calls, usage, steps, layer trace). A run that failed is not scored: every
 * scorer gives it 0, with the failure as the reason.
 *
 * @example const short: Scorer = (run) => run.text.length <= 280;
 *
 * @inline
 */
export interface EvalRun<E = unknown> {
  readonly example: LoadedExample<E>;
  readonly runId: string;
  readonly status: 'completed' | 'suspended';
  /** The last assistant message's text. */
  readonly text: string;
  /** The run's output: its parsed answer with an output schema, else its text. */
  readonly output: unknown;
  readonly state: RunState;
  /** The run's tool calls in the order the model made them, as asked and as the layers rewrote them. */
  readonly toolCalls: readonly RunToolCall[];
  /** Every effect the layers had on the run's calls, from its layer trace (none without one). */
  readonly effects: readonly RunEffect[];
}

/**
 * What a scorer says of one run: a score from 0 to 1, why, and whether the example passes it
 * (default: a full score).
 *
 * @example return { score: 0.5, reason: 'one of the two cities is right' };
 *
 * @inline
 */
export interface Score {
  score: number;
  reason?: string;
  pass?: boolean;
}

/**
 * What a scorer may return: a `Score`, a number from 0 to 1, `true` (1) or `false` (0), or
 * undefined when the example gives it nothing to check (it is left out of the mean).
 *
 * @example const value: ScoreValue = { score: 1 };
 *
 * @inline
 */
export type ScoreValue = Score | number | boolean | undefined;

/**
 * A scorer: a plain function of a finished run.
 *
 * @example const polite: Scorer = (run) => /please|thank/i.test(run.text);
 */
export type Scorer<E = any> = (run: EvalRun<E>) => ScoreValue | Promise<ScoreValue>;

/**
 * What a built-in scorer checks against: a value, or a function of the example giving it
 * (undefined there: the example is not scored by it).
 *
 * @example toolCalled((example) => example.expected.tool)
 *
 * @inline
 */
export type Expectation<T, E = any> = T | ((example: LoadedExample<E>) => T | undefined);

const expectation = <T>(given: Expectation<T>, example: LoadedExample): T | undefined => (typeof given === 'function' ? (given as (e: LoadedExample) => T | undefined)(example) : given);

/** A value as a reason shows it: JSON, cut to 200 characters. */
export function shown(value: unknown): string {
  const json = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return json.length <= 200 ? json : `${json.slice(0, 199)}…`;
}

/** Two JSON values equal whatever the order of their keys. */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted((value as Record<string, unknown>)[key])]));
}

/** Whether `actual` holds every field of `wanted` (deeply; arrays and other values compared whole). */
function contains(actual: unknown, wanted: unknown): boolean {
  if (typeof wanted !== 'object' || wanted === null || Array.isArray(wanted)) return sameJson(actual, wanted);
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
  return Object.entries(wanted).every(([key, value]) => Object.hasOwn(actual, key) && contains((actual as Record<string, unknown>)[key], value));
}

const ofSchema = z.enum(['output', 'text'], { error: "must be 'output' or 'text'" }).optional();
const subject = (run: EvalRun, of: 'output' | 'text' | undefined) => (of === 'text' ? run.text : run.output);

/**
 * A value `exact` compares with: text, a number, a boolean, null, or a JSON object or array.
 *
 * @example const expected: ExpectedValue = { city: 'Paris', celsius: 24 };
 *
 * @inline
 */
export type ExpectedValue = string | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };

/**
 * Options of `exact`.
 *
 * @example exact({ expected: (example) => example.expected.answer, ignoreCase: true })
 *
 * @inline
 */
export interface ExactOptions<E = any> {
  /** Default: the example's `expected`. */
  expected?: Expectation<ExpectedValue, E>;
  /** Compare the run's `output` (default) or its `text`. */
  of?: 'output' | 'text';
  ignoreCase?: boolean;
  /** Ignore white space at either end of text (default true). */
  trim?: boolean;
}

const exactSchema = optionsSchema({ expected: z.unknown().optional(), of: ofSchema, ignoreCase: z.boolean().optional(), trim: z.boolean().optional() }, { noun: 'an option of exact', aliases: { value: 'expected', caseInsensitive: 'ignoreCase', field: 'of' } });

/**
 * 1 when the run's output (or text) is the expected value — text as text, anything else as
 * JSON whatever the order of its keys — else 0, with what it was.
 *
 * @example scorers: { answer: exact() } // against each example's `expected`
 */
export function exact<E = any>(options: ExactOptions<E> = {}): Scorer<E> {
  parseOptions(exactSchema, options, 'exact(options)');
  const { of, ignoreCase = false, trim = true } = options;
  const text = (value: string) => ((trim ? value.trim() : value) as string)[ignoreCase ? 'toLowerCase' : 'toString']();
  return (run) => {
    const expected = expectation(options.expected === undefined ? (example: LoadedExample) => example.expected : options.expected, run.example);
    if (expected === undefined) return undefined;
    const actual = subject(run, of);
    const same = typeof expected === 'string' && typeof actual === 'string' ? text(expected) === text(actual) : sameJson(actual, expected);
    return same ? { score: 1 } : { score: 0, reason: `expected ${shown(expected)}, got ${shown(actual)}` };
  };
}

/**
 * 1 when the run's text (or its output, as JSON when it is not text) matches the pattern, else 0.
 *
 * @example scorers: { mentionsCity: matches(/paris/i) }
 */
export function matches<E = any>(pattern: Expectation<RegExp | string, E>, options: { of?: 'output' | 'text' } = {}): Scorer<E> {
  parseOptions(optionsSchema({ of: ofSchema }, { noun: 'an option of matches' }), options, 'matches(pattern, options)');
  if (typeof pattern !== 'function' && typeof pattern !== 'string' && !(pattern instanceof RegExp)) throw new TypeError('matches(pattern): pattern must be a RegExp, a string (a regular expression) or a function of the example giving one');
  return (run) => {
    const given = expectation(pattern, run.example);
    if (given === undefined) return undefined;
    // Without the g and y flags: a test must not depend on the last one's position.
    const regex = typeof given === 'string' ? new RegExp(given) : new RegExp(given.source, given.flags.replace(/[gy]/g, ''));
    const value = subject(run, options.of ?? 'text');
    const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
    return regex.test(text) ? { score: 1 } : { score: 0, reason: `${shown(text)} does not match ${regex}` };
  };
}

/**
 * 1 when the run's output fits the JSON Schema (text is read as JSON first), else 0 with each
 * problem and where it is. Checked with Ajv (an optional peer: `npm i ajv ajv-formats`).
 *
 * @example scorers: { shape: jsonSchema({ type: 'object', required: ['city', 'celsius'] }) }
 */
export function jsonSchema<E = any>(schema: Expectation<Record<string, unknown>, E>, options: { of?: 'output' | 'text' } = {}): Scorer<E> {
  parseOptions(optionsSchema({ of: ofSchema }, { noun: 'an option of jsonSchema' }), options, 'jsonSchema(schema, options)');
  if (typeof schema !== 'function' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) throw new TypeError('jsonSchema(schema): schema must be a JSON Schema object, e.g. { type: "object", required: ["city"] }, or a function of the example giving one');
  const checks = new WeakMap<object, ReturnType<typeof schemaCheck>>();
  return (run) => {
    const given = expectation(schema, run.example);
    if (given === undefined) return undefined;
    let check = checks.get(given);
    if (check === undefined) checks.set(given, (check = schemaCheck(given)));
    let value = subject(run, options.of);
    if (typeof value === 'string') {
      try {
        value = JSON.parse(value);
      } catch {
        return { score: 0, reason: `the ${options.of ?? 'output'} is not JSON: ${shown(value)}` };
      }
    }
    const problems = check(value);
    return problems.length === 0 ? { score: 1 } : { score: 0, reason: problems.slice(0, 5).join('; ') };
  };
}

/**
 * Options of `toolCalled`.
 *
 * @example toolCalled('transfer', undefined, { times: 0 }) // never called
 *
 * @inline
 */
export interface ToolCalledOptions {
  /** Exactly this many matching calls (default: at least one). */
  times?: number;
  /**
   * Compare the arguments the tool ran with, after the layers' rewrites (`'ran'`, the default:
   * read from the layer trace), or those the model asked for (`'asked'`).
   */
  args?: 'ran' | 'asked';
}

const toolCalledSchema = optionsSchema({ times: z.number().int().min(0).optional(), args: z.enum(['ran', 'asked'], { error: "must be 'ran' or 'asked'" }).optional() }, { noun: 'an option of toolCalled', aliases: { count: 'times', of: 'args' } });

/**
 * 1 when the run called the tool with arguments holding `args` (each field given, deeply), else 0
 * with the calls it made instead. The arguments compared are those the tool ran with.
 *
 * @example scorers: { looksUp: toolCalled('weather', { city: 'Paris' }) }
 * @example scorers: { tool: toolCalled((example) => example.expected.tool) } // { name, args }
 */
export function toolCalled<E = any>(tool: Expectation<string | { name: string; args?: unknown }, E>, args?: unknown, options: ToolCalledOptions = {}): Scorer<E> {
  parseOptions(toolCalledSchema, options, 'toolCalled(tool, args, options)');
  if (typeof tool !== 'string' && typeof tool !== 'function' && (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string')) throw new TypeError("toolCalled(tool): tool must be the tool's name, { name, args }, or a function of the example giving one");
  return (run) => {
    const given = expectation(tool, run.example);
    if (given === undefined) return undefined;
    const name = typeof given === 'string' ? given : given.name;
    const wanted = typeof given === 'string' ? args : given.args;
    const asked = options.args === 'asked';
    const calls = run.toolCalls.map((call) => ({ name: asked ? call.askedName : call.name, args: asked ? call.askedArgs : call.args, traced: call.traced }));
    const found = calls.filter((call) => call.name === name && (wanted === undefined || contains(call.args, wanted)));
    const ok = options.times === undefined ? found.length > 0 : found.length === options.times;
    if (ok) return { score: 1 };
    const what = `${name}${wanted === undefined ? '' : ` with ${shown(wanted)}`}`;
    const made = calls.length === 0 ? 'no tool was called' : `the calls were ${calls.map((call) => `${call.name} ${shown(call.args)}`).join(', ')}`;
    const untraced = !asked && calls.some((call) => !call.traced) ? ' (as the model asked: the run recorded no layer trace)' : '';
    const count = options.times === undefined ? `expected a call of ${what}` : `expected ${options.times} call${options.times === 1 ? '' : 's'} of ${what}, found ${found.length}`;
    return { score: 0, reason: `${count}; ${made}${untraced}` };
  };
}

/**
 * Which layer effect `traceEffect` looks for: its type (`denied`, `rewrote-args`,
 * `short-circuit` …), and if you like the layer and the tool; `absent: true` asks for none.
 *
 * @example traceEffect({ type: 'denied', layer: 'guard', tool: 'transfer' })
 *
 * @inline
 */
export interface EffectMatch {
  type: RunEffect['effect']['type'];
  layer?: string;
  tool?: string;
  absent?: boolean;
}

const effectSchema = optionsSchema({ type: z.string({ error: "must be an effect's type, e.g. 'denied' or 'rewrote-args'" }), layer: z.string().optional(), tool: z.string().optional(), absent: z.boolean().optional() }, { noun: 'a field of an effect to look for', aliases: { kind: 'type', effect: 'type', by: 'layer', name: 'layer', call: 'tool', toolName: 'tool', not: 'absent', none: 'absent' } });

/**
 * 1 when the run's layer trace shows the effect (or, with `absent`, does not), else 0 with the
 * effects it does show. Runs are traced unless `evaluate({ layerTrace: false })`.
 *
 * @example scorers: { guarded: traceEffect({ type: 'denied', layer: 'spend-limit', tool: 'transfer' }) }
 */
export function traceEffect<E = any>(match: Expectation<EffectMatch, E>): Scorer<E> {
  if (typeof match !== 'function') parseOptions(effectSchema, match, 'traceEffect(match)');
  return (run) => {
    const given = expectation(match, run.example);
    if (given === undefined) return undefined;
    if (typeof match === 'function') parseOptions(effectSchema, given, `traceEffect(match) for example ${run.example.id}`);
    if (!Object.hasOwn(run.state.hookState, TRACE_STATE)) return { score: 0, reason: 'the run has no layer trace: evaluate records one unless layerTrace is false; a worker\'s agent needs createAgent({ layerTrace: true })' };
    const { effects } = run;
    const found = effects.filter((e) => e.effect.type === given.type && (given.layer === undefined || e.layer === given.layer) && (given.tool === undefined || (e.call.kind === 'tool' && e.call.name === given.tool)));
    const what = `${given.type}${given.layer === undefined ? '' : ` by ${given.layer}`}${given.tool === undefined ? '' : ` on ${given.tool}`}`;
    if (given.absent === true) return found.length === 0 ? { score: 1 } : { score: 0, reason: `expected no ${what}, found ${found.map(effectText).join(', ')}` };
    if (found.length > 0) return { score: 1 };
    return { score: 0, reason: `expected ${what}; the trace shows ${effects.length === 0 ? 'no effect' : effects.slice(0, 8).map(effectText).join(', ')}` };
  };
}

const effectText = (e: RunEffect) => `${e.effect.type} by ${e.layer} on ${e.call.kind === 'tool' ? e.call.name : 'a model call'}`;

/**
 * 1 when the run cost at most `usd` dollars (its `usage.cost`, which `costBudgetMiddleware`
 * counts) and used at most `tokens` tokens, else 0 with what it spent.
 *
 * @example scorers: { cheap: costAtMost({ usd: 0.01, tokens: 4000 }) }
 */
export function costAtMost(limits: { usd?: number; tokens?: number }): Scorer {
  parseOptions(optionsSchema({ usd: z.number().min(0).optional(), tokens: z.number().min(0).optional() }, { noun: 'a limit of costAtMost', aliases: { dollars: 'usd', cost: 'usd', totalTokens: 'tokens', maxTokens: 'tokens' } }), limits, 'costAtMost(limits)');
  if (limits.usd === undefined && limits.tokens === undefined) throw new TypeError('costAtMost(limits): give usd, tokens or both, e.g. costAtMost({ usd: 0.01 })');
  return (run) => {
    const { usage } = run.state;
    const over: string[] = [];
    if (limits.usd !== undefined) {
      if (usage.cost === undefined) return { score: 0, reason: 'the run counted no cost (usage.cost): price its model with costBudgetMiddleware({ prices }) from koagent/middleware, or limit tokens instead' };
      if (usage.cost > limits.usd) over.push(`cost $${usage.cost.toFixed(4)}, over $${limits.usd}`);
    }
    if (limits.tokens !== undefined && usage.totalTokens > limits.tokens) over.push(`used ${usage.totalTokens} tokens, over ${limits.tokens}`);
    return over.length === 0 ? { score: 1 } : { score: 0, reason: `the run ${over.join(' and ')}` };
  };
}

/**
 * 1 when the run took at most `max` model turns (`state.steps`), else 0.
 *
 * @example scorers: { direct: stepsAtMost(2) }
 */
export function stepsAtMost(max: number): Scorer {
  if (!Number.isInteger(max) || max < 1) throw new TypeError(`stepsAtMost(max): max must be a whole number ≥ 1, got ${String(max)}`);
  return (run) => (run.state.steps <= max ? { score: 1 } : { score: 0, reason: `the run took ${run.state.steps} steps, over ${max}` });
}
