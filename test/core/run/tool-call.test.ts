// One tool call is one record, from the reply that asked for it to its result: what the model
// wrote, the arguments as checked, what was decided of it. Its arguments are checked against the
// bounds once, as the reply is kept, and against the tool's schema once more, by validation —
// again only after a layer changed the call, which the record knows without comparing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type Middleware, type ToolContext } from '../../../src/index.js';
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
