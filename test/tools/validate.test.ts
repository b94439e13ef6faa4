// The outermost built-in step of the tool stack: a call naming no known tool, or with arguments
// that are not a JSON object fitting the schema, settles as a tool error the model sees; the
// run goes on, and no user layer ever sees the malformed call.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type ModelProvider } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { add, provider, reply, runFailure, toolError, toolMessages } from '../support/core.js';

/** A model that makes one `add` call with these raw args, then answers "Recovered." */
function callWith(args: unknown, name = 'add'): ModelProvider & { requests: unknown[] } {
  return provider((_req, n): GenerateResult => (n === 1 ? reply('', [{ id: 'c1', name, args }]) : reply('Recovered.')));
}

/** Run one call with these raw args, counting how often a user layer and the tool were entered. */
async function settle(args: unknown, name = 'add') {
  let layerSaw = 0;
  let executed = 0;
  const counted = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => { executed++; return a + b; } });
  const result = await createAgent({ model: callWith(args, name), tools: [counted] }).use({ name: 'watcher', tool: (_ctx, next) => { layerSaw++; return next(); } }).run('Hi');
  const [message] = toolMessages(result.messages);
  return { result, message, error: toolError(message), layerSaw, executed };
}

describe('arguments that are not a JSON object', () => {
  it.each([
    ['text that is not JSON', '{"a": 1,', /Invalid arguments for add: the arguments are not valid JSON \(/],
    ['JSON text of an array', '[1, 2]', /Invalid arguments for add: the arguments must be a JSON object, got an array/],
    ['JSON text of a number', '42', /the arguments must be a JSON object, got number/],
    ['JSON text of null', 'null', /the arguments must be a JSON object, got null/],
    ['an array', [1, 2], /the arguments must be a JSON object, got an array/],
    ['a number', 7, /the arguments must be a JSON object, got number/],
    ['null', null, /the arguments must be a JSON object, got null/],
  ])('%s settles the call as a validation error; no layer or tool runs, and the run goes on', async (_what, args, message) => {
    const { result, message: tool, error, layerSaw, executed } = await settle(args);
    expect(error?.kind).toBe('validation');
    expect(error?.message).toMatch(message);
    expect(tool.content).toBe(`Error (validation): ${error?.message}`);
    expect(layerSaw).toBe(0);
    expect(executed).toBe(0);
    expect(result.stopReason).toBe('final');
    expect(result.text).toBe('Recovered.');
  });

  it('accepts JSON text of an object as the arguments', async () => {
    const { message, executed } = await settle('{"a": 2, "b": 40}');
    expect(message.content).toBe('42');
    expect(executed).toBe(1);
  });

  it('treats empty argument text as no arguments, as some providers send for tools without parameters', async () => {
    const ping = defineTool({ name: 'ping', description: 'Ping', execute: () => 'pong' });
    const result = await createAgent({ model: callWith('', 'ping'), tools: [ping] }).run('Hi');
    expect(toolMessages(result.messages)[0].content).toBe('pong');
  });
});

describe('arguments that do not fit the schema', () => {
  it('settle as a validation error naming the tool and the field, before any layer runs', async () => {
    const { error, layerSaw, executed, result } = await settle({ a: 1, b: 'two' });
    expect(error?.kind).toBe('validation');
    expect(error?.message).toMatch(/^Invalid arguments for add: /);
    expect(error?.message).toMatch(/b/);
    expect(error?.message).toMatch(/expected number/);
    expect(layerSaw).toBe(0);
    expect(executed).toBe(0);
    expect(result.text).toBe('Recovered.');
  });

  it('keep the model\'s raw call in the transcript as it wrote it', async () => {
    const { result } = await settle('{"a": 1,');
    expect(result.messages[1]).toEqual({ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'add', args: '{"a": 1,' }] });
  });
});

describe('an unknown tool', () => {
  it('settles as not_found naming the available tools; the run goes on', async () => {
    const multiply = defineTool({ name: 'multiply', description: 'Multiply', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a * b });
    const model = mockModel([{ toolCalls: [{ name: 'divide', args: { a: 1, b: 2 } }] }, 'I cannot divide.']);
    const result = await createAgent({ model, tools: [add, multiply] }).run('1/2?');
    const [message] = toolMessages(result.messages);
    expect(toolError(message)).toEqual({ kind: 'not_found', message: 'There is no tool named "divide". Available tools: add, multiply.' });
    expect(message.name).toBe('divide');
    expect(result.text).toBe('I cannot divide.');
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: 'Error (not_found): There is no tool named "divide". Available tools: add, multiply.' });
  });

  it('says so when the agent has no tools at all', async () => {
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: {} }] }, 'ok']) }).run('Hi');
    expect(toolError(toolMessages(result.messages)[0])?.message).toBe('There is no tool named "add". This agent has no tools.');
  });

  it('reached through a layer\'s rename settles as not_found saying a layer renamed it', async () => {
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, 'ok']), tools: [add] })
      .use({ name: 'typo', tool: (ctx, next) => { ctx.toolName = 'ad'; return next(); } });
    const result = await agent.run('Hi');
    expect(toolError(toolMessages(result.messages)[0])).toEqual({ kind: 'not_found', message: 'There is no tool named "ad" (a layer renamed the call). Available tools: add.' });
  });
});

describe('what layers get', () => {
  it('the schema\'s input form of the args as ctx.args, and the tool the parsed output', async () => {
    let layerArgs: unknown;
    let toolArgs: unknown;
    const greet = defineTool({ name: 'greet', description: 'Greet', input: z.object({ name: z.string().trim(), times: z.number().default(1) }), execute: (args) => { toolArgs = args; return 'hi'; } });
    const model = mockModel([{ toolCalls: [{ name: 'greet', args: { name: '  Ada ' } }] }, 'ok']);
    await createAgent({ model, tools: [greet] }).use({ name: 'spy', tool: (ctx, next) => { layerArgs = structuredClone(ctx.args); return next(); } }).run('Hi');
    expect(layerArgs).toEqual({ name: '  Ada ' });
    expect(toolArgs).toEqual({ name: 'Ada', times: 1 });
  });
});

describe('revalidating what a layer changed', () => {
  /** A tool whose schema counts how often it parses, run behind one layer that does `change`. */
  async function parses(change: (ctx: { args: Record<string, unknown>; toolName: string }) => void, args: unknown = { a: 1, b: 2 }) {
    let count = 0;
    const input = z.object({ a: z.number(), b: z.number() }).refine(() => ++count > 0);
    let got: unknown;
    const counted = defineTool({ name: 'add', description: 'Add', input, execute: (parsed) => { got = parsed; return parsed.a + parsed.b; } });
    const result = await createAgent({ model: callWith(args), tools: [counted] }).use({ name: 'editor', tool: (ctx, next) => { change(ctx); return next(); } }).run('Hi');
    return { count, got, message: toolMessages(result.messages)[0] };
  }

  it('parses a call the layers left as it was once, not again after them', async () => {
    expect(await parses(() => undefined)).toMatchObject({ count: 1, got: { a: 1, b: 2 }, message: { content: '3' } });
  });

  it('checks again arguments a layer edited in place, and the tool gets the edited ones', async () => {
    expect(await parses((ctx) => { ctx.args.b = 40; })).toMatchObject({ count: 2, got: { a: 1, b: 40 }, message: { content: '41' } });
    const refused = await parses((ctx) => { ctx.args.b = 'forty'; });
    expect(refused.got).toBeUndefined();
    expect(refused.message.content).toMatch(/^Error \(validation\): Invalid arguments for add \(as changed by a layer\)/);
  });

  it('checks again arguments a layer replaced, equal or not: the call knows it was changed, it does not compare', async () => {
    expect(await parses((ctx) => { ctx.args = { a: 5, b: 5 }; })).toMatchObject({ count: 2, got: { a: 5, b: 5 } });
    expect(await parses((ctx) => { ctx.args = { a: 1, b: 2 }; })).toMatchObject({ count: 2, got: { a: 1, b: 2 } });
  });

  it('parses a call whose arguments came as JSON text once when no layer touched them, and again after one edited them', async () => {
    expect(await parses(() => undefined, '{"a":1,"b":2}')).toMatchObject({ count: 1, got: { a: 1, b: 2 } });
    expect(await parses((ctx) => { ctx.args.a = 10; }, '{"a":1,"b":2}')).toMatchObject({ count: 2, got: { a: 10, b: 2 } });
  });

  it('does not blame the layer for a schema that throws on the arguments it set: the run fails as internal, naming no layer', async () => {
    // A transform that throws (not a validation issue) makes zod's safeParse throw, here in the
    // built-in resolve step below the user's layer, not in the layer itself.
    const picky = defineTool({
      name: 'picky', description: 'Refuses 13',
      input: z.object({ n: z.number().transform((n) => { if (n === 13) throw new Error('unlucky'); return n; }) }),
      execute: ({ n }) => n,
    });
    const model = mockModel([{ toolCalls: [{ name: 'picky', args: { n: 1 } }] }, 'ok']);
    const agent = createAgent({ model, tools: [picky] }).use({ name: 'thirteen', tool: (ctx, next) => { ctx.args = { n: 13 }; return next(); } });
    const failure = await runFailure(agent.run('Hi'), 'internal');
    expect(failure.layer).toBeUndefined();
    expect(failure.message).toBe('unlucky');
  });
});
