import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentOptions, type Tool, type ToolContext, type ToolOutcome } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { answerTo, countingTool, eventLog } from '../fixtures/counting-tools.js';
import { nextTurn } from '../support/waits.js';

function oneCall(tool: Tool<any, any>, args: Record<string, unknown>, extra: Partial<AgentOptions> = {}) {
  const log = eventLog();
  const model = mockModel([{ toolCalls: [{ id: 'c', name: tool.name, args }] }, 'Done.']);
  const agent = createAgent({ model, tools: [tool], onEvent: log.listener, ...extra });
  return { agent, model, log };
}

describe('input guardrails', () => {
  it('a block settles the call as a guardrail error naming the guardrail; the tool does not run', async () => {
    const noRoot = (args: { path?: string }) => (args.path?.startsWith('/root') ? { block: 'Paths under /root are off limits' } : undefined);
    const { tool, runs } = countingTool('read', { guardrails: { input: [noRoot] } });
    const { agent, model, log } = oneCall(tool, { path: '/root/.ssh' });
    const result = await agent.run('go');
    expect(runs).toHaveLength(0);
    const answer = answerTo(result.messages, 'c');
    expect(answer.content).toBe('Error (guardrail): Paths under /root are off limits');
    expect(answer.metadata?.error).toEqual({ kind: 'guardrail', message: 'Paths under /root are off limits', by: 'noRoot' });
    expect(log.of('tool.error')).toEqual([expect.objectContaining({ error: expect.objectContaining({ kind: 'guardrail', by: 'noRoot' }) })]);
    expect(model.calls[1].messages.at(-1)).toEqual(answer);
    expect(result.text).toBe('Done.');
  });

  it('a guardrail that lets the call through (undefined, true, anything but { block }) lets the tool run', async () => {
    const verdicts = [() => undefined, () => true, () => null, () => ({ block: 42 })];
    const { tool, runs } = countingTool('read', { guardrails: { input: verdicts as never } });
    await oneCall(tool, { path: 'a' }).agent.run('go');
    expect(runs).toEqual([{ path: 'a' }]);
  });

  it('run in order; the first block stops the later ones; an unnamed one is named by position', async () => {
    const order: string[] = [];
    const first = () => { order.push('first'); };
    const { tool } = countingTool('read', { guardrails: { input: [first, () => (order.push('second'), { block: 'no' }), () => { order.push('third'); }] } });
    const result = await oneCall(tool, {}).agent.run('go');
    expect(order).toEqual(['first', 'second']);
    expect(answerTo(result.messages, 'c').metadata?.error).toMatchObject({ by: 'input guardrail #1' });
  });

  it('an async guardrail is awaited', async () => {
    // Its verdict comes a turn of the event loop later.
    const slow = async () => { await nextTurn(); return { block: 'later' }; };
    const { tool, runs } = countingTool('read', { guardrails: { input: [slow] } });
    const result = await oneCall(tool, {}).agent.run('go');
    expect(runs).toHaveLength(0);
    expect(answerTo(result.messages, 'c').content).toBe('Error (guardrail): later');
  });

  it('a guardrail that throws blocks the call (fail closed), naming it; the run goes on', async () => {
    const scanner = () => { throw new Error('scanner offline'); };
    const { tool, runs } = countingTool('read', { guardrails: { input: [scanner] } });
    const result = await oneCall(tool, {}).agent.run('go');
    expect(result.status).toBe('completed');
    expect(runs).toHaveLength(0);
    expect(answerTo(result.messages, 'c').content).toBe('Error (guardrail): guardrail scanner failed, so the call was blocked: scanner offline');
  });

  it('sees the arguments the layers produced, as the schema parsed them, and the call context', async () => {
    let seen: { args: unknown; ctx?: ToolContext } = { args: undefined };
    const tool = defineTool({
      name: 'search',
      description: 'Search',
      input: z.object({ query: z.string(), limit: z.number().default(10) }),
      guardrails: { input: [(args, ctx) => { seen = { args, ctx }; }] },
      execute: () => 'ok',
    });
    const { agent } = oneCall(tool, { query: 'raw' }, { middleware: [{ name: 'rewrite', tool: (ctx, next) => { ctx.args = { query: 'rewritten' }; return next(); } }] });
    await agent.run('go');
    expect(seen.args).toEqual({ query: 'rewritten', limit: 10 });
    expect(seen.ctx?.toolCallId).toBe('c');
  });

  it('run after permissions: a call a rule denies never reaches them', async () => {
    let checked = 0;
    const { tool } = countingTool('read', { guardrails: { input: [() => { checked++; }] } });
    const result = await oneCall(tool, {}, { permissions: [{ tool: 'read', decision: 'deny' }] }).agent.run('go');
    expect(checked).toBe(0);
    expect(answerTo(result.messages, 'c').metadata?.error).toMatchObject({ kind: 'denied' });
  });

  it('run before approval: a blocked call never asks a human', async () => {
    const { tool, runs } = countingTool('pay', { needsApproval: true, guardrails: { input: [() => ({ block: 'over the limit' })] } });
    const { agent, log } = oneCall(tool, { amount: 1e9 });
    const result = await agent.run('go');
    expect(result.status).toBe('completed');
    expect(result.pendingApprovals).toEqual([]);
    expect(log.of('approval.requested')).toHaveLength(0);
    expect(runs).toHaveLength(0);
    expect(answerTo(result.messages, 'c').metadata?.error).toMatchObject({ kind: 'guardrail' });
  });

  it('run again when an approved call resumes, and can still block it', async () => {
    let open = true;
    const { tool, runs } = countingTool('pay', { needsApproval: true, guardrails: { input: [function budget() { return open ? undefined : { block: 'budget closed meanwhile' }; }] } });
    const { agent } = oneCall(tool, { amount: 5 });
    const paused = await agent.run('go');
    open = false;
    const done = await agent.resume(paused.state, { c: true });
    expect(runs).toHaveLength(0);
    expect(answerTo(done.messages, 'c').content).toBe('Error (guardrail): budget closed meanwhile');
  });

  it('defineTool rejects guardrails that are not functions', () => {
    expect(() => defineTool({ name: 't', description: 'd', execute: () => 1, guardrails: { input: ['no'] as never } })).toThrow('defineTool("t"): guardrails.input[0] must be a function (got the string "no")');
  });
});

describe('output guardrails', () => {
  it('a block replaces the result with a guardrail error; the tool did run, and its result reaches no one', async () => {
    let executed = 0;
    const noKeys = (result: string) => (result.includes('PRIVATE KEY') ? { block: 'The result contained a private key' } : undefined);
    const tool = defineTool({ name: 'cat', description: 'Read a file', execute: () => (executed++, '-----BEGIN PRIVATE KEY----- abc'), guardrails: { output: [noKeys] } });
    const { agent, model, log } = oneCall(tool, {});
    const result = await agent.run('go');
    expect(executed).toBe(1);
    expect(answerTo(result.messages, 'c').content).toBe('Error (guardrail): The result contained a private key');
    const everything = JSON.stringify([result.messages, result.state, log.events, model.calls]);
    expect(everything).not.toContain('BEGIN PRIVATE KEY');
  });

  it('gets the result and the arguments, before any layer sees the result', async () => {
    const seen: unknown[] = [];
    let outcomeSeenByLayer: ToolOutcome | undefined;
    const tool = defineTool({
      name: 'add',
      description: 'Add',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => a + b,
      guardrails: { output: [(result, args) => (seen.push(result, args), result > 10 ? { block: 'too big' } : undefined)] },
    });
    const { agent } = oneCall(tool, { a: 7, b: 8 }, { middleware: [{ name: 'watch', tool: async (_ctx, next) => (outcomeSeenByLayer = await next()) }] });
    await agent.run('go');
    expect(seen).toEqual([15, { a: 7, b: 8 }]);
    expect(outcomeSeenByLayer).toEqual({ result: undefined, error: { kind: 'guardrail', message: 'too big', by: 'output guardrail #0' } });
  });

  it('do not run when the tool failed', async () => {
    let checked = 0;
    const tool = defineTool({ name: 'boom', description: 'Fails', execute: () => { throw new Error('broken'); }, guardrails: { output: [() => { checked++; }] } });
    const result = await oneCall(tool, {}).agent.run('go');
    expect(checked).toBe(0);
    expect(answerTo(result.messages, 'c').metadata?.error).toMatchObject({ kind: 'execution' });
  });
});
