// defineTool: the JSON schema the model sees comes from the zod schema; bad definitions are
// rejected at once, naming what is wrong.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/index.js';

const execute = () => 'ok';

describe('the JSON schema sent to the model', () => {
  it('is derived from the zod schema by zod itself, without a $schema key', () => {
    const input = z.object({ city: z.string().describe('City name'), days: z.number().int().min(1).optional() });
    const tool = defineTool({ name: 'forecast', description: 'The forecast', input, execute });
    const { $schema: _dropped, ...expected } = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
    expect(tool.spec).toEqual({ name: 'forecast', description: 'The forecast', parameters: expected });
    expect(tool.spec.parameters).not.toHaveProperty('$schema');
    expect(tool.spec.parameters).toMatchObject({ type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] });
  });

  it('describes the input side of the schema, so a field with a default is not required', () => {
    const tool = defineTool({ name: 'page', description: 'A page', input: z.object({ n: z.number().default(1) }), execute });
    expect(tool.spec.parameters.required ?? []).not.toContain('n');
  });

  it('is an empty object schema when the tool takes no input', () => {
    const tool = defineTool({ name: 'now', description: 'The time', execute });
    expect(tool.spec.parameters).toMatchObject({ type: 'object', properties: {} });
    expect(tool.input.safeParse({}).success).toBe(true);
  });

  it('makes a frozen tool whose execute is the one given', () => {
    const tool = defineTool({ name: 'x', description: 'x', execute });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool.execute).toBe(execute);
  });
});

describe('the JSON schema of an input schema is made once', () => {
  it('tools defined over one zod schema (per request, say) share its description, frozen', () => {
    const input = z.object({ q: z.string().describe('What to look for') });
    const a = defineTool({ name: 'search_a', description: 'A', input, execute: () => 'a' });
    const b = defineTool({ name: 'search_b', description: 'B', input, execute: () => 'b' });
    expect(b.spec.parameters).toBe(a.spec.parameters);
    expect(Object.isFrozen(a.spec.parameters)).toBe(true);
    expect(a.spec.parameters).toEqual({ type: 'object', properties: { q: { type: 'string', description: 'What to look for' } }, required: ['q'] });
  });
});

describe('bad definitions', () => {
  it.each([
    ['a name with a space', { name: 'get weather', description: 'd', execute }, /name must be 1-64 letters, digits, "_" or "-" \(got "get weather"\)/],
    ['a name with a dot', { name: 'fs.read', description: 'd', execute }, /name must be 1-64 letters/],
    ['an empty name', { name: '', description: 'd', execute }, /name must be 1-64 letters/],
    ['a name of 65 characters', { name: 'a'.repeat(65), description: 'd', execute }, /name must be 1-64 letters/],
    ['a missing description', { name: 'x', execute }, /defineTool\("x"\): description must be a string/],
    ['a missing execute', { name: 'x', description: 'd' }, /defineTool\("x"\): execute must be a function/],
    ['a schema that is not an object', { name: 'x', description: 'd', input: z.string(), execute }, /input must be an object schema \(z\.object\(\{ … \}\)\)/],
    ['an input that is not a zod schema', { name: 'x', description: 'd', input: { type: 'object' }, execute }, /input must be a zod \(v4\) schema/],
    ['an input that only looks like zod', { name: 'x', description: 'd', input: { safeParse: () => ({ success: true }) }, execute }, /input must be a zod \(v4\) schema/],
    ['a schema JSON schema cannot describe', { name: 'x', description: 'd', input: z.object({ when: z.date() }), execute }, /input cannot be described as JSON schema for the model/],
    ['needsApproval of the wrong type', { name: 'x', description: 'd', execute, needsApproval: 'yes' }, /needsApproval must be a boolean or a function/],
    ['guardrails that are not functions', { name: 'x', description: 'd', execute, guardrails: { input: ['no'] } }, /guardrails\.input\[0\] must be a function \(got the string "no"\)/],
    ['idempotent that is not a boolean', { name: 'x', description: 'd', execute, idempotent: 'yes' }, /defineTool\("x"\): idempotent must be true or false/],
    ['an unknown interruption policy', { name: 'x', description: 'd', execute, onInterrupted: 'retry' }, /onInterrupted must be 'rerun', 'report' or 'ask' \(got the string "retry"\)/],
    ['a misspelled interruption policy key', { name: 'x', description: 'd', execute, onInterupted: 'ask' }, /defineTool\("x"\): onInterupted is not a field of a tool definition; did you mean `onInterrupted`\?/],
    ['idempotency for idempotent', { name: 'x', description: 'd', execute, idempotency: true }, /idempotency is not a field of a tool definition; did you mean `idempotent`\?/],
    ["onInterrupted: 'rerun' without idempotent", { name: 'x', description: 'd', execute, onInterrupted: 'rerun' }, /onInterrupted: 'rerun' may run a call twice; declare idempotent: true if the tool deduplicates its effect by ctx.idempotencyKey, or use 'report' or 'ask'/],
  ])('rejects %s with a TypeError', (_what, definition, message) => {
    expect(() => defineTool(definition as never)).toThrow(TypeError);
    expect(() => defineTool(definition as never)).toThrow(message);
  });

  it('rejects a definition that is not an object', () => {
    expect(() => defineTool(null as never)).toThrow(/definition must be an object/);
  });

  it('accepts needsApproval as a boolean or a function', () => {
    expect(defineTool({ name: 'a', description: 'd', execute, needsApproval: true }).needsApproval).toBe(true);
    const decide = () => false;
    expect(defineTool({ name: 'b', description: 'd', execute, needsApproval: decide }).needsApproval).toBe(decide);
  });

  it('keeps what a tool declares about interrupted calls, and leaves it out when nothing is declared', () => {
    expect(defineTool({ name: 'a', description: 'd', execute, idempotent: true })).toMatchObject({ idempotent: true });
    expect(defineTool({ name: 'b', description: 'd', execute, onInterrupted: 'ask' })).toMatchObject({ onInterrupted: 'ask' });
    expect(defineTool({ name: 'c', description: 'd', execute, idempotent: true, onInterrupted: 'rerun' })).toMatchObject({ idempotent: true, onInterrupted: 'rerun' });
    const plain = defineTool({ name: 'd', description: 'd', execute });
    expect('idempotent' in plain || 'onInterrupted' in plain).toBe(false);
  });
});

describe('tool annotations', () => {
  it('are kept on the tool, frozen', () => {
    const given = { readOnlyHint: false, destructiveHint: true };
    const tool = defineTool({ name: 'rm', description: 'Delete', annotations: given, execute: () => null });
    given.destructiveHint = false;
    expect(tool.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
    expect(Object.isFrozen(tool.annotations)).toBe(true);
  });

  it('a tool without them has none', () => {
    expect(defineTool({ name: 'ls', description: 'List', execute: () => null }).annotations).toBeUndefined();
  });

  it('an unknown annotation is refused, naming the one meant', () => {
    expect(() => defineTool({ name: 'rm', description: 'Delete', annotations: { destructive: true } as never, execute: () => null })).toThrow('defineTool("rm"): annotations.destructive is not a tool annotation; did you mean `destructiveHint`?');
  });
});
