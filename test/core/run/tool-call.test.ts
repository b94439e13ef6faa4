// One tool call is one record, from the reply that asked for it to its result: what the model
// wrote, the arguments as checked, what was decided of it. Its arguments are checked against the
// bounds once, as the reply is kept, and against the tool's schema once more, by validation —
// again only after a layer changed the call, which the record knows without comparing.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type Middleware, type ToolContext } from '../../../src/index.js';
import { argsObject, DEFAULT_ARGUMENT_BOUNDS } from '../../../src/core/run/tool-call.js';
import { provider, reply, toolMessages } from '../../support/core.js';

const RAW = '{"city":"Paris","days":2}';

/** A tool whose schema counts its parses, a model that calls it once with `RAW` as JSON text, and the layers given. */
async function runWith(...layers: Middleware[]) {
  let parses = 0;
  const input = z.object({ city: z.string(), days: z.number() }).refine(() => ++parses > 0);
  const forecast = defineTool({ name: 'forecast', description: 'Forecast', input, execute: ({ city, days }) => `${city}: ${days} days of sun` });
  const model = provider((_req, n): GenerateResult => (n === 1 ? reply('', [{ id: 'c1', name: 'forecast', args: RAW }]) : reply('Done.')));
  const agent = createAgent({ model, tools: [forecast] });
  for (const layer of layers) agent.use(layer);
  // JSON text is parsed once per check against the bounds: counting those parses counts the checks.
  const parse = vi.spyOn(JSON, 'parse');
  const result = await agent.run('Weather?');
  const boundsChecks = parse.mock.calls.filter(([text]) => text === RAW).length;
  parse.mockRestore();
  return { result, parses, boundsChecks, message: toolMessages(result.messages)[0] };
}

afterEach(() => vi.restoreAllMocks());

describe('checking a call\'s arguments', () => {
  it('checks them twice at most: against the bounds as the reply is kept, against the schema once, with layers that leave the call alone', async () => {
    const passThrough: Middleware = { name: 'pass-through', tool: (_ctx, next) => next() };
    const watching: Middleware = { name: 'watching', tool: async (ctx, next) => { const out = await next(); void ctx.toolName; return out; } };
    const { boundsChecks, parses, message } = await runWith(passThrough, watching);
    expect(message.content).toBe('Paris: 2 days of sun');
    expect({ boundsChecks, parses }).toEqual({ boundsChecks: 1, parses: 1 });
  });

  it('checks them against the schema again after a layer set them, the tool getting what it set', async () => {
    const longer: Middleware = { name: 'longer', tool: (ctx, next) => { ctx.call.setArgs({ ...ctx.call.args, days: 5 }); return next(); } };
    const { parses, message } = await runWith(longer);
    expect(parses).toBe(2);
    expect(message.content).toBe('Paris: 5 days of sun');
  });

  it('counts a layer handed the arguments as one that may have edited them in place: they are checked again', async () => {
    const inPlace: Middleware = { name: 'in-place', tool: (ctx, next) => { ctx.args.days = 3; return next(); } };
    const { parses, message } = await runWith(inPlace);
    expect(parses).toBe(2);
    expect(message.content).toBe('Paris: 3 days of sun');
  });
});

describe('the record a layer sees as ctx.call', () => {
  it('keeps what the model wrote apart from the arguments the layers change', async () => {
    let seen: { written: unknown; args: unknown; changedBefore: boolean; changedAfter: boolean } | undefined;
    const editor: Middleware = {
      name: 'editor',
      tool(ctx: ToolContext, next) {
        const changedBefore = ctx.call.changed;
        ctx.call.setArgs({ city: 'Oslo', days: 1 });
        seen = { written: ctx.call.written.args, args: { ...ctx.call.args }, changedBefore, changedAfter: ctx.call.changed };
        return next();
      },
    };
    const { result, message } = await runWith(editor);
    expect(seen).toEqual({ written: RAW, args: { city: 'Oslo', days: 1 }, changedBefore: false, changedAfter: true });
    expect(message.content).toBe('Oslo: 1 days of sun');
    // The transcript keeps the call as the model wrote it.
    const call = result.messages.find((m) => m.role === 'assistant' && m.toolCalls !== undefined);
    expect(call?.role === 'assistant' && call.toolCalls?.[0].args).toBe(RAW);
  });

  it('renames the call through rename(), which validation judges as a call of the other tool', async () => {
    const renamer: Middleware = { name: 'renamer', tool: (ctx, next) => { ctx.call.rename('nowcast'); return next(); } };
    const { message } = await runWith(renamer);
    expect(message.content).toBe('Error (not_found): There is no tool named "nowcast" (a layer renamed the call). Available tools: forecast.');
  });

  it('refuses arguments that are not an object, and a name that is not one, naming the method', async () => {
    const errors: string[] = [];
    const misuse: Middleware = {
      name: 'misuse',
      tool(ctx, next) {
        for (const attempt of [() => ctx.call.setArgs([1] as unknown as Record<string, unknown>), () => ctx.call.rename('')]) {
          try {
            attempt();
          } catch (error) {
            errors.push((error as Error).message);
          }
        }
        return next();
      },
    };
    await runWith(misuse);
    expect(errors).toEqual([
      'ctx.call.setArgs(args): the arguments of forecast must be an object, got an array',
      'ctx.call.rename(name): name must be a tool\'s name (a non-empty string), got ""',
    ]);
  });

  it('records a permission decision through decide(), told to the listeners and kept as its policy', async () => {
    const records: unknown[] = [];
    let policy: unknown;
    const audit: Middleware = { name: 'audit', tool: (ctx, next) => { ctx.call.decide({ decision: 'allow', source: 'hook', hook: 'audit' }); policy = ctx.call.policy; return next(); } };
    const forecast = defineTool({ name: 'forecast', description: 'Forecast', input: z.object({ city: z.string() }), execute: ({ city }) => city });
    const model = provider((_req, n): GenerateResult => (n === 1 ? reply('', [{ id: 'c1', name: 'forecast', args: { city: 'Rome' } }]) : reply('Done.')));
    await createAgent({ model, tools: [forecast], onPermissionDecision: (r) => void (r.source === 'hook' && records.push(r)) }).use(audit).run('Go');
    expect(records).toEqual([{ toolName: 'forecast', toolCallId: 'c1', args: { city: 'Rome' }, decision: 'allow', source: 'hook', hook: 'audit' }]);
    expect(policy).toMatchObject({ decision: 'allow', source: 'hook', hook: 'audit' });
  });
});

// The bounds on a model's arguments for one call, in depth and size: the walk that checks them.
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('checking the bounds of arguments', () => {
  it('stops at the depth bound, however deep the arguments go', () => {
    expect(argsObject(nested(10_000), DEFAULT_ARGUMENT_BOUNDS)).toBe('the arguments are nested deeper than 64 levels');
  });

  it('walks arguments deeper than a call stack allows when the bound lets them be that deep', () => {
    const deep = nested(200_000);
    expect(argsObject(deep, { maxDepth: 300_000, maxBytes: 100_000_000 })).toBe(deep);
  });

  it('counts the bytes of JSON the arguments take, and refuses past maxBytes', () => {
    expect(argsObject({ text: 'x'.repeat(90) }, { maxDepth: 64, maxBytes: 100 })).toEqual({ text: 'x'.repeat(90) });
    expect(argsObject({ text: 'x'.repeat(100) }, { maxDepth: 64, maxBytes: 100 })).toBe('the arguments are larger than the 100 bytes of JSON allowed');
    expect(argsObject({ list: [1, 2, 3], deep: { k: 'v' } }, { maxDepth: 2, maxBytes: 1_000 })).toEqual({ list: [1, 2, 3], deep: { k: 'v' } });
    expect(argsObject({ list: [1, 2, 3], deep: { k: 'v' } }, { maxDepth: 1, maxBytes: 1_000 })).toBe('the arguments are nested deeper than 1 levels');
  });

  it('counts an array by its elements and an object by its own keys, as JSON does', () => {
    // "list" (4 + 4) and three numbers (8 + 1 each): 35 bytes.
    expect(argsObject({ list: [1, 2, 3] }, { maxDepth: 64, maxBytes: 35 })).toEqual({ list: [1, 2, 3] });
    expect(argsObject({ list: [1, 2, 3] }, { maxDepth: 64, maxBytes: 34 })).toBe('the arguments are larger than the 34 bytes of JSON allowed');
    // What an object inherits is no part of its JSON, however large.
    const inherited = Object.assign(Object.create({ big: 'x'.repeat(10_000) }) as Record<string, unknown>, { a: 1 });
    expect(argsObject(inherited, { maxDepth: 64, maxBytes: 100 })).toBe(inherited);
  });

  it('walks keys a model may write that shadow Object methods, and objects without a prototype', () => {
    const shadowing = JSON.parse('{"hasOwnProperty": 1, "constructor": "x"}') as Record<string, unknown>;
    expect(argsObject(shadowing, { maxDepth: 64, maxBytes: 100 })).toBe(shadowing);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 'x'.repeat(200) });
    expect(argsObject(bare, { maxDepth: 64, maxBytes: 100 })).toBe('the arguments are larger than the 100 bytes of JSON allowed');
    expect(argsObject(bare, { maxDepth: 2_000, maxBytes: 100 })).toBe('the arguments are larger than the 100 bytes of JSON allowed');
  });

  it('counts the same with a bound too deep for recursion, where it walks with a stack of its own', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 })),
    })).value;
    // The bytes a walk counts: the smallest maxBytes it accepts the arguments with.
    const counted = (args: Record<string, unknown>, maxDepth: number): number => {
      let low = 0;
      let high = 1_000_000;
      while (low < high) {
        const mid = Math.floor((low + high) / 2);
        if (typeof argsObject(args, { maxDepth, maxBytes: mid }) === 'string') low = mid + 1;
        else high = mid;
      }
      return low;
    };
    fc.assert(fc.property(fc.dictionary(fc.string({ maxLength: 6 }).filter((key) => key !== '__proto__'), json, { maxKeys: 5 }), (args) => {
      expect(counted(args, 5_000)).toBe(counted(args, 64));
    }), { numRuns: 200 });
  });

  it('refuses a "__proto__" key at any depth', () => {
    expect(argsObject(JSON.parse('{"a":{"b":{"__proto__":{"admin":true}}}}'))).toBe('the arguments contain a "__proto__" key, which is refused');
  });
});
