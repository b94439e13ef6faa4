// A tool input given as JSON Schema rather than zod (an MCP server's tools have one already):
// the model sees the JSON Schema as it is, and a validator of the caller's choice checks the
// arguments, inside a zod schema, so validation, `ctx.replaceArgs` and the resolve step treat
// it like any other tool's input.
import { z } from 'zod';
import { describe } from '../core/vocabulary/errors.js';

/**
 * One problem a JSON Schema validator found in a tool's arguments: where (the keys down to the
 * value, empty for the arguments as a whole) and what.
 *
 * @example const issue: JsonSchemaIssue = { path: ['edits', 0, 'oldText'], message: 'must be a string' };
 *
 * @inline
 */
export interface JsonSchemaIssue {
  path: (string | number)[];
  message: string;
}

/**
 * Checks arguments against a JSON Schema: returns the problems found, none when they fit.
 *
 * @example const check: JsonSchemaCheck = (args) => (typeof args.path === 'string' ? [] : [{ path: ['path'], message: 'must be a string' }]);
 */
export type JsonSchemaCheck = (args: Record<string, unknown>) => readonly JsonSchemaIssue[];

const schemas = new WeakMap<object, Record<string, unknown>>();

/**
 * A tool `input` given as a JSON Schema of an object, checked by `check`: what the model is told
 * is `schema` itself (without `$schema`), and arguments that do not fit settle as a `validation`
 * error naming each field, before any layer runs. `koagent/mcp` checks with Ajv.
 *
 * @example defineTool({ name: 'echo', description: 'Echo a message',
 *   input: jsonSchemaInput({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, check),
 *   execute: ({ message }) => String(message) })
 */
export function jsonSchemaInput(schema: Record<string, unknown>, check: JsonSchemaCheck): z.ZodType<Record<string, unknown>, Record<string, unknown>> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new TypeError('jsonSchemaInput(schema, check): schema must be a JSON Schema object, e.g. { type: \'object\', properties: { … } }');
  if (schema.type !== 'object') throw new TypeError(`jsonSchemaInput(schema, check): schema must describe an object ({ type: 'object', … }), as models pass arguments as one (got type ${JSON.stringify(schema.type)})`);
  if (typeof check !== 'function') throw new TypeError('jsonSchemaInput(schema, check): check must be a function (args) => issues, e.g. one made with Ajv');
  const { $schema: _dialect, ...forModel } = structuredClone(schema);
  const input = z.record(z.string(), z.unknown()).superRefine((args, ctx) => {
    let issues: readonly JsonSchemaIssue[];
    try {
      issues = check(args);
    } catch (error) {
      // A validator that cannot decide refuses the arguments (fail closed).
      ctx.addIssue({ code: 'custom', message: `the JSON Schema check threw: ${describe(error)}` });
      return;
    }
    for (const issue of issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
  schemas.set(input, forModel);
  return input;
}

/** The JSON Schema an input made with `jsonSchemaInput` shows the model, else undefined. */
export function jsonSchemaOf(input: object): Record<string, unknown> | undefined {
  return schemas.get(input);
}
