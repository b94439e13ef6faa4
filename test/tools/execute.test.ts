// The terminal step of the tool stack: the tool runs once; what it throws becomes an outcome
// the model sees (or, by the agent's onToolException policy, a run failure).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, ToolError, type ToolContext } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { runFailure, toolError, toolMessages } from '../support/core.js';

const callOnce = (args: Record<string, unknown> = { x: 1 }) => mockModel([{ toolCalls: [{ name: 'risky', args }] }, 'Handled.']);
const risky = (execute: (args: { x: number }, ctx: ToolContext) => unknown) => defineTool({ name: 'risky', description: 'May fail', input: z.object({ x: z.number() }), execute });

describe('a tool that throws', () => {
  it('settles the call as an execution error naming the tool and the message; the run goes on', async () => {
    const model = callOnce();
    const result = await createAgent({ model, tools: [risky(() => { throw new Error('database unreachable'); })] }).run('Go');
    const [message] = toolMessages(result.messages);
    expect(toolError(message)).toEqual({ kind: 'execution', message: 'risky threw: database unreachable' });
    expect(message.content).toBe('Error (execution): risky threw: database unreachable');
    expect(result.text).toBe('Handled.');
    expect(model.calls[1].messages.at(-1)).toEqual(message);
  });

  it('that throws a non-Error value is an execution error showing the value', async () => {
    const result = await createAgent({ model: callOnce(), tools: [risky(() => { throw 'bad input'; })] }).run('Go');
    expect(toolError(toolMessages(result.messages)[0])).toEqual({ kind: 'execution', message: 'risky threw: "bad input"' });
  });

  it('that rejects asynchronously is handled the same way', async () => {
    const result = await createAgent({ model: callOnce(), tools: [risky(async () => { await Promise.resolve(); throw new Error('later'); })] }).run('Go');
    expect(toolError(toolMessages(result.messages)[0])?.kind).toBe('execution');
  });

  it('with a ToolError gives the model its message as is, as a tool_error', async () => {
    const result = await createAgent({ model: callOnce(), tools: [risky(() => { throw new ToolError('No user named Bob. Try a full name.'); })] }).run('Go');
    const [message] = toolMessages(result.messages);
    expect(toolError(message)).toEqual({ kind: 'tool_error', message: 'No user named Bob. Try a full name.' });
    expect(message.content).toBe('Error (tool_error): No user named Bob. Try a full name.');
  });

  it('with onToolException: "fail" fails the run with tool_exception, but a ToolError still goes to the model', async () => {
    const failing = await runFailure(createAgent({ model: callOnce(), tools: [risky(() => { throw new Error('x'); })], onToolException: 'fail' }).run('Go'), 'tool_exception');
    expect(failing.message).toBe('risky threw while calling risky: x');
    const result = await createAgent({ model: callOnce(), tools: [risky(() => { throw new ToolError('expected'); })], onToolException: 'fail' }).run('Go');
    expect(toolError(toolMessages(result.messages)[0])?.kind).toBe('tool_error');
  });

  it('with an onToolException function lets it decide per error', async () => {
    const decided: string[] = [];
    const policy = (error: unknown, ctx: ToolContext) => { decided.push(`${ctx.toolName}:${(error as Error).message}`); return (error as Error).message === 'fatal' ? 'fail' as const : 'model' as const; };
    const soft = await createAgent({ model: callOnce(), tools: [risky(() => { throw new Error('soft'); })], onToolException: policy }).run('Go');
    expect(toolError(toolMessages(soft.messages)[0])?.kind).toBe('execution');
    await runFailure(createAgent({ model: callOnce(), tools: [risky(() => { throw new Error('fatal'); })], onToolException: policy }).run('Go'), 'tool_exception');
    expect(decided).toEqual(['risky:soft', 'risky:fatal']);
  });
});

describe('the tool\'s context', () => {
  it('carries the call\'s id, a stable idempotency key, the run\'s signal and metadata', async () => {
    let seen: ToolContext | undefined;
    const model = mockModel([{ toolCalls: [{ name: 'risky', args: { x: 1 }, id: 'call-abc' }] }, 'ok']);
    const result = await createAgent({ model, tools: [risky((_a, ctx) => { seen = ctx; return 'ok'; })], metadata: { team: 'core' } }).run('Go');
    expect(seen).toMatchObject({ toolCallId: 'call-abc', toolName: 'risky', args: { x: 1 }, idempotencyKey: `${result.runId}:call-abc`, metadata: { team: 'core' }, step: 1, resumedAfterApproval: false });
    expect(seen!.signal).toBeInstanceOf(AbortSignal);
    // The live transcript (a view of it): it shows the final reply that came after the call.
    expect(seen!.messages).toEqual(result.messages);
  });

  it('marks every call done in the run\'s ledger once settled', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'risky', args: { x: 1 }, id: 'a' }, { name: 'risky', args: { x: 2 }, id: 'b' }] }, 'ok']);
    const result = await createAgent({ model, tools: [risky(({ x }) => x)] }).run('Go');
    expect(result.state.ledger).toEqual([{ id: 'a', entry: 'done' }, { id: 'b', entry: 'done' }]);
    expect(result.state.settled).toEqual([]);
  });
});
