import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, jsonSchemaInput } from '../../src/index.js';
import type { JsonSchemaCheck } from '../../src/types.js';
import { mockModel } from '../../src/testing/index.js';
import { answerTo } from '../fixtures/counting-tools.js';

const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { path: { type: 'string', description: 'Where' } }, required: ['path'] };

/** A small hand-written check of `schema`: `path` is a required string. */
const check: JsonSchemaCheck = (args) => {
  if (!('path' in args)) return [{ path: [], message: "must have required property 'path'" }];
  return typeof args.path === 'string' ? [] : [{ path: ['path'], message: 'must be string' }];
};

function echoTool(checker: JsonSchemaCheck = check) {
  const runs: unknown[] = [];
  const tool = defineTool({ name: 'read', description: 'Read a file', input: jsonSchemaInput(schema, checker), execute: (args) => (runs.push(args), `read ${String(args.path)}`) });
  return { tool, runs };
}

describe('jsonSchemaInput: the model sees the JSON Schema as given', () => {
  it('the tool spec holds the schema without $schema', async () => {
    const { tool } = echoTool();
    expect(tool.spec.parameters).toEqual({ type: 'object', properties: { path: { type: 'string', description: 'Where' } }, required: ['path'] });
    const model = mockModel(['Hi.']);
    await createAgent({ model, tools: [tool] }).run('go');
    expect(model.calls[0].request.tools).toEqual([tool.spec]);
  });

  it('changing the schema object afterwards changes nothing the model sees', () => {
    const given = structuredClone(schema);
    const tool = defineTool({ name: 'read', description: 'Read', input: jsonSchemaInput(given, check), execute: () => 'x' });
    (given.properties.path as Record<string, unknown>).type = 'number';
    expect((tool.spec.parameters.properties as Record<string, { type: string }>).path.type).toBe('string');
  });
});

describe('jsonSchemaInput: arguments are checked before any layer runs', () => {
  it('arguments that fit reach the tool as they are', async () => {
    const { tool, runs } = echoTool();
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'read', args: { path: 'a.txt' } }] }, 'Done.']), tools: [tool] }).run('go');
    expect(answerTo(result.messages, 'c').content).toBe('read a.txt');
    expect(runs).toEqual([{ path: 'a.txt' }]);
  });

  it('arguments that do not fit settle as a validation error naming the field, and no layer sees the call', async () => {
    const { tool, runs } = echoTool();
    const seen: string[] = [];
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'read', args: { path: 3 } }] }, 'Sorry.']), tools: [tool], middleware: [{ name: 'watch', tool: (ctx, next) => (seen.push(ctx.toolName), next()) }] });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toBe('Error (validation): Invalid arguments for read: ✖ must be string\n  → at path');
    expect(runs).toEqual([]);
    expect(seen).toEqual([]);
  });

  it('a check that throws refuses the arguments (fail closed)', async () => {
    const { tool, runs } = echoTool(() => {
      throw new Error('schema cannot be compiled');
    });
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'read', args: { path: 'a' } }] }, 'Sorry.']), tools: [tool] }).run('go');
    expect(answerTo(result.messages, 'c').content).toContain('the JSON Schema check threw: schema cannot be compiled');
    expect(runs).toEqual([]);
  });

  it('arguments a hook replaces are checked against the JSON Schema too', async () => {
    const { tool, runs } = echoTool();
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ id: 'c', name: 'read', args: { path: 'a' } }] }, 'Sorry.']),
      tools: [tool],
      hooks: [{ name: 'rewrite', preToolCall: () => ({ input: { path: 42 } }) }],
    });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toMatch(/^Error \(validation\): Invalid arguments for read from hook .*must be string/s);
    expect(runs).toEqual([]);
  });
});

describe('jsonSchemaInput: misuse', () => {
  it.each([
    ['a schema that is not an object', [] as unknown, /schema must be a JSON Schema object/],
    ['a schema of something other than an object', { type: 'string' }, /schema must describe an object \(\{ type: 'object', … \}\), as models pass arguments as one \(got type "string"\)/],
  ])('%s is refused', (_what, given, message) => {
    expect(() => jsonSchemaInput(given as Record<string, unknown>, check)).toThrow(message);
  });

  it('a missing check is refused, saying what to give', () => {
    expect(() => jsonSchemaInput({ type: 'object' }, undefined as never)).toThrow(/check must be a function \(args\) => issues/);
  });
});
