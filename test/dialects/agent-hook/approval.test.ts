// AgentHooks and the approval pause: what the hooks see before the pause, and what they may do
// when an approved call is resumed. Test names quote the seed (000_…txt) or DESIGN.md §3.
import { describe, expect, it } from 'vitest';
import { createAgent, type Middleware } from '../../../src/index.js';
import type { AgentHook, ToolCallHookResult } from '../../../src/hooks.js';
import type { PermissionRecord } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';
import { callTool, searchTool, toolResults } from './fixtures.js';

/** An agent whose only tool needs approval; the model calls it once (id `s1`), then answers. */
function gatedAgent(hooks: AgentHook[], extra: { onPermissionDecision?: (r: PermissionRecord) => void; middleware?: Middleware[] } = {}) {
  const search = searchTool({ needsApproval: true });
  const model = mockModel([callTool('search', { query: 'q' }, 's1'), 'answered']);
  return { agent: createAgent({ model, tools: [search.tool], hooks, ...extra }), search, model };
}

describe('before the pause', () => {
  it('"Hooks run before every approval decision, so rules, needsApproval and the human all see (and approve) the input a hook produced; the pending approval\'s args show it"', async () => {
    const { agent, search } = gatedAgent([{ name: 'limit', preToolCall: (ctx) => ({ input: { ...ctx.args, limit: 5 } }) }]);
    const paused = await agent.run('go');
    expect(paused.status).toBe('suspended');
    expect(paused.pendingApprovals).toEqual([{ toolCallId: 's1', toolName: 'search', args: { query: 'q', limit: 5 } }]);
    expect(search.calls).toEqual([]);
  });

  it('"postToolCall … approval required": post-hooks see { result: undefined, requiresApproval: true } for the paused call', async () => {
    const seen: ToolCallHookResult[] = [];
    const { agent } = gatedAgent([{ name: 'watch', postToolCall(_ctx, r) { seen.push(r); } }]);
    await agent.run('go');
    expect(seen).toEqual([{ result: undefined, requiresApproval: true }]);
  });

  it('a post-hook that returns { result } for a call waiting for approval fails the run, saying there is no result to replace yet', async () => {
    const { agent } = gatedAgent([{ name: 'eager', postToolCall: () => ({ result: 'too soon' }) }]);
    const error = await agent.run('go').catch((e) => e);
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'eager' });
    expect(error.message).toMatch(/eager" returned \{ result \} from postToolCall for a call waiting for approval.*return nothing then/);
  });
});

describe('resume after approval', () => {
  it('"When an approved call is resumed, the pre-hooks run again" "with resumedAfterApproval: true" (DESIGN §3), and the post-hooks see its result', async () => {
    const log: string[] = [];
    const hook: AgentHook = {
      name: 'audit',
      preToolCall(ctx) { log.push(`pre resumed=${ctx.resumedAfterApproval}`); },
      postToolCall(ctx, r) { log.push(`post resumed=${ctx.resumedAfterApproval} ${r.requiresApproval ? 'waiting' : String(r.result)}`); },
    };
    const { agent, search } = gatedAgent([hook]);
    const paused = await agent.run('go');
    const done = await agent.resume(paused.state, { s1: true });
    expect(done.text).toBe('answered');
    expect(search.calls).toEqual([{ query: 'q' }]);
    expect(log).toEqual(['pre resumed=false', 'post resumed=false waiting', 'pre resumed=true', 'post resumed=true found q (limit none)']);
  });

  it('"they may still deny it": a { deny } on resume settles the approved call as denied, and the tool does not run', async () => {
    const hook: AgentHook = { name: 'curfew', preToolCall: (ctx) => (ctx.resumedAfterApproval ? { deny: 'Too late now' } : undefined) };
    const { agent, search } = gatedAgent([hook]);
    const done = await agent.resume((await agent.run('go')).state, { s1: true });
    expect(search.calls).toEqual([]);
    expect(toolResults(done.messages)[0].metadata?.error).toEqual({ kind: 'denied', message: 'Too late now', by: 'curfew' });
  });

  it('"or supply its result": a { result } on resume is the approved call\'s result, and the tool does not run', async () => {
    const hook: AgentHook = { name: 'memo', preToolCall: (ctx) => (ctx.resumedAfterApproval ? { result: 'remembered' } : undefined) };
    const { agent, search } = gatedAgent([hook]);
    const done = await agent.resume((await agent.run('go')).state, { s1: true });
    expect(search.calls).toEqual([]);
    expect(toolResults(done.messages)[0]).toMatchObject({ content: 'remembered', metadata: { replacedByHook: 'memo' } });
  });

  it('an { input } equal to the approved input is fine: the approved call runs', async () => {
    const { agent, search } = gatedAgent([{ name: 'limit', preToolCall: (ctx) => ({ input: { ...ctx.args, limit: 5 } }) }]);
    await agent.resume((await agent.run('go')).state, { s1: true });
    expect(search.calls).toEqual([{ query: 'q', limit: 5 }]);
  });

  it('"an { input } that differs from the approved input is refused with a tool error instead of running": a denied error that names the hook and says what changed', async () => {
    let limit = 5;
    const { agent, search } = gatedAgent([{ name: 'creep', preToolCall: (ctx) => ({ input: { ...ctx.args, limit: limit++ } }) }]);
    const paused = await agent.run('go');
    const done = await agent.resume(paused.state, { s1: true });
    expect(search.calls).toEqual([]);
    const error = toolResults(done.messages)[0].metadata?.error as { kind: string; message: string; by: string };
    expect(error).toMatchObject({ kind: 'denied', by: 'creep' });
    expect(error.message).toBe('Hook creep changed the input of a call a human had approved (approved {"query":"q","limit":5}, the hook gave {"query":"q","limit":6}); the call was not run');
  });

  it('changing the approved args in place on resume is refused too (by the approval step), saying what was approved and what it became', async () => {
    const hook: AgentHook = { name: 'sneak', preToolCall(ctx) { if (ctx.resumedAfterApproval) ctx.args.query = 'other'; } };
    const { agent, search } = gatedAgent([hook]);
    const done = await agent.resume((await agent.run('go')).state, { s1: true });
    expect(search.calls).toEqual([]);
    expect(toolResults(done.messages)[0].metadata?.error).toMatchObject({
      kind: 'denied',
      message: 'The call changed after a human approved it (approved search with {"query":"q"}, now search with {"query":"other"}); it was not run',
    });
  });

  it('"a stateful hook can skip the re-fire with if (ctx.resumedAfterApproval) return;": the call still runs with the input the human approved', async () => {
    // The hook changed the input before the pause and does nothing on resume: the approved
    // input (with its change) is what runs, not the model's original arguments.
    const hook: AgentHook = {
      name: 'once',
      preToolCall(ctx) {
        if (ctx.resumedAfterApproval) return;
        return { input: { ...ctx.args, limit: 5 } };
      },
    };
    const { agent, search } = gatedAgent([hook]);
    const paused = await agent.run('go');
    expect(paused.pendingApprovals[0].args).toEqual({ query: 'q', limit: 5 });
    const done = await agent.resume(paused.state, { s1: true });
    expect(toolResults(done.messages)[0].metadata).toBeUndefined();
    expect(search.calls).toEqual([{ query: 'q', limit: 5 }]);
  });

  it('on resume, the hooks see the approved arguments as ctx.args', async () => {
    const seen: unknown[] = [];
    const hook: AgentHook = { name: 'look', preToolCall(ctx) { seen.push({ ...ctx.args }); return ctx.resumedAfterApproval ? undefined : { input: { ...ctx.args, limit: 9 } }; } };
    const { agent } = gatedAgent([hook]);
    await agent.resume((await agent.run('go')).state, { s1: true });
    expect(seen).toEqual([{ query: 'q' }, { query: 'q', limit: 9 }]);
  });

  it('a call a human denied never reaches the hooks again: it settles as denied without entering the tool stack', async () => {
    const log: string[] = [];
    const hook: AgentHook = { name: 'audit', preToolCall() { log.push('pre'); }, postToolCall(_ctx, r) { log.push(`post ${r.requiresApproval ? 'waiting' : r.error?.kind ?? 'ok'}`); } };
    const { agent, search } = gatedAgent([hook]);
    const done = await agent.resume((await agent.run('go')).state, { s1: { approved: false, reason: 'No thanks' } });
    expect(log).toEqual(['pre', 'post waiting']); // both from before the pause, none after
    expect(search.calls).toEqual([]);
    expect(toolResults(done.messages)[0].metadata?.error).toMatchObject({ kind: 'denied', message: 'No thanks' });
  });
});
