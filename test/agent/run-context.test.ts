// The run context: a caller's object handed to every tool and layer as ctx.context, checked by
// the agent's contextSchema, never written into the run state, given again on resume, and
// passed on to sub-agents.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type Middleware, type ModelProvider, type ToolContext } from '../../src/index.js';
import type { AssistantMessage } from '../../src/types.js';
import { mockModel } from '../../src/testing/index.js';
import { nextTurn } from '../support/waits.js';

interface App {
  userId: string;
  db: { find(id: string): string };
}

const db = (prefix: string) => ({ find: (id: string) => `${prefix}:${id}` });
const find = defineTool({
  name: 'find',
  description: 'Finds a record',
  input: z.object({ id: z.string() }),
  execute: ({ id }, ctx: ToolContext<App>) => `${ctx.context.userId} sees ${ctx.context.db.find(id)}`,
});
const findTwice = (id = 'r1') => mockModel([{ toolCalls: [{ name: 'find', args: { id } }] }, 'Done.']);

describe('ctx.context at every hook point', () => {
  it('reaches the tool, and run, model and tool layers, as the object the caller gave', async () => {
    const seen: unknown[] = [];
    const watch: Middleware<App> = {
      name: 'watch',
      run: (ctx, next) => { seen.push(['run', ctx.context.userId]); return next(); },
      model: (ctx, next) => { seen.push(['model', ctx.context.userId]); return next(); },
      tool: (ctx, next) => { seen.push(['tool', ctx.context.userId]); return next(); },
    };
    const context: App = { userId: 'alice', db: db('main') };
    const result = await createAgent({ model: findTwice(), tools: [find], middleware: [watch] }).run('Find r1', { context });
    expect(result.messages.find((m) => m.role === 'tool')?.content).toBe('alice sees main:r1');
    expect(seen).toEqual([['run', 'alice'], ['model', 'alice'], ['tool', 'alice'], ['model', 'alice']]);
  });

  it('is each run\'s own: concurrent runs see their own contexts', async () => {
    // Asks for the tool on a user message, answers after a tool result: the same for every run, whatever the interleaving
    // (each answer a turn of the event loop later, so the runs interleave).
    const model: ModelProvider = {
      name: 'by-turn',
      async generate({ messages }) {
        await nextTurn();
        const last = messages.at(-1)!;
        const message: AssistantMessage = last.role === 'user' ? { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'find', args: { id: 'x' } }] } : { role: 'assistant', content: 'ok' };
        return { message, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
      },
    };
    const agent = createAgent({ model, tools: [find] });
    const users = ['ann', 'bob', 'cy', 'di'];
    const results = await Promise.all(users.map((userId) => agent.run('Find x', { context: { userId, db: db(userId) } })));
    results.forEach((result, i) => expect(result.messages.find((m) => m.role === 'tool')?.content).toBe(`${users[i]} sees ${users[i]}:x`));
  });
});

describe('the run context is never stored', () => {
  it('may hold functions and cycles, and leaves no trace in the state', async () => {
    const cyclic: Record<string, unknown> = { userId: 'alice', db: db('main'), apiKey: 'sk-never-stored' };
    cyclic.self = cyclic;
    const result = await createAgent({ model: findTwice(), tools: [find] }).run('Find r1', { context: cyclic as unknown as App });
    const json = JSON.stringify(result.state);
    expect(json).toContain('alice sees main:r1');
    expect(json).not.toContain('sk-never-stored');
    expect(JSON.parse(json)).not.toHaveProperty('context');
  });

  it('is given again to resume, which may give another', async () => {
    const rm = defineTool({ name: 'rm', description: 'Removes', input: z.object({ path: z.string() }), needsApproval: true, execute: ({ path }, ctx: ToolContext<App>) => `${ctx.context.userId} removed ${path}` });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'rm', args: { path: '/tmp/a' } }] }, 'Done.']), tools: [rm] });
    const suspended = await agent.run('Clean', { context: { userId: 'alice', db: db('a') } });
    const state = JSON.parse(JSON.stringify(suspended.state));
    const resumed = await agent.resume(state, { [suspended.pendingApprovals[0].toolCallId]: true }, { context: { userId: 'reviewer', db: db('b') } });
    expect(resumed.messages.find((m) => m.role === 'tool')?.content).toBe('reviewer removed /tmp/a');
  });
});

describe('contextSchema', () => {
  const AppSchema = z.object({ userId: z.string().min(1), db: z.custom<App['db']>((v) => typeof (v as App['db'] | null)?.find === 'function', { error: 'must have find(id)' }) });

  it('checks the context at the start of each run, naming what does not fit', async () => {
    const agent = createAgent({ model: findTwice(), tools: [find], contextSchema: AppSchema });
    await expect(agent.run('x', { context: { userId: '', db: {} } as never })).rejects.toThrow(/agent\.run\(input, options\): context does not fit the agent's contextSchema:\n✖ Too small.*\n  → at userId\n✖ must have find\(id\)\n  → at db/s);
    await expect(agent.run('x')).rejects.toThrow(TypeError);
    expect(() => agent.stream('x', { context: { userId: 5 } as never })).toThrow(/agent\.stream\(input, options\): context does not fit/);
  });

  it('hands on the schema\'s output, and types ctx.context from it', async () => {
    const Upper = z.object({ userId: z.string().transform((s) => s.toUpperCase()), db: z.custom<App['db']>() });
    const seen: string[] = [];
    const watch: Middleware<z.output<typeof Upper>> = { name: 'watch', model: (ctx, next) => { seen.push(ctx.context.userId); return next(); } };
    await createAgent({ model: mockModel(['ok']), contextSchema: Upper, middleware: [watch] }).run('x', { context: { userId: 'alice', db: db('a') } });
    expect(seen).toEqual(['ALICE']);
  });

  it('suggests it when a context is given to createAgent', () => {
    expect(() => createAgent({ model: mockModel([]), context: {} } as never)).toThrow(/context is not an option; did you mean `contextSchema`\?/);
  });
});

describe('sub-agents and the run context', () => {
  it('get the lead\'s context, or what asTool({ context }) makes of it', async () => {
    const researcher = createAgent({ name: 'researcher', model: mockModel([{ toolCalls: [{ name: 'find', args: { id: 'a' } }] }, 'found a', { toolCalls: [{ name: 'find', args: { id: 'b' } }] }, 'found b']), tools: [find] });
    const as = (name: string, context?: (lead: App) => App) => researcher.asTool({ name, description: 'Researches', ...(context ? { context } : {}) });
    const lead = createAgent({
      model: mockModel([{ toolCalls: [{ name: 'same', args: { task: 'a' } }] }, { toolCalls: [{ name: 'guest', args: { task: 'b' } }] }, 'Done.']),
      tools: [as('same'), as('guest', (leadContext) => ({ ...leadContext, userId: `guest-of-${leadContext.userId}` }))],
      toolConcurrency: 1,
    });
    const seen: string[] = [];
    await lead.run('Research', { context: { userId: 'alice', db: db('d') }, onEvent: (e) => { if (e.type === 'tool.done' && e.toolName === 'find') seen.push(String(e.result)); } });
    expect(seen).toEqual(['alice sees d:a', 'guest-of-alice sees d:b']);
  });

  it('checks a sub-agent\'s context against its own contextSchema', async () => {
    const strict = createAgent({ name: 'strict', model: mockModel(['never']), contextSchema: z.object({ tenant: z.string() }) });
    const lead = createAgent({ model: mockModel([{ toolCalls: [{ name: 'strict', args: { task: 't' } }] }, 'Done.']), tools: [strict.asTool({ description: 'Strict' })] });
    const result = await lead.run('Go', { context: { userId: 'alice' } });
    expect(result.messages.find((m) => m.role === 'tool')?.content).toMatch(/strict: the context it was given as a sub-agent does not fit its contextSchema/);
  });
});
