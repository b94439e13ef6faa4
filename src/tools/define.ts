import { z } from 'zod';
import type { ToolContentPart } from '../core/vocabulary/content.js';
import type { InputGuardrail, InterruptPolicy, OutputGuardrail, Tool, ToolAnnotations, ToolContext } from '../core/vocabulary/contexts.js';
import type { ToolSpec } from '../core/vocabulary/model.js';
import { functionSchema, optionsSchema, parseOptions } from '../core/vocabulary/options.js';
import { jsonSchemaOf } from './json-schema-input.js';

/**
 * The definition `defineTool` takes.
 *
 * @example defineTool({ name: 'add', description: 'Add two numbers', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b })
 *
 * @inline
 */
export interface ToolDefinition<S extends ToolInput = ToolInput, R = unknown, C = any> {
  /** Letters, digits, `_` and `-`, at most 64 characters (what model APIs accept). */
  name: string;
  description: string;
  /** A zod schema of an object; the JSON schema the model sees is derived from it. */
  input?: S;
  /**
   * Does the work: gets the checked arguments (the schema's output) and the call's context;
   * returns the result (JSON) the model reads. Annotate `ctx` as `ToolContext<T>` to type the
   * run context (`ctx.context`).
   */
  execute(args: z.output<S>, ctx: ToolContext<C>): R | Promise<R>;
  /**
   * A zod schema every result must fit: a result that does not is an `execution` error naming
   * the field, and what the tool gives on is the schema's output (its defaults and transforms
   * applied). With `defineTool({ output })`, the result's type is the schema's.
   */
  output?: z.ZodType;
  /**
   * What the model reads of a result, when not the result as JSON: text, or parts (an image, a
   * file). It runs on the result the layers settled on, so a layer that redacts the result
   * redacts what the model sees.
   *
   * @example toModelOutput: (shot) => [{ type: 'text', text: shot.url }, { type: 'image', image: shot.png, mediaType: 'image/png' }]
   */
  toModelOutput?: (result: Awaited<R>) => string | ToolContentPart[];
  /** Pause for a human before running: always, or when the function says so. */
  needsApproval?: boolean | ((args: z.output<S>, ctx: ToolContext) => boolean | Promise<boolean>);
  guardrails?: { input?: InputGuardrail<z.output<S>>[]; output?: OutputGuardrail<z.output<S>, Awaited<R>>[] };
  /**
   * Hints about what the tool does (read-only, destructive …), which permission rules can match.
   *
   * @example annotations: { readOnlyHint: false, destructiveHint: true }
   */
  annotations?: ToolAnnotations;
  /**
   * Running the tool again with the same `ctx.idempotencyKey` does no harm: it has no effect,
   * or its effect is deduplicated by that key (as payment APIs do). A call interrupted while
   * running (the process died) is then run again when its run is recovered.
   */
  idempotent?: boolean;
  /**
   * What a call of this tool does when it was running when its run was interrupted (it ran
   * zero or one times): `'rerun'` (only with `idempotent: true`, its default), `'report'` (the
   * default otherwise: it does not run again, and the model is told its outcome is unknown) or
   * `'ask'` (the run suspends, and a human decides whether it runs again).
   */
  onInterrupted?: InterruptPolicy;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A zod schema whose input is an object of arguments: what models pass.
 *
 * @example const input: ToolInput = z.object({ city: z.string() });
 *
 * @inline
 */
export type ToolInput = z.ZodType<unknown, Record<string, unknown>>;

const isZodSchema = (value: unknown) => typeof (value as { safeParse?: unknown } | null)?.safeParse === 'function' && typeof value === 'object' && '_zod' in (value as object);

const hint = z.boolean({ error: 'must be true or false' }).optional();
/** The behaviour hints of a tool (MCP's), as tools declare them and permission rules match them. */
export const hintFields = { readOnlyHint: hint, destructiveHint: hint, idempotentHint: hint, openWorldHint: hint };
/** What people write for the hints instead. */
export const hintAliases = { readOnly: 'readOnlyHint', destructive: 'destructiveHint', idempotent: 'idempotentHint', openWorld: 'openWorldHint' };
/** The tool annotations koagent knows (MCP's): an unknown one is refused, naming the one meant. */
const annotationsSchema = optionsSchema({ title: z.string({ error: 'must be a string' }).optional(), ...hintFields }, { noun: 'a tool annotation', aliases: hintAliases });

/** The shape of a tool's definition, described once: its check and messages come from it. */
const definitionSchema = optionsSchema({
  name: z.string({ error: 'must be 1-64 letters, digits, "_" or "-"' }).regex(NAME, { error: 'must be 1-64 letters, digits, "_" or "-"' }),
  description: z.string({ error: 'must be a string telling the model what the tool does' }),
  input: z.custom(isZodSchema, { error: 'must be a zod (v4) schema, e.g. z.object({ query: z.string() })' }).optional(),
  execute: functionSchema('a function (args, ctx) => result'),
  output: z.custom(isZodSchema, { error: 'must be a zod (v4) schema of the result, e.g. z.object({ total: z.number() })' }).optional(),
  toModelOutput: functionSchema('a function (result) => text or content parts').optional(),
  needsApproval: z.union([z.boolean(), functionSchema()], { error: 'must be a boolean or a function (args, ctx) => boolean' }).optional(),
  guardrails: optionsSchema({
    input: z.array(functionSchema(), { error: 'must be an array of functions' }).optional(),
    output: z.array(functionSchema(), { error: 'must be an array of functions' }).optional(),
  }, { noun: 'a kind of guardrail', aliases: { inputs: 'input', outputs: 'output', before: 'input', after: 'output', args: 'input', result: 'output' } }).optional(),
  annotations: annotationsSchema.optional(),
  idempotent: z.boolean({ error: 'must be true or false' }).optional(),
  onInterrupted: z.enum(['rerun', 'report', 'ask'], { error: "must be 'rerun', 'report' or 'ask'" }).optional(),
}, { noun: 'a field of a tool definition', aliases: { hints: 'annotations', idempotency: 'idempotent', isIdempotent: 'idempotent', onInterrupt: 'onInterrupted', interrupted: 'onInterrupted', onCrash: 'onInterrupted', needsApprovel: 'needsApproval', requiresApproval: 'needsApproval', approval: 'needsApproval', run: 'execute', handler: 'execute', parameters: 'input', schema: 'input', inputSchema: 'input', args: 'input', outputSchema: 'output', result: 'output', returns: 'output', toModelContent: 'toModelOutput', modelOutput: 'toModelOutput' } });

/**
 * Define a tool. Arguments are checked with the zod schema before anything else sees them.
 *
 * @example const add = defineTool({ name: 'add', description: 'Add two numbers',
 *   input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
 */
export function defineTool<S extends ToolInput = z.ZodObject<{}>, O extends z.ZodType = z.ZodType, R = unknown, C = any>(definition: ToolDefinition<S, z.input<O>, C> & { output: O }): Tool<S, z.output<O>, C>;
export function defineTool<S extends ToolInput = z.ZodObject<{}>, R = unknown, C = any>(definition: ToolDefinition<S, R, C> & { output?: undefined }): Tool<S, R, C>;
export function defineTool<S extends ToolInput, R, C>(definition: ToolDefinition<S, R, C>): Tool<S, R, C> {
  if (typeof definition !== 'object' || definition === null) throw new TypeError('defineTool(definition): definition must be an object { name, description, input, execute }');
  const named = (definition as { name?: unknown }).name;
  const where = `defineTool(${typeof named === 'string' ? JSON.stringify(named) : '…'})`;
  parseOptions(definitionSchema, definition, where);
  const { name, description, execute, needsApproval, guardrails = {}, output, toModelOutput, annotations, idempotent, onInterrupted } = definition;
  if (onInterrupted === 'rerun' && idempotent !== true) {
    throw new TypeError(`${where}: onInterrupted: 'rerun' may run a call twice; declare idempotent: true if the tool deduplicates its effect by ctx.idempotencyKey, or use 'report' or 'ask'`);
  }
  const input = (definition.input ?? z.object({})) as S;
  const guards = { input: (guardrails.input ?? []) as InputGuardrail[], output: (guardrails.output ?? []) as OutputGuardrail[] };
  // Frozen all the way down: a layer that changes what one request says of a tool replaces the
  // spec in `ctx.request.tools`; it cannot change the tool for every other run.
  const spec: ToolSpec = deepFreeze({ name, description, parameters: parametersOf(where, input) });
  const tool: Tool<S, R, C> = { name, description, input, spec, execute, needsApproval, guardrails: guards };
  if (output !== undefined) (tool as { output?: z.ZodType }).output = output;
  if (toModelOutput !== undefined) (tool as { toModelOutput?: unknown }).toModelOutput = toModelOutput;
  if (annotations !== undefined) (tool as { annotations?: ToolAnnotations }).annotations = Object.freeze({ ...annotations });
  if (idempotent !== undefined) (tool as { idempotent?: boolean }).idempotent = idempotent;
  if (onInterrupted !== undefined) (tool as { onInterrupted?: InterruptPolicy }).onInterrupted = onInterrupted;
  return Object.freeze(tool);
}

/**
 * What the model is told of each input schema, described once: zod schemas do not change, and
 * tools are often defined per request over one schema. Shared between tools, frozen.
 */
const described = new WeakMap<z.ZodType, Record<string, unknown>>();

function parametersOf(where: string, input: z.ZodType): Record<string, unknown> {
  let parameters = described.get(input);
  if (parameters === undefined) described.set(input, (parameters = deepFreeze(describeInput(where, input))));
  return parameters;
}

function describeInput(where: string, input: z.ZodType): Record<string, unknown> {
  const given = jsonSchemaOf(input);
  if (given !== undefined) return structuredClone(given);
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new TypeError(`${where}: input cannot be described as JSON schema for the model: ${(error as Error).message}`);
  }
  if (schema.type !== 'object') throw new TypeError(`${where}: input must be an object schema (z.object({ … })); models pass arguments as an object`);
  delete schema.$schema;
  return schema;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * Whether `value` is a tool made with `defineTool`.
 *
 * @example if (!isTool(candidate)) throw new TypeError('not a tool');
 */
export function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && typeof (value as Tool).execute === 'function' && typeof (value as Tool).spec === 'object';
}
