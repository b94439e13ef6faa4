// The order of AgentHooks: among themselves (registration order, before and after), within one
// tool call's pipeline (validation, hooks, permissions, guardrails, approval, execution), and
// as one layer of koagent's onion. Test names quote the seed (000_…txt) or DESIGN.md §3.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Middleware } from '../../../src/index.js';
import type { AgentHook } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { callTool, searchTool, toolResults } from './fixtures.js';

/** A hook that logs `<name>.pre` and `<name>.post`, and optionally returns something. */
function logging(name: string, log: string[], pre?: AgentHook['preToolCall'], post?: AgentHook['postToolCall']): AgentHook {
  return {
    name,
    preToolCall(ctx) { log.push(`${name}.pre`); return pre?.(ctx); },
    postToolCall(ctx, result) { log.push(`${name}.post`); return post?.(ctx, result); },
  };
}

const searchOnce = () => mockModel([callTool('search', { query: 'q' }), 'ok']);

describe('registration order', () => {
  it('"hooks run in registration order": pre-hooks and post-hooks both in the order of the hooks array (not an onion)', async () => {
    const log: string[] = [];
    await createAgent({ model: searchOnce(), tools: [searchTool().tool], hooks: [logging('a', log), logging('b', log), logging('c', log)] }).run('go');
    expect(log).toEqual(['a.pre', 'b.pre', 'c.pre', 'a.post', 'b.post', 'c.post']);
  });

  it('"the first deny or result of a pre-hook skips the pre-hooks after it"; "a pre-hook skipped by an earlier deny/result is skipped only on the way in" (DESIGN §3)', async () => {
    for (const outcome of [{ deny: 'no' }, { result: 'cached' }]) {
      const log: string[] = [];
      const search = searchTool();
      await createAgent({ model: searchOnce(), tools: [search.tool], hooks: [logging('a', log), logging('b', log, () => outcome), logging('c', log)] }).run('go');
      expect(search.calls).toEqual([]);
      expect(log).toEqual(['a.pre', 'b.pre', 'a.post', 'b.post', 'c.post']);
    }
  });

  it('"inputs chain (each hook sees the previous one\'s as ctx.args)"', async () => {
    const search = searchTool();
    const hooks: AgentHook[] = [
      { name: 'one', preToolCall: (ctx) => ({ input: { ...ctx.args, query: `${String(ctx.args.query)}+one` } }) },
      { name: 'two', preToolCall: (ctx) => ({ input: { ...ctx.args, query: `${String(ctx.args.query)}+two`, limit: 2 } }) },
    ];
    await createAgent({ model: searchOnce(), tools: [search.tool], hooks }).run('go');
    expect(search.calls).toEqual([{ query: 'q+one+two', limit: 2 }]);
  });

  it('"each post-hook sees the result an earlier one replaced"', async () => {
    const seen: unknown[] = [];
    const hooks: AgentHook[] = [
      { name: 'first', postToolCall: () => ({ result: 'replaced by first' }) },
      { name: 'second', postToolCall(_ctx, r) { seen.push(r.result); return { result: `${String(r.result)}, then second` }; } },
    ];
    const result = await createAgent({ model: searchOnce(), tools: [searchTool().tool], hooks }).run('go');
    expect(seen).toEqual(['replaced by first']);
    expect(toolResults(result.messages)[0].content).toBe('replaced by first, then second');
  });

  it('"several hooks run in the order of the hooks array, one at a time: each is awaited before the next, so a later hook sees what an earlier one changed"', async () => {
    let running = 0;
    let most = 0;
    const saw: string[] = [];
    const slow = (name: string): AgentHook => ({
      name,
      async preToolCall(ctx) {
        running++; most = Math.max(most, running);
        saw.push(`${name} sees [${Object.keys(ctx.metadata).join(',')}]`);
        await new Promise((resolve) => setImmediate(resolve));
        ctx.metadata[name] = true;
        running--;
      },
      async postToolCall() {
        running++; most = Math.max(most, running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
      },
    });
    await createAgent({ model: searchOnce(), tools: [searchTool().tool], hooks: [slow('a'), slow('b'), slow('c')] }).run('go');
    expect(most).toBe(1);
    expect(saw).toEqual(['a sees []', 'b sees [a]', 'c sees [a,b]']);
  });
});

describe('the order of one tool call', () => {
  it('"argument validation" comes first: a call whose raw arguments fail the schema never reaches a hook', async () => {
    const log: string[] = [];
    const result = await createAgent({ model: mockModel([callTool('search', { query: 42 }), 'ok']), tools: [searchTool().tool], hooks: [logging('a', log)] }).run('go');
    expect(log).toEqual([]);
    expect(toolResults(result.messages)[0].metadata?.error).toMatchObject({ kind: 'validation' });
  });

  it('"preToolCall hooks, permission rules (permissions)": a rule sees the input a hook produced, and a hook runs even for a call a rule denies', async () => {
    const ruleSaw: unknown[] = [];
    const log: string[] = [];
    const hook = logging('limit', log, (ctx) => ({ input: { ...ctx.args, limit: 5 } }));
    const result = await createAgent({
      model: searchOnce(), tools: [searchTool().tool], hooks: [hook],
      permissions: [{ name: 'watch', when: (_name, args) => { ruleSaw.push({ ...args }); return true; }, decision: 'deny', reason: 'not today' }],
    }).run('go');
    expect(ruleSaw).toEqual([{ query: 'q', limit: 5 }]);
    expect(log).toEqual(['limit.pre', 'limit.post']);
    expect(toolResults(result.messages)[0].metadata?.error).toMatchObject({ kind: 'denied', message: 'not today' });
  });

  it('"tool guardrails" come after the hooks: a guardrail checks the input a hook produced', async () => {
    const guarded: unknown[] = [];
    const tool = defineTool({
      name: 'fetch', description: 'Fetch a page', input: z.object({ url: z.string() }),
      guardrails: { input: [(args) => { guarded.push(args); return args.url.startsWith('https:') ? undefined : { block: 'only https' }; }] },
      execute: ({ url }) => `page at ${url}`,
    });
    const secure: AgentHook = { name: 'secure', preToolCall: (ctx) => ({ input: { url: String(ctx.args.url).replace('http:', 'https:') } }) };
    const result = await createAgent({ model: mockModel([callTool('fetch', { url: 'http://x' }), 'ok']), tools: [tool], hooks: [secure] }).run('go');
    expect(guarded).toEqual([{ url: 'https://x' }]);
    expect(toolResults(result.messages)[0].content).toBe('page at https://x');
  });

  it('"the tool\'s needsApproval, the approval pause": both see the hook\'s input — "the pending approval\'s args show it"', async () => {
    const asked: unknown[] = [];
    const tool = defineTool({
      name: 'pay', description: 'Pay', input: z.object({ amount: z.number(), currency: z.string().optional() }),
      needsApproval: (args) => { asked.push(args); return args.currency === 'EUR'; },
      execute: ({ amount }) => `paid ${amount}`,
    });
    const euros: AgentHook = { name: 'euros', preToolCall: (ctx) => ({ input: { ...ctx.args, currency: 'EUR' } }) };
    const result = await createAgent({ model: mockModel([callTool('pay', { amount: 3 }, 'p1')]), tools: [tool], hooks: [euros] }).run('go');
    expect(asked).toEqual([{ amount: 3, currency: 'EUR' }]);
    expect(result.status).toBe('suspended');
    expect(result.pendingApprovals).toEqual([{ toolCallId: 'p1', toolName: 'pay', args: { amount: 3, currency: 'EUR' } }]);
  });

  it('"execution, postToolCall hooks": post-hooks run after the tool', async () => {
    const log: string[] = [];
    const tool = defineTool({ name: 'step', description: 'A step', input: z.object({}), execute: () => { log.push('execute'); return 'done'; } });
    await createAgent({ model: mockModel([callTool('step'), 'ok']), tools: [tool], hooks: [logging('h', log)] }).run('go');
    expect(log).toEqual(['h.pre', 'execute', 'h.post']);
  });
});

describe('all AgentHooks together are one layer (DESIGN §3)', () => {
  it('hooks given to createAgent and to agent.use() form one layer where the first was added: a middleware added between them runs inside all of them', async () => {
    const log: string[] = [];
    const middleware: Middleware = {
      name: 'inner',
      async tool(ctx, next) { log.push(`inner sees ${JSON.stringify(ctx.args)}`); const out = await next(); log.push('inner after'); return out; },
    };
    const agent = createAgent({ model: searchOnce(), tools: [searchTool().tool], hooks: [logging('a', log)] })
      .use(middleware)
      .use(logging('b', log, (ctx) => ({ input: { ...ctx.args, limit: 1 } })));
    await agent.run('go');
    expect(log).toEqual(['a.pre', 'b.pre', 'inner sees {"query":"q","limit":1}', 'inner after', 'a.post', 'b.post']);
  });

  it('a middleware added before the first AgentHook wraps the whole group, and on the model stack too', async () => {
    const log: string[] = [];
    const outer: Middleware = {
      name: 'outer',
      async model(_ctx, next) { log.push('outer before'); const out = await next(); log.push('outer after'); return out; },
    };
    const hooks: AgentHook[] = [
      { name: 'a', preGenerate() { log.push('a.preGenerate'); }, postGenerate() { log.push('a.postGenerate'); } },
      { name: 'b', preGenerate() { log.push('b.preGenerate'); }, postGenerate() { log.push('b.postGenerate'); } },
    ];
    await createAgent({ model: mockModel(['hi']), middleware: [outer], hooks }).run('go');
    expect(log).toEqual(['outer before', 'a.preGenerate', 'b.preGenerate', 'a.postGenerate', 'b.postGenerate', 'outer after']);
  });
});
