// Structured output: a run's final answer as a value of a zod schema. A feature of layers only:
// a model layer asks for the provider's JSON response format (native mode), or a final-answer
// tool takes the answer as its arguments (tool mode); the innermost run layer checks the answer
// the loop ended with and sends a reply that does not fit back to the model (it calls `next()`
// again), a bounded number of times; the outermost checks an output a run layer ended the run with.
import { z } from 'zod';
import type { Layer } from '../core/vocabulary/layer.js';
import { STATE_OUTPUT, type ModelContext, type RunContext, type Tool } from '../core/vocabulary/contexts.js';
import { lazily } from '../core/vocabulary/lazy.js';
import { KoagentError, markOwnError } from '../core/vocabulary/errors.js';
import type { GenerateResult, ModelProvider, ToolSpec } from '../core/vocabulary/model.js';
import { optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import type { RunResult } from '../core/vocabulary/result.js';
import type { RunState, StopCondition } from '../core/vocabulary/state.js';
import { ToolError } from '../core/vocabulary/tool-error.js';

/**
 * How a run's final answer is given and checked, for `createAgent({ output })` or
 * `agent.run(input, { output })`; a bare zod schema means `{ schema }`.
 *
 * @example createAgent({ model, output: { schema: z.object({ city: z.string(), celsius: z.number() }), repairs: 1 } })
 *
 * @inline
 */
export interface OutputOptions<O = unknown> {
  /** What the final answer must fit; `result.output` is the schema's output for it. */
  schema: z.ZodType<O>;
  /**
   * `'native'`: the provider's JSON-schema response format (`request.responseFormat`); `'tool'`:
   * the model calls a final-answer tool with the answer as its arguments; `'auto'` (default):
   * native when the provider says it can (`provider.structuredOutputs !== false`), else the tool.
   */
  mode?: 'auto' | 'native' | 'tool';
  /** Answers that do not fit sent back to the model with the error before the run fails with `invalid_output` (default 2). */
  repairs?: number;
  /** The name of the final-answer tool and of the response schema (default `final_answer`). */
  name?: string;
  /** Told to the model about the answer (the final-answer tool's description). */
  description?: string;
}

/**
 * A zod schema, or `OutputOptions` around one.
 *
 * @example await agent.run('Is it raining?', { output: z.object({ verdict: z.enum(['yes', 'no']) }) });
 */
export type OutputSpec<O = unknown> = z.ZodType<O> | OutputOptions<O>;

/**
 * `OutputOptions` around the schema `S`, for the overloads that type `result.output` as `z.output<S>`.
 *
 * @example const spec: OutputOptionsOf<typeof Verdict> = { schema: Verdict, mode: 'tool' };
 *
 * @inline
 */
export type OutputOptionsOf<S extends z.ZodType> = Omit<OutputOptions<z.output<S>>, 'schema'> & { schema: S };

/**
 * The error of a run whose final answer did not fit its output schema after every repair (or
 * that a layer ended with an output that does not fit): the `cause` of the `RunFailedError` of
 * code `invalid_output`. `raw` is the last answer as the model gave it.
 *
 * @example catch (error) { if (KoagentError.is(error) && error.code === 'invalid_output') log((error.cause as InvalidOutputError).raw); }
 */
export class InvalidOutputError extends KoagentError {
  /** The last answer as given: the reply's text (native mode), the tool's arguments (tool mode), or the layer's output. */
  readonly raw: unknown;
  /** What did not fit, path by path. */
  readonly issues: string;

  constructor(message: string, raw: unknown, issues: string) {
    super('invalid_output', message);
    this.name = 'InvalidOutputError';
    this.raw = raw;
    this.issues = issues;
  }
}

/** A resolved output spec: what the layers of one agent core work from. */
export interface OutputPlan {
  readonly schema: z.ZodType;
  readonly mode: 'native' | 'tool';
  readonly repairs: number;
  readonly name: string;
  readonly description: string;
  /** The JSON schema the model is given (the answer's, or `{ value }` around a non-object one). */
  readonly jsonSchema: Record<string, unknown>;
  /** The schema is not of an object, so the answer travels as `{ value }`. */
  readonly wrapped: boolean;
}

/** Where a run's answer stands, kept in `state.hookState` so a resumed run goes on counting. */
interface OutputRecord {
  repairs: number;
  /** The fitting answer the final-answer tool took (JSON, as the model gave it). */
  answer?: unknown;
  /** The last answer that did not fit. */
  raw?: unknown;
  issues?: string;
}

/** The hook-state key the feature keeps its record under (also what says a run had an output schema). */
export const OUTPUT_STATE = 'koagent:output';

const isZodSchema = (value: unknown) => typeof value === 'object' && value !== null && '_zod' in value && typeof (value as z.ZodType).safeParse === 'function';
// Made when an agent first gives { schema, … }: a program that asks for no output never pays for it.
const outputOptionsSchema = lazily(() => optionsSchema({
  schema: z.custom<z.ZodType>(isZodSchema, { error: 'must be a zod (v4) schema, e.g. z.object({ answer: z.string() })' }),
  mode: z.enum(['auto', 'native', 'tool'], { error: "must be 'auto', 'native' or 'tool'" }).optional(),
  repairs: wholeNumberSchema(0, false, 'must be a whole number ≥ 0').optional(),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1-64 letters, digits, "_" or "-"' }).optional(),
  description: z.string({ error: 'must be a string' }).optional(),
}, { noun: 'an output option', aliases: { retries: 'repairs', maxRepairs: 'repairs', strategy: 'mode', type: 'schema', zod: 'schema' } }));

/** Check an output spec and settle its mode for `provider`; `where` names the option in errors. */
export function outputPlan(spec: unknown, provider: ModelProvider, where: string): OutputPlan {
  if (!isZodSchema(spec) && (typeof spec !== 'object' || spec === null)) throw new TypeError(`${where}: output must be a zod schema or { schema, mode?, repairs? }`);
  const options: OutputOptions = isZodSchema(spec) ? { schema: spec as z.ZodType } : parseOptions(outputOptionsSchema(), spec, where) as OutputOptions;
  const mode = options.mode === 'native' || options.mode === 'tool' ? options.mode : provider.structuredOutputs === false ? 'tool' : 'native';
  let described: Record<string, unknown>;
  try {
    described = z.toJSONSchema(options.schema, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new TypeError(`${where}: the output schema cannot be described as JSON schema for the model: ${(error as Error).message}`);
  }
  delete described.$schema;
  const wrapped = described.type !== 'object';
  const jsonSchema = wrapped ? { type: 'object', properties: { value: described }, required: ['value'], additionalProperties: false } : described;
  const name = options.name ?? 'final_answer';
  const description = options.description ?? 'Give your final answer with this tool, once you are done; its arguments are the answer.';
  return { schema: options.schema, mode, repairs: options.repairs ?? 2, name, description, jsonSchema, wrapped };
}

/** Native mode: every turn of the run asks the provider for JSON fitting the schema (layers inside see it in `ctx.request`). */
export function responseFormatLayer(plan: OutputPlan): Layer<ModelContext, GenerateResult> {
  const format = { type: 'json' as const, schema: plan.jsonSchema, name: plan.name, description: plan.description };
  return {
    name: 'koagent:output-format',
    fn(ctx, next) {
      ctx.request.responseFormat = format;
      return next();
    },
  };
}

/** Tool mode: the tool whose arguments are the answer. It checks them and records a fitting one. */
export function finalAnswerTool(plan: OutputPlan): Tool {
  const spec: ToolSpec = Object.freeze({ name: plan.name, description: plan.description, parameters: plan.jsonSchema });
  return Object.freeze({
    name: plan.name,
    description: plan.description,
    input: z.looseObject({}),
    spec,
    guardrails: { input: [], output: [] },
    async execute(args: Record<string, unknown>, ctx) {
      const record = recordOf(ctx.state);
      const candidate = plan.wrapped ? args.value : args;
      const checked = await plan.schema.safeParseAsync(candidate);
      if (checked.success) {
        ctx.setHookState(OUTPUT_STATE, { ...record, answer: candidate });
        return 'Your final answer is recorded.';
      }
      const issues = z.prettifyError(checked.error);
      ctx.setHookState(OUTPUT_STATE, { ...record, repairs: record.repairs + 1, raw: args, issues });
      throw new ToolError(`The answer does not fit the required output:\n${issues}\nCall ${plan.name} again with a corrected answer.`);
    },
  } satisfies Tool);
}

/** Tool mode: end the segment once the answer is in, or once too many answers did not fit. */
export function answeredCondition(plan: OutputPlan): StopCondition {
  return (state) => {
    const record = state.hookState[OUTPUT_STATE] as OutputRecord | undefined;
    return record !== undefined && (record.answer !== undefined || record.repairs > plan.repairs) ? 'final' : undefined;
  };
}

function recordOf(state: Readonly<RunState>): OutputRecord {
  return (state.hookState[OUTPUT_STATE] as OutputRecord | undefined) ?? { repairs: 0 };
}

/** The answer a finished segment gave, as the model (or a layer) wrote it; undefined when there is none to check. */
function answerOf(plan: OutputPlan, result: RunResult, record: OutputRecord): { raw: unknown; value?: unknown; problem?: string } {
  if (result.stopReason === 'hook_end') return { raw: result.output, value: result.output };
  if (plan.mode === 'tool') {
    // The tool recorded the answer already unwrapped from { value }.
    if (record.answer !== undefined) return { raw: record.answer, value: record.answer };
    if (record.raw !== undefined && record.repairs > plan.repairs) return { raw: record.raw, problem: record.issues };
    return { raw: result.text, problem: `The reply gave no answer through ${plan.name}.` };
  }
  const raw = result.text;
  const json = parseJson(raw);
  if (json === undefined) return { raw, problem: 'The reply is not JSON.' };
  return { raw, value: plan.wrapped ? (json.value as { value?: unknown })?.value : json.value };
}

/** JSON from a reply, tolerating the code fence some models put around it even when asked for JSON. */
function parseJson(text: string): { value: unknown } | undefined {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  try {
    return { value: JSON.parse(fenced === null ? text : fenced[1]) };
  } catch {
    return undefined;
  }
}

function repairMessage(plan: OutputPlan, problem: string): string {
  if (plan.mode === 'tool') return `${problem}\nGive your final answer by calling ${plan.name}.`;
  return `${problem}\nReply again with only JSON that fits this JSON schema:\n${JSON.stringify(plan.jsonSchema)}`;
}

/** Where a segment keeps the result whose answer the innermost layer checked (in `ctx.runVar`). */
const JUDGED: unique symbol = Symbol('koagent.judged');

declare module '../core/vocabulary/contexts.js' {
  interface RunVariables {
    /** @internal koagent's own slot. */
    [JUDGED]?: RunResult;
  }
}

/**
 * The innermost run layer with an output schema: the loop, then the answer checked. An answer
 * that does not fit goes back to the model (a user message with the error) and the loop runs
 * again (`next()` once more), up to `repairs` times; then the run fails with `invalid_output`.
 * It returns a result of its own, the schema's output in it; the segment writes its end once,
 * when it closes, with the answer as the model wrote it.
 */
export function outputLayer(plan: OutputPlan): Layer<RunContext, RunResult> {
  return {
    name: 'koagent:output',
    async fn(ctx, next) {
      // Written before anything runs: a state that has it says the run has an output schema, which resume asks for again.
      if (ctx.state.hookState[OUTPUT_STATE] === undefined) ctx.setHookState(OUTPUT_STATE, { repairs: 0 });
      for (;;) {
        const result = await next();
        // A suspended run answers after its resume; a cancelled one has no answer to check.
        if (result.status !== 'completed' || result.stopReason === 'aborted') return noAnswer(ctx, result);
        const record = recordOf(ctx.state);
        const answer = answerOf(plan, result, record);
        const checked = answer.problem === undefined ? await plan.schema.safeParseAsync(answer.value) : undefined;
        if (checked?.success === true) return settle(ctx, result, answer.value, checked.data);
        const problem = answer.problem ?? `The reply does not fit the required output:\n${z.prettifyError(checked!.error)}`;
        // Only the model's own final replies are repaired: an output a layer gave, or a segment a
        // limit stopped, has no model turn left to fix it in.
        const repairable = result.stopReason === 'final' && record.repairs < plan.repairs;
        if (!repairable) throw markOwnError(failure(plan, result, answer.raw, problem));
        ctx.setHookState(OUTPUT_STATE, { ...record, repairs: record.repairs + 1, raw: answer.raw, issues: problem });
        // The transcript now ends with a user message: the loop asks the model again.
        ctx.messages.push({ role: 'user', content: repairMessage(plan, problem) });
      }
    },
  };
}

/**
 * The outermost run layer with an output schema: a segment that a run layer ended itself
 * (`ctx.end(output)` before the loop) must give an output that fits too. Results the innermost
 * layer already checked pass as they are.
 */
export function endedOutputLayer(plan: OutputPlan): Layer<RunContext, RunResult> {
  return {
    name: 'koagent:ended-output',
    async fn(ctx, next) {
      const result = await next();
      if (ctx.runVar[JUDGED] === result || result.status !== 'completed' || result.stopReason !== 'hook_end') return result;
      const checked = await plan.schema.safeParseAsync(result.output);
      if (!checked.success) throw markOwnError(failure(plan, result, result.output, `The output the layer gave does not fit the required output:\n${z.prettifyError(checked.error)}`));
      return settle(ctx, result, result.output, checked.data);
    },
  };
}

/** A segment that ended without an answer: its output is undefined, not its last text (which would pass for one). */
function noAnswer(ctx: RunContext, result: RunResult): RunResult {
  ctx.runVar[STATE_OUTPUT] = { output: undefined };
  return { ...result, output: undefined };
}

/**
 * The answer fits: the state keeps it as written, before the schema's transforms (their
 * output may hold dates, maps, classes); the result gets the schema's output.
 */
function settle(ctx: RunContext, result: RunResult, answer: unknown, value: unknown): RunResult {
  ctx.runVar[STATE_OUTPUT] = { output: answer };
  ctx.emit?.({ type: 'output', output: value });
  const settled = { ...result, output: value };
  ctx.runVar[JUDGED] = settled;
  return settled;
}

function failure(plan: OutputPlan, result: RunResult, raw: unknown, problem: string): InvalidOutputError {
  const shown = typeof raw === 'string' ? raw : JSON.stringify(raw) ?? String(raw);
  const why = result.stopReason === 'final' ? `after ${plan.repairs} repair${plan.repairs === 1 ? '' : 's'}` : `(the segment stopped: ${result.stopReason})`;
  return new InvalidOutputError(`The final answer does not fit the output schema ${why}. ${problem}\nLast answer: ${shown.length > 500 ? `${shown.slice(0, 500)}…` : shown}`, raw, problem);
}
