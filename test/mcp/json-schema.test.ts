import { describe, expect, it } from 'vitest';
import { SchemaChecks } from '../../src/mcp/json-schema.js';

const check = (schema: Record<string, unknown>, args: Record<string, unknown>) => new SchemaChecks().check(schema)(args);

describe('MCP argument checks with Ajv', () => {
  it('arguments that fit have no issues', () => {
    expect(check({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, { path: 'a' })).toEqual([]);
  });

  it('every problem is reported, with the path of the value it is about', () => {
    const schema = { type: 'object', properties: { edits: { type: 'array', items: { type: 'object', properties: { oldText: { type: 'string' } } } }, 'a/b': { type: 'number' } }, required: ['path'] };
    expect(check(schema, { edits: [{ oldText: 1 }], 'a/b': 'x' })).toEqual([
      { path: [], message: "must have required property 'path'" },
      { path: ['edits', 0, 'oldText'], message: 'must be string' },
      { path: ['a/b'], message: 'must be number' },
    ]);
  });

  it('an unknown key and a value outside an enum say which', () => {
    const schema = { type: 'object', properties: { sort: { enum: ['name', 'size'] } }, additionalProperties: false };
    expect(check(schema, { sort: 'date', extra: 1 })).toEqual([
      { path: [], message: 'must NOT have additional properties (found "extra")' },
      { path: ['sort'], message: 'must be equal to one of the allowed values: "name", "size"' },
    ]);
  });

  it('formats are checked', () => {
    expect(check({ type: 'object', properties: { url: { type: 'string', format: 'uri' } } }, { url: 'not a uri' })).toEqual([{ path: ['url'], message: 'must match format "uri"' }]);
  });

  it('the dialect the schema names is the one checked: 2020-12 prefixItems, draft-07 items arrays', () => {
    const tuple2020 = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } } };
    expect(check(tuple2020, { pair: ['a', 'b'] })).toEqual([{ path: ['pair', 1], message: 'must be number' }]);
    const tuple07 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } } };
    expect(check(tuple07, { pair: ['a', 'b'] })).toEqual([{ path: ['pair', 1], message: 'must be number' }]);
  });

  it('a schema Ajv cannot compile makes the check throw, saying so', () => {
    expect(() => check({ type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }, { a: 1 })).toThrow(/the server's JSON Schema for these arguments cannot be compiled \(can't resolve reference #\/definitions\/missing/);
  });
});
