import { z } from 'zod';
import type { InputGuardrail, InterruptPolicy, OutputGuardrail, Tool, ToolContext } from '../core/contexts.js';
import type { ToolSpec } from '../core/model.js';

/**
 * The definition `defineTool` takes.
 *
 * @example defineTool({ name: 'add', description: 'Add two numbers', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b })
 */
export interface ToolDefinition<S extends z.ZodType = z.ZodType, R = unknown> {
  /** Letters, digits, `_` and `-`, at most 64 characters (what model APIs accept). */
  name: string;
  description: string;
  /** A zod schema of an object; the JSON schema the model sees is derived from it. */
  input?: S;
  /** Does the work: gets the checked arguments (the schema's output) and the call's context; returns the result (JSON) the model reads. */
  execute(args: z.output<S>, ctx: ToolContext): R | Promise<R>;
  /** Pause for a human before running: always, or when the function says so. */
  needsApproval?: boolean | ((args: z.output<S>, ctx: ToolContext) => boolean | Promise<boolean>);
  guardrails?: { input?: InputGuardrail<z.output<S>>[]; output?: OutputGuardrail<z.output<S>, Awaited<R>>[] };
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
const INTERRUPT_POLICIES: readonly string[] = ['rerun', 'report', 'ask'];

/**
 * Define a tool. Arguments are checked with the zod schema before anything else sees them.
 *
 * @example const add = defineTool({ name: 'add', description: 'Add two numbers',
 *   input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
 */
export function defineTool<S extends z.ZodType = z.ZodObject<{}>, R = unknown>(definition: ToolDefinition<S, R>): Tool<S, R> {
  if (typeof definition !== 'object' || definition === null) throw new TypeError('defineTool(definition): definition must be an object { name, description, input, execute }');
  const { name, description, execute, needsApproval, guardrails = {} } = definition;
  const where = `defineTool(${typeof name === 'string' ? JSON.stringify(name) : '…'})`;
  if (typeof name !== 'string' || !NAME.test(name)) throw new TypeError(`${where}: name must be 1-64 letters, digits, "_" or "-" (got ${JSON.stringify(name)})`);
  if (typeof description !== 'string') throw new TypeError(`${where}: description must be a string telling the model what the tool does`);
  if (typeof execute !== 'function') throw new TypeError(`${where}: execute must be a function (args, ctx) => result`);
  if (needsApproval !== undefined && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    throw new TypeError(`${where}: needsApproval must be a boolean or a function (args, ctx) => boolean`);
  }
  const { idempotent, onInterrupted } = definition;
  if (idempotent !== undefined && typeof idempotent !== 'boolean') throw new TypeError(`${where}: idempotent must be true or false`);
  if (onInterrupted !== undefined && !INTERRUPT_POLICIES.includes(onInterrupted)) {
    throw new TypeError(`${where}: onInterrupted must be 'rerun', 'report' or 'ask' (got ${JSON.stringify(onInterrupted)})`);
  }
  if (onInterrupted === 'rerun' && idempotent !== true) {
    throw new TypeError(`${where}: onInterrupted: 'rerun' may run a call twice; declare idempotent: true if the tool deduplicates its effect by ctx.idempotencyKey, or use 'report' or 'ask'`);
  }
  const input = (definition.input ?? z.object({})) as S;
  if (typeof (input as { safeParse?: unknown }).safeParse !== 'function' || !('_zod' in input)) {
    throw new TypeError(`${where}: input must be a zod (v4) schema, e.g. z.object({ query: z.string() })`);
  }
  const guards = {
    input: checkGuardrails(where, 'input', guardrails.input) as InputGuardrail[],
    output: checkGuardrails(where, 'output', guardrails.output) as OutputGuardrail[],
  };
  const spec: ToolSpec = { name, description, parameters: parametersOf(where, input) };
  const policy = { ...(idempotent !== undefined ? { idempotent } : {}), ...(onInterrupted !== undefined ? { onInterrupted } : {}) };
  return Object.freeze({ name, description, input, spec, execute, needsApproval, guardrails: guards, ...policy });
}

function checkGuardrails(where: string, which: string, list: unknown): unknown[] {
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((g) => typeof g !== 'function')) {
    throw new TypeError(`${where}: guardrails.${which} must be an array of functions`);
  }
  return list;
}

function parametersOf(where: string, input: z.ZodType): Record<string, unknown> {
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

export function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && typeof (value as Tool).execute === 'function' && typeof (value as Tool).spec === 'object';
}
