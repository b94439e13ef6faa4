import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentOptions, type Tool, type ToolContext, type ToolOutcome } from '../../src/index.js';
import type { PermissionRecord } from '../../src/types.js';
import { mockModel, type MockToolCall } from '../../src/testing/index.js';
import { answerTo, countingTool, eventLog, toolMessages } from '../fixtures/counting-tools.js';
import { nextTurn } from '../support/waits.js';

function agentWith(tools: Tool<any, any>[], calls: MockToolCall[], extra: Partial<AgentOptions> = {}) {
  const log = eventLog();
  const model = mockModel([{ toolCalls: calls }, 'All done.']);
  const agent = createAgent({ model, tools, onEvent: log.listener, ...extra });
  return { agent, model, log };
}

describe('needsApproval', () => {
  it('true pauses every call of the tool; false runs it', async () => {
    const pay = countingTool('pay', { needsApproval: true });
    const read = countingTool('read', { needsApproval: false });
    const { agent } = agentWith([pay.tool, read.tool], [{ id: 'p', name: 'pay', args: { amount: 1 } }, { id: 'r', name: 'read', args: {} }]);
    const result = await agent.run('go');
    expect(result.pendingApprovals.map((p) => p.toolCallId)).toEqual(['p']);
    expect(pay.runs).toHaveLength(0);
    expect(read.runs).toHaveLength(1);
  });

  it('a function decides per call from the parsed arguments and the context', async () => {
    const asked: unknown[] = [];
    const pay = countingTool('pay', { needsApproval: (args: { amount: number }, ctx: ToolContext) => (asked.push([args, ctx.toolCallId]), args.amount > 100) });
    const { agent } = agentWith([pay.tool], [{ id: 'small', name: 'pay', args: { amount: 5 } }, { id: 'big', name: 'pay', args: { amount: 500 } }]);
    const result = await agent.run('go');
    expect(asked).toEqual([[{ amount: 5 }, 'small'], [{ amount: 500 }, 'big']]);
    expect(result.pendingApprovals.map((p) => p.toolCallId)).toEqual(['big']);
    expect(pay.runs).toEqual([{ amount: 5 }]);
  });

  it('an async function is awaited', async () => {
    const pay = countingTool('pay', { needsApproval: async (args: { amount: number }) => { await nextTurn(); return args.amount > 100; } });
    const { agent } = agentWith([pay.tool], [{ id: 'big', name: 'pay', args: { amount: 500 } }]);
    const result = await agent.run('go');
    expect(result.status).toBe('suspended');
    expect(pay.runs).toHaveLength(0);
  });

  it('a function that throws asks a human (fail closed), saying why', async () => {
    const pay = countingTool('pay', { needsApproval: () => { throw new Error('risk service down'); } });
    const { agent } = agentWith([pay.tool], [{ id: 'p', name: 'pay', args: { amount: 5 } }]);
    const result = await agent.run('go');
    expect(result.pendingApprovals).toEqual([{ toolCallId: 'p', toolName: 'pay', args: { amount: 5 }, reason: 'needsApproval threw: risk service down' }]);
    expect(pay.runs).toHaveLength(0);
  });

  it('defineTool rejects a needsApproval that is neither a boolean nor a function', () => {
    expect(() => defineTool({ name: 't', description: 'd', execute: () => 1, needsApproval: 'yes' as never })).toThrow('defineTool("t"): needsApproval must be a boolean or a function (args, ctx) => boolean');
  });
});

describe('the suspended result', () => {
  it('ends the segment suspended, with the pending calls, a state, and no run of the tool', async () => {
    const pay = countingTool('pay', { needsApproval: true });
    const { agent, log, model } = agentWith([pay.tool], [{ id: 'p', name: 'pay', args: { amount: 80, note: 'rent' } }]);
    const result = await agent.run('go');
    expect(result).toMatchObject({ status: 'suspended', stopReason: 'approval', pendingApprovals: [{ toolCallId: 'p', toolName: 'pay', args: { amount: 80, note: 'rent' } }] });
    expect(result.state).toMatchObject({ status: 'suspended', stopReason: 'approval', pendingApprovals: result.pendingApprovals, ledger: [{ id: 'p', entry: 'pending' }] });
    expect(pay.runs).toHaveLength(0);
    expect(model.calls).toHaveLength(1);
    expect(log.of('approval.requested')).toEqual([expect.objectContaining({ toolCallId: 'p', toolName: 'pay', args: { amount: 80, note: 'rent' } })]);
    expect(log.events.at(-1)).toMatchObject({ type: 'run.end', status: 'suspended', stopReason: 'approval' });
    // No tool message yet: the transcript ends with the model's call.
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'p' }] });
  });

  it('outer layers see the requiresApproval outcome on the way out', async () => {
    const seen: ToolOutcome[] = [];
    const pay = countingTool('pay', { needsApproval: true });
    const { agent } = agentWith([pay.tool], [{ id: 'p', name: 'pay', args: { amount: 1 } }], { middleware: [{ name: 'watch', tool: async (_ctx, next) => { const o = await next(); seen.push(o); return o; } }] });
    await agent.run('go');
    expect(seen).toEqual([{ result: undefined, requiresApproval: true, approval: { toolName: 'pay', args: { amount: 1 } } }]);
  });

  it('the rule and the pending approval see the arguments a layer rewrote, which run before permissions', async () => {
    const order: string[] = [];
    const records: PermissionRecord[] = [];
    const pay = countingTool('pay');
    // The layer fills in a default amount the model left out.
    const { agent } = agentWith([pay.tool], [{ id: 'p', name: 'pay', args: { note: 'rent' } }], {
      middleware: [{ name: 'defaults', tool: (ctx, next) => { order.push('layer'); ctx.args = { amount: 100, ...ctx.args }; return next(); } }],
      permissions: [{ name: 'big-payments', when: (_n, args) => (order.push(`rule saw ${args.amount}`), Number(args.amount) > 60), decision: 'ask' }],
      onPermissionDecision: (r) => records.push(r),
    });
    const paused = await agent.run('go');
    expect(order).toEqual(['layer', 'rule saw 100']);
    expect(paused.pendingApprovals).toEqual([{ toolCallId: 'p', toolName: 'pay', args: { amount: 100, note: 'rent' } }]);
    expect(records[0]).toMatchObject({ decision: 'ask', source: 'rule', rule: 'big-payments', args: { amount: 100, note: 'rent' } });
    // The transcript keeps what the model wrote.
    expect(paused.messages.at(-1)).toMatchObject({ toolCalls: [{ args: { note: 'rent' } }] });
    await agent.resume(paused.state, { p: true });
    expect(pay.runs).toEqual([{ amount: 100, note: 'rent' }]);
  });
});

describe('other calls of the suspended turn', () => {
  it('complete before the segment ends, and are not run again on resume', async () => {
    const pay = countingTool('pay', { needsApproval: true });
    const read = countingTool('read');
    const calls = [{ id: 'r1', name: 'read', args: { path: 'a' } }, { id: 'p', name: 'pay', args: { amount: 9 } }, { id: 'r2', name: 'read', args: { path: 'b' } }];
    const { agent, log, model } = agentWith([pay.tool, read.tool], calls);
    const paused = await agent.run('go');
    expect(read.runs).toEqual([{ path: 'a' }, { path: 'b' }]);
    expect(paused.state.settled.map((m) => m.toolCallId).sort()).toEqual(['r1', 'r2']);
    expect(paused.state.ledger).toEqual([{ id: 'r1', entry: 'done' }, { id: 'p', entry: 'pending' }, { id: 'r2', entry: 'done' }]);
    log.events.length = 0;
    const done = await agent.resume(paused.state, { p: true });
    expect(read.runs).toHaveLength(2);
    expect(pay.runs).toEqual([{ amount: 9 }]);
    expect(log.of('tool.start').map((e) => e.toolCallId)).toEqual(['p']);
    // The results enter the transcript in the order the model made the calls.
    expect(toolMessages(done.messages).map((m) => m.toolCallId)).toEqual(['r1', 'p', 'r2']);
    expect(model.calls[1].messages.slice(-3).map((m) => m.role)).toEqual(['tool', 'tool', 'tool']);
    expect(done.state.settled).toEqual([]);
  });
});

describe('resume decisions', () => {
  function paused(extra: Partial<AgentOptions> = {}) {
    const pay = countingTool('pay', { needsApproval: true });
    const setup = agentWith([pay.tool], [{ id: 'p', name: 'pay', args: { amount: 80 } }], extra);
    return { ...setup, pay };
  }

  it('true runs the call, then the loop goes on to a final answer', async () => {
    const { agent, pay, model } = paused();
    const done = await agent.resume((await agent.run('go')).state, { p: true });
    expect(pay.runs).toEqual([{ amount: 80 }]);
    expect(answerTo(done.messages, 'p').content).toBe('{"ran":"pay","amount":80}');
    expect(done).toMatchObject({ status: 'completed', stopReason: 'final', text: 'All done.', pendingApprovals: [] });
    expect(model.calls).toHaveLength(2);
  });

  it('{ approved: true, reason } runs the call too', async () => {
    const { agent, pay } = paused();
    await agent.resume((await agent.run('go')).state, { p: { approved: true, reason: 'checked the invoice' } });
    expect(pay.runs).toHaveLength(1);
  });

  it('false settles the call as denied, and the model sees it', async () => {
    const { agent, pay, model, log } = paused();
    const done = await agent.resume((await agent.run('go')).state, { p: false });
    expect(pay.runs).toHaveLength(0);
    const answer = answerTo(done.messages, 'p');
    expect(answer.content).toBe('Error (denied): A human denied this call');
    expect(answer.metadata?.error).toEqual({ kind: 'denied', message: 'A human denied this call', by: 'approval' });
    expect(model.calls[1].messages.at(-1)).toEqual(answer);
    expect(log.of('tool.error')).toEqual([expect.objectContaining({ toolCallId: 'p', error: expect.objectContaining({ kind: 'denied', by: 'approval' }) })]);
    expect(done.text).toBe('All done.');
  });

  it("{ approved: false, reason } gives the model the human's reason", async () => {
    const { agent, model } = paused();
    await agent.resume((await agent.run('go')).state, { p: { approved: false, reason: 'Not this month' } });
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'p', content: 'Error (denied): Not this month' });
  });

  it('a denied call does not go through the layers again', async () => {
    const entered: string[] = [];
    const { agent } = paused({ middleware: [{ name: 'spy', tool: (ctx, next) => (entered.push(ctx.toolCallId), next()) }] });
    const state = (await agent.run('go')).state;
    await agent.resume(state, { p: false });
    expect(entered).toEqual(['p']);
  });

  it('an approved call runs through the layers again, with resumedAfterApproval true (false the first time)', async () => {
    const passes: boolean[] = [];
    const { agent, pay } = paused({ middleware: [{ name: 'spy', tool: (ctx, next) => (passes.push(ctx.resumedAfterApproval), next()) }] });
    await agent.resume((await agent.run('go')).state, { p: true });
    expect(passes).toEqual([false, true]);
    expect(pay.runs).toHaveLength(1);
  });

  it('an approved call a layer changes on the second pass is denied, not run, and recorded', async () => {
    let pass = 0;
    const records: PermissionRecord[] = [];
    const { agent, pay } = paused({
      middleware: [{ name: 'bump', tool: (ctx, next) => { ctx.args = { amount: 80 + 10 * pass++ }; return next(); } }],
      onPermissionDecision: (r) => records.push(r),
    });
    const done = await agent.resume((await agent.run('go')).state, { p: true });
    expect(pay.runs).toHaveLength(0);
    expect(answerTo(done.messages, 'p').content).toBe('Error (denied): The call changed after a human approved it (approved pay with {"amount":80}, now pay with {"amount":90}); it was not run');
    expect(records.slice(-2).map((r) => [r.decision, r.source])).toEqual([['allow', 'approval'], ['deny', 'approval']]);
  });

  it('on the second pass the layers start from the approved arguments, so a layer that skips its work keeps its change', async () => {
    const seen: unknown[] = [];
    const { agent, pay } = paused({
      middleware: [{ name: 'once', tool: (ctx, next) => {
        seen.push(ctx.args);
        if (!ctx.resumedAfterApproval) ctx.args = { ...ctx.args, note: 'added once' };
        return next();
      } }],
    });
    const state = (await agent.run('go')).state;
    expect(state.pendingApprovals[0].args).toEqual({ amount: 80, note: 'added once' });
    await agent.resume(state, { p: true });
    expect(seen).toEqual([{ amount: 80 }, { amount: 80, note: 'added once' }]);
    expect(pay.runs).toEqual([{ amount: 80, note: 'added once' }]);
  });

  it('an approved call whose layers produce the same arguments again runs', async () => {
    const { agent, pay } = paused({ middleware: [{ name: 'same', tool: (ctx, next) => { ctx.args = { amount: 80 }; return next(); } }] });
    await agent.resume((await agent.run('go')).state, { p: true });
    expect(pay.runs).toEqual([{ amount: 80 }]);
  });

  it('several pending calls of one turn each get their own decision', async () => {
    const pay = countingTool('pay', { needsApproval: true });
    const { agent } = agentWith([pay.tool], [{ id: 'a', name: 'pay', args: { amount: 1 } }, { id: 'b', name: 'pay', args: { amount: 2 } }, { id: 'c', name: 'pay', args: { amount: 3 } }]);
    const first = await agent.run('go');
    expect(first.pendingApprovals.map((p) => p.toolCallId)).toEqual(['a', 'b', 'c']);
    const done = await agent.resume(first.state, { a: true, b: { approved: false, reason: 'dup' }, c: true });
    expect(pay.runs).toEqual([{ amount: 1 }, { amount: 3 }]);
    expect(toolMessages(done.messages).map((m) => m.content)).toEqual(['{"ran":"pay","amount":1}', 'Error (denied): dup', '{"ran":"pay","amount":3}']);
  });

  it('a later turn can suspend again, and that state resumes too', async () => {
    const pay = countingTool('pay', { needsApproval: true });
    const model = mockModel([{ toolCalls: [{ id: 'one', name: 'pay', args: { amount: 1 } }] }, { toolCalls: [{ id: 'two', name: 'pay', args: { amount: 2 } }] }, 'Both paid.']);
    const agent = createAgent({ model, tools: [pay.tool] });
    const first = await agent.run('go');
    const second = await agent.resume(first.state, { one: true });
    expect(second).toMatchObject({ status: 'suspended', pendingApprovals: [{ toolCallId: 'two' }] });
    const done = await agent.resume(second.state, { two: true });
    expect(done.text).toBe('Both paid.');
    expect(pay.runs).toEqual([{ amount: 1 }, { amount: 2 }]);
    expect(done.state.segment).toBe(3);
  });

  it('a tool with a real schema gets the parsed arguments after approval', async () => {
    const received: unknown[] = [];
    const tool = defineTool({ name: 'ship', description: 'Ship', input: z.object({ qty: z.coerce.number() }), needsApproval: true, execute: (args) => (received.push(args), 'shipped') });
    const { agent } = agentWith([tool], [{ id: 's', name: 'ship', args: { qty: '3' } }]);
    const state = (await agent.run('go')).state;
    await agent.resume(JSON.parse(JSON.stringify(state)), { s: true });
    expect(received).toEqual([{ qty: 3 }]);
  });
});
