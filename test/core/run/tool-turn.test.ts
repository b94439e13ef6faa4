// Settling a turn's tool calls into transcript messages: a result the model cannot read (not
// JSON) becomes an execution error naming the problem, and the run and its state go on intact.
// Concurrency and call order are tested in test/loop.test.ts.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { toolError, toolMessages } from '../../support/core.js';

function returning(value: () => unknown) {
  return defineTool({ name: 'produce', description: 'Returns a value', input: z.object({}), execute: value });
}

async function settleResult(value: () => unknown) {
  const model = mockModel([{ toolCalls: [{ name: 'produce', args: {} }] }, 'Carried on.']);
  const result = await createAgent({ model, tools: [returning(value)] }).run('Go');
  return { result, message: toolMessages(result.messages)[0] };
}

const cyclic = () => { const node: Record<string, unknown> = { name: 'loop' }; node.self = node; return node; };

describe('results that cannot be sent to the model', () => {
  it.each([
    ['a function', () => () => 1, /it is a function/],
    ['a BigInt', () => 10n, /BigInt/],
    ['a symbol', () => Symbol('s'), /it is a symbol/],
    ['undefined', () => undefined, /it is undefined \(return null for "nothing"\)/],
    ['a cyclic object', cyclic, /circular/i],
    ['an object holding a function', () => ({ ok: true, callback: () => 1 }), /a function at key "callback"/],
    ['an object holding a BigInt', () => ({ total: 5n }), /a BigInt at key "total"/],
    ['a Map', () => new Map([['a', 1]]), /a Map \(convert it with Object\.fromEntries\) at the top level/],
    ['an object holding a Set', () => ({ tags: new Set(['x']) }), /a Set \(convert it with Array\.from\) at key "tags"/],
  ])('%s becomes an execution error naming the problem; the run goes on and the state stays JSON', async (_what, value, problem) => {
    const { result, message } = await settleResult(value);
    const error = toolError(message);
    expect(error?.kind).toBe('execution');
    expect(error?.message).toMatch(/^produce returned a result that cannot be sent to the model: the result is not JSON: /);
    expect(error?.message).toMatch(problem);
    expect(result.text).toBe('Carried on.');
    expect(JSON.parse(JSON.stringify(result.state))).toStrictEqual(result.state);
  });

  it('names the layer when a layer supplied the result', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'produce', args: {} }] }, 'ok']);
    const agent = createAgent({ model, tools: [returning(() => 1)] }).use({ name: 'bad-cache', tool: async () => ({ result: new Map() }) });
    const result = await agent.run('Go');
    expect(toolError(toolMessages(result.messages)[0])?.message).toMatch(/^the result bad-cache gave for produce that cannot be sent to the model: the result is not JSON: a Map/);
  });
});

describe('results the model can read', () => {
  it.each([
    ['a string, as is', () => 'plain text', 'plain text'],
    ['a number, as JSON', () => 42, '42'],
    ['a fraction, as JSON', () => 0.1 + 0.2, '0.30000000000000004'],
    ['a huge number, in JSON\'s exponent form', () => 1e21, '1e+21'],
    ['negative zero, as JSON writes it', () => -0, '0'],
    ['NaN, as JSON writes it', () => Number.NaN, 'null'],
    ['Infinity, as JSON writes it', () => -Infinity, 'null'],
    ['a boolean, as JSON', () => false, 'false'],
    ['null, as JSON', () => null, 'null'],
    ['an object, as JSON', () => ({ city: 'Oslo', temps: [1, 2] }), '{"city":"Oslo","temps":[1,2]}'],
    ['a Date, as its JSON form', () => new Date(Date.UTC(2024, 0, 2)), '"2024-01-02T00:00:00.000Z"'],
  ])('%s', async (_what, value, content) => {
    const { message } = await settleResult(value);
    expect(message).toEqual({ role: 'tool', toolCallId: expect.any(String), name: 'produce', content });
  });

  it('counts every settled call in usage.toolCalls, errors included', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'produce', args: {} }, { name: 'missing', args: {} }, { name: 'produce', args: 'not json' }] }, 'ok']);
    const result = await createAgent({ model, tools: [returning(() => 'x')] }).run('Go');
    expect(result.usage.toolCalls).toBe(3);
    expect(toolMessages(result.messages).map((m) => toolError(m)?.kind)).toEqual([undefined, 'not_found', 'validation']);
  });
});
