// Usage and limits: RunResult.usage sums every model call of the run (side calls and
// sub-agents included), and each per-run limit ends the run between steps with a stop reason
// naming it, never in the middle of a turn's tool calls.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type Message, type Middleware } from '../../src/index.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { add } from '../support/core.js';

/** A model that calls `add` `calls` times per turn, forever, with a fixed usage per call. */
function busyModel(calls = 1, usage = { inputTokens: 10, outputTokens: 5 }) {
  const turn: MockReply = { toolCalls: Array.from({ length: calls }, (_, i) => ({ name: 'add', args: { a: i, b: 1 } })), usage };
  return mockModel(Array.from({ length: 50 }, () => turn));
}

/** The last turn's calls all have results: the transcript ends with one tool message per call. */
function lastTurnSettled(messages: readonly Message[]): void {
  const lastReply = messages.findLastIndex((m) => m.role === 'assistant');
  const reply = messages[lastReply];
  expect(reply.role === 'assistant' && reply.toolCalls?.length).toBeTruthy();
  const ids = reply.role === 'assistant' ? reply.toolCalls!.map((c) => c.id) : [];
  expect(messages.slice(lastReply + 1).map((m) => (m.role === 'tool' ? m.toolCallId : m.role))).toEqual(ids);
}

/** A model layer that makes one side call per model call, through ctx.generate. */
function sideCaller(usage = { inputTokens: 100, outputTokens: 50 }): Middleware {
  return {
    name: 'classifier',
    async model(ctx, next) {
      await ctx.generate({ provider: mockModel([{ text: 'safe', usage }]), messages: [{ role: 'user', content: 'Classify' }] }, 'classify');
      return next();
    },
  };
}

describe('usage', () => {
  it('sums the tokens and calls of every model call and tool call of the run', async () => {
    const model = mockModel([
      { toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }, { name: 'add', args: { a: 3, b: 4 } }], usage: { inputTokens: 7, outputTokens: 3 } },
      { text: '3 and 7.', usage: { inputTokens: 20, outputTokens: 4 } },
    ]);
    const { usage } = await createAgent({ model, tools: [add] }).run('Add');
    expect(usage).toEqual({ inputTokens: 27, outputTokens: 7, totalTokens: 34, modelCalls: 2, toolCalls: 2 });
  });

  it('counts side calls (ctx.generate) in the run usage', async () => {
    const agent = createAgent({ model: mockModel([{ text: 'Hi.', usage: { inputTokens: 1, outputTokens: 1 } }]), middleware: [sideCaller()] });
    const { usage } = await agent.run('Hello');
    expect(usage).toEqual({ inputTokens: 101, outputTokens: 51, totalTokens: 152, modelCalls: 2, toolCalls: 0 });
  });

  it('keeps counting across segments: a resumed run adds to what it used before', async () => {
    const deploy = defineTool({ name: 'deploy', description: 'Deploys', input: z.object({}), needsApproval: true, execute: () => 'ok' });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'deploy' }], usage: { inputTokens: 5, outputTokens: 5 } }, { text: 'Done.', usage: { inputTokens: 8, outputTokens: 2 } }]), tools: [deploy] });
    const first = await agent.run('Deploy');
    expect(first.usage).toMatchObject({ totalTokens: 10, modelCalls: 1, toolCalls: 0 });
    const second = await agent.resume(JSON.parse(JSON.stringify(first.state)), { [first.pendingApprovals[0].toolCallId]: true });
    expect(second.usage).toEqual({ inputTokens: 13, outputTokens: 7, totalTokens: 20, modelCalls: 2, toolCalls: 1 });
  });
});

describe('limits: each one ends the run with its own stop reason', () => {
  it('modelCalls: stops before the call that would pass the limit, after the last turn\'s calls settled', async () => {
    const model = busyModel(2);
    const result = await createAgent({ model, tools: [add], limits: { modelCalls: 3 } }).run('Keep adding');
    expect(result).toMatchObject({ status: 'completed', stopReason: 'limit:model_calls' });
    expect(model.calls).toHaveLength(3);
    expect(result.usage).toMatchObject({ modelCalls: 3, toolCalls: 6 });
    lastTurnSettled(result.messages);
  });

  it('toolCalls: never stops mid-turn, so every call of the turn that reached the limit runs', async () => {
    const model = busyModel(3);
    const result = await createAgent({ model, tools: [add], limits: { toolCalls: 4 } }).run('Keep adding');
    expect(result.stopReason).toBe('limit:tool_calls');
    // 3 calls, then 3 more (the limit of 4 is reached in the middle of the second turn).
    expect(result.usage.toolCalls).toBe(6);
    expect(model.calls).toHaveLength(2);
    lastTurnSettled(result.messages);
  });

  it('tokens: counts input plus output tokens', async () => {
    const model = busyModel(1, { inputTokens: 30, outputTokens: 10 });
    const result = await createAgent({ model, tools: [add], limits: { tokens: 100 } }).run('Keep adding');
    expect(result.stopReason).toBe('limit:tokens');
    expect(model.calls).toHaveLength(3);
    expect(result.usage.totalTokens).toBe(120);
    lastTurnSettled(result.messages);
  });

  it('a reply without tool calls at the limit is simply the final answer', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, 'Two.']);
    const result = await createAgent({ model, tools: [add], limits: { modelCalls: 2 } }).run('Add');
    expect(result.stopReason).toBe('final');
    expect(result.text).toBe('Two.');
  });

  it('side calls count toward modelCalls and tokens', async () => {
    const byCalls = busyModel(1, { inputTokens: 1, outputTokens: 1 });
    const calls = await createAgent({ model: byCalls, tools: [add], middleware: [sideCaller({ inputTokens: 1, outputTokens: 1 })], limits: { modelCalls: 4 } }).run('Go');
    expect(calls.stopReason).toBe('limit:model_calls');
    expect(byCalls.calls).toHaveLength(2);
    expect(calls.usage.modelCalls).toBe(4);

    const byTokens = busyModel(1, { inputTokens: 1, outputTokens: 1 });
    const tokens = await createAgent({ model: byTokens, tools: [add], middleware: [sideCaller({ inputTokens: 400, outputTokens: 100 })], limits: { tokens: 1000 } }).run('Go');
    expect(tokens.stopReason).toBe('limit:tokens');
    expect(byTokens.calls).toHaveLength(2);
    expect(tokens.usage.totalTokens).toBe(1004);
  });

  it('a sub-agent\'s model calls count toward the lead\'s limit', async () => {
    const helper = createAgent({ name: 'helper', model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, { toolCalls: [{ name: 'add', args: { a: 2, b: 2 } }] }, 'Helped.']), tools: [add] });
    const lead = mockModel(Array.from({ length: 10 }, () => ({ toolCalls: [{ name: 'helper', args: { task: 'Help' } }] })));
    const result = await createAgent({ name: 'lead', model: lead, tools: [helper.asTool({ description: 'Helps' })], limits: { modelCalls: 4 } }).run('Go');
    expect(result.stopReason).toBe('limit:model_calls');
    expect(lead.calls).toHaveLength(1);
    expect(result.usage).toMatchObject({ modelCalls: 4, toolCalls: 3 });
  });

  it('the first limit reached wins when several are given', async () => {
    const result = await createAgent({ model: busyModel(1, { inputTokens: 1, outputTokens: 1 }), tools: [add], limits: { modelCalls: 10, toolCalls: 2, tokens: 1000 } }).run('Go');
    expect(result.stopReason).toBe('limit:tool_calls');
  });
});

describe('limits: options', () => {
  it('names an unknown limit and the ones there are', () => {
    expect(() => createAgent({ model: mockModel([]), limits: { steps: 3 } as never })).toThrow(new TypeError('createAgent: limits.steps is not a limit; use modelCalls, toolCalls or tokens'));
  });

  it.each([0, -1, 1.5])('rejects %s as a limit', (value) => {
    expect(() => createAgent({ model: mockModel([]), limits: { tokens: value as number } })).toThrow(new TypeError(`createAgent: limits.tokens must be a whole number ≥ 1 (got ${String(value)})`));
  });

  it('says so when a limit is given as a string', () => {
    expect(() => createAgent({ model: mockModel([]), limits: { tokens: '3' as never } })).toThrow(new TypeError('createAgent: limits.tokens must be a whole number ≥ 1 (got the string "3")'));
  });

  it('must be an object', () => {
    expect(() => createAgent({ model: mockModel([]), limits: 5 as never })).toThrow(/limits must be an object/);
  });
});
