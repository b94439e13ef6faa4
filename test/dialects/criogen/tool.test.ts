import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, RunFailedError, ToolError, type AgentOptions } from '../../../src/index.js';
import { ToolResult, type Hook, type ToolCall } from '../../../src/hooks.js';
import type { ToolMessage } from '../../../src/types.js';
import { mockModel, type MockToolCall } from '../../../src/testing/index.js';
import { textOf } from '../../../src/core/vocabulary/content.js';

async function failure(promise: Promise<unknown>): Promise<RunFailedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof RunFailedError)) throw new Error(`expected a RunFailedError, got ${String(error)}`);
  return error;
}

/** Tools that record each execution: a web search, a docs search (another schema), a failing one, one that needs approval. */
function toolkit() {
  const ran: string[] = [];
  const tools = [
    defineTool({ name: 'search_web', description: 'Search the web', input: z.object({ q: z.string() }), execute: ({ q }) => { ran.push(`web:${q}`); return { hits: [`web result for ${q}`] }; } }),
    defineTool({ name: 'search_docs', description: 'Search the docs', input: z.object({ query: z.string() }), execute: ({ query }) => { ran.push(`docs:${query}`); return { hits: [`docs result for ${query}`] }; } }),
    defineTool({ name: 'flaky', description: 'Always fails', execute: () => { ran.push('flaky'); throw new Error('disk full'); } }),
    defineTool({ name: 'deploy', description: 'Deploy', input: z.object({ service: z.string() }), needsApproval: true, execute: ({ service }) => { ran.push(`deploy:${service}`); return `deployed ${service}`; } }),
  ];
  return { ran, tools };
}

/** Run one tool call through an agent with these hooks; resolve to the tool message the model got back. */
async function oneCall(call: MockToolCall, hooks: Hook[], options: Partial<AgentOptions> = {}) {
  const kit = toolkit();
  const model = mockModel([{ toolCalls: [call] }, 'Done.']);
  const result = await createAgent({ model, tools: kit.tools, hooks, ...options }).run('Go');
  const message = result.messages.find((m): m is ToolMessage => m.role === 'tool')!;
  return { ...kit, result, message, error: message.metadata?.error as { kind: string; message: string; by?: string } | undefined };
}

describe('criogen beforeTool: the call as the model wrote it, ahead of validation', () => {
  it('"name: The tool the model called. Return a call with another name to run that tool instead": a call to an unknown tool reaches the hook, which maps it to a real one', async () => {
    const seen: ToolCall[] = [];
    const alias: Hook = { name: 'alias', beforeTool: (call) => { seen.push(call); return call.name === 'web_search' ? { ...call, name: 'search_web' } : undefined; } };
    const { ran, message, error } = await oneCall({ name: 'web_search', args: { q: 'koa' } }, [alias]);
    expect(seen).toEqual([{ callId: expect.any(String), name: 'web_search', args: { q: 'koa' } }]);
    expect(error).toBeUndefined();
    expect(ran).toEqual(['web:koa']);
    expect(JSON.parse(textOf(message.content))).toEqual({ hits: ['web result for koa'] });
  });

  it('"args: The arguments the model wrote": arguments that do not fit the schema reach the hook as written, and validation judges what it returns', async () => {
    const seen: ToolCall[] = [];
    const repair: Hook = { name: 'repair', beforeTool: (call) => { seen.push(call); return 'query' in call.args ? { ...call, args: { q: call.args.query } } : undefined; } };
    const { ran, error } = await oneCall({ name: 'search_web', args: { query: 'hooks' } }, [repair]);
    expect(seen[0].args).toEqual({ query: 'hooks' });
    expect(error).toBeUndefined();
    expect(ran).toEqual(['web:hooks']);
  });

  it('a repair that still does not fit settles the call as a validation error the model reads, without running the tool', async () => {
    const sloppy: Hook = { name: 'sloppy', beforeTool: (call) => ({ ...call, args: { q: 42 } }) };
    const { ran, error } = await oneCall({ name: 'search_web', args: { query: 'hooks' } }, [sloppy]);
    expect(ran).toEqual([]);
    expect(error).toMatchObject({ kind: 'validation' });
    expect(error!.message).toMatch(/^Invalid arguments for search_web/);
  });

  it('an unknown tool nobody repairs settles as not_found, and afterTool sees that error', async () => {
    const after: unknown[] = [];
    const watcher: Hook = { name: 'watcher', beforeTool: () => undefined, afterTool: (_call, result) => void after.push(result) };
    const { error } = await oneCall({ name: 'nope', args: {} }, [watcher]);
    expect(error).toMatchObject({ kind: 'not_found' });
    expect(after).toHaveLength(1);
    expect(after[0]).toBeInstanceOf(ToolError);
  });

  it('a native middleware registered ahead of the hook needs a well-formed call, so validation runs before both: the hook sees only valid calls', async () => {
    const seen: string[] = [];
    const hook: Hook = { name: 'late', beforeTool: (call) => void seen.push(call.name) };
    const kit = toolkit();
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'nope', args: {} }] }, 'Done.']), tools: kit.tools })
      .use({ name: 'native', tool: (_ctx, next) => next() })
      .use(hook);
    const result = await agent.run('Go');
    expect(seen).toEqual([]);
    expect(result.messages.find((m): m is ToolMessage => m.role === 'tool')?.metadata?.error).toMatchObject({ kind: 'not_found' });
  });
});

describe('criogen beforeTool: a changed ToolCall', () => {
  it('runs another tool when the returned call names it, with the args checked against that tool', async () => {
    const reroute: Hook = { name: 'reroute', beforeTool: (call) => (call.name === 'search_web' ? { ...call, name: 'search_docs', args: { query: String(call.args.q) } } : undefined) };
    const { ran, message } = await oneCall({ name: 'search_web', args: { q: 'hooks' } }, [reroute]);
    expect(ran).toEqual(['docs:hooks']);
    expect(JSON.parse(textOf(message.content))).toEqual({ hits: ['docs result for hooks'] });
  });

  it('settles the call as a validation error when the renamed call\'s args do not fit the new tool', async () => {
    const reroute: Hook = { beforeTool: (call) => ({ ...call, name: 'search_docs' }) };
    const { ran, error } = await oneCall({ name: 'search_web', args: { q: 'hooks' } }, [reroute]);
    expect(ran).toEqual([]);
    expect(error).toMatchObject({ kind: 'validation' });
    expect(error!.message).toMatch(/Invalid arguments for search_docs \(as changed by a layer\)/);
  });

  it('settles the call as not_found when the returned call names no tool of the agent', async () => {
    const reroute: Hook = { beforeTool: (call) => ({ ...call, name: 'search_intranet' }) };
    const { ran, error } = await oneCall({ name: 'search_web', args: { q: 'hooks' } }, [reroute]);
    expect(ran).toEqual([]);
    expect(error).toMatchObject({ kind: 'not_found' });
    expect(error!.message).toMatch(/There is no tool named "search_intranet" \(a layer renamed the call\)/);
  });

  it('changes the args when the returned call has new ones, and the hooks after it see them', async () => {
    const seen: ToolCall[] = [];
    const widen: Hook = { name: 'widen', beforeTool: (call) => ({ ...call, args: { q: `${String(call.args.q)} OR koa` } }) };
    const spy: Hook = { name: 'spy', beforeTool: (call) => void seen.push(call) };
    const { ran, result } = await oneCall({ name: 'search_web', args: { q: 'hooks' }, id: 'c1' }, [widen, spy]);
    expect(ran).toEqual(['web:hooks OR koa']);
    expect(seen).toEqual([{ callId: 'c1', name: 'search_web', args: { q: 'hooks OR koa' } }]);
    // The transcript keeps what the model wrote.
    expect(result.messages[1]).toMatchObject({ toolCalls: [{ args: { q: 'hooks' } }] });
  });

  it('gives each hook its own copy of the call: changing it without returning it changes nothing', async () => {
    const meddle: Hook = { beforeTool: (call) => { call.name = 'search_docs'; call.args.q = 'changed'; } };
    const { ran } = await oneCall({ name: 'search_web', args: { q: 'hooks' } }, [meddle]);
    expect(ran).toEqual(['web:hooks']);
  });

  it.each([
    ['a string', 'search_docs', /reroute\.beforeTool\(\) returned "search_docs"; return the call \(changed\) as \{ callId, name, args \}, a new ToolResult\(value\)/],
    ['a call without args', { callId: 'c1', name: 'search_docs' }, /returned a call whose args are undefined; args must be an object/],
    ['a call with another callId', { callId: 'other', name: 'search_web', args: { q: 'x' } }, /returned callId "other" for call "c1"; the callId identifies the call/],
  ])('fails the run with hook_failed when it returns %s, naming the hook and the fix', async (_label, returned, pattern) => {
    const reroute = { name: 'reroute', beforeTool: () => returned } as unknown as Hook;
    const error = await failure(oneCall({ name: 'search_web', args: { q: 'hooks' }, id: 'c1' }, [reroute]));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'reroute' });
    expect(error.message).toMatch(pattern);
  });
});

describe('criogen beforeTool: a ToolResult', () => {
  it('skips the tool and gives the model its value as JSON', async () => {
    const cached: Hook = { name: 'cache', beforeTool: () => new ToolResult({ hits: ['cached'] }) };
    const { ran, message } = await oneCall({ name: 'search_web', args: { q: 'hooks' } }, [cached]);
    expect(ran).toEqual([]);
    expect(message).toMatchObject({ content: '{"hits":["cached"]}', metadata: { replacedBy: 'cache' } });
  });

  it('turns a value that is not JSON into an execution error naming the hook', async () => {
    const cached: Hook = { name: 'cache', beforeTool: () => new ToolResult(() => 'nope') };
    const { error } = await oneCall({ name: 'search_web', args: { q: 'hooks' } }, [cached]);
    expect(error).toMatchObject({ kind: 'execution' });
    expect(error!.message).toMatch(/cache .*search_web.* cannot be sent to the model/);
  });

  it('is recognised by its marker, so one made by another copy of koagent counts too', () => {
    const foreign = Object.defineProperty({ value: 1 }, Symbol.for('koagent.toolResult'), { value: true });
    expect(ToolResult.is(foreign)).toBe(true);
    expect(ToolResult.is({ value: 1 })).toBe(false);
  });
});

describe('criogen hooks: a throw in beforeTool or afterTool counts as the tool\'s exception', () => {
  it('gives the model an execution error naming the hook by default, without running the tool', async () => {
    const guard: Hook = { name: 'guard', beforeTool: () => { throw new Error('quota service down'); } };
    const { ran, error, result } = await oneCall({ name: 'search_web', args: { q: 'x' } }, [guard]);
    expect(ran).toEqual([]);
    expect(error).toEqual({ kind: 'execution', message: 'guard threw: quota service down', by: 'guard' });
    expect(result.text).toBe('Done.');
  });

  it('gives the model a thrown ToolError\'s message as is, even when onToolException is fail', async () => {
    const guard: Hook = { name: 'guard', beforeTool: () => { throw new ToolError('Searching is paused until 9:00.'); } };
    const { ran, error } = await oneCall({ name: 'search_web', args: { q: 'x' } }, [guard], { onToolException: 'fail' });
    expect(ran).toEqual([]);
    expect(error).toEqual({ kind: 'tool_error', message: 'Searching is paused until 9:00.', by: 'guard' });
  });

  it.each(['beforeTool', 'afterTool'] as const)('fails the run with tool_exception when onToolException is fail (%s)', async (method) => {
    const thrown = new Error(`${method} broke`);
    const hook = { name: 'strict', [method]: () => { throw thrown; } } as Hook;
    const error = await failure(oneCall({ name: 'search_web', args: { q: 'x' } }, [hook], { onToolException: 'fail' }));
    expect(error).toMatchObject({ code: 'tool_exception', layer: 'strict' });
    expect(error.cause).toBe(thrown);
    expect(error.message).toMatch(/strict threw while calling search_web: .* broke/);
  });

  it('lets an onToolException function decide per error', async () => {
    const decide = (error: unknown) => ((error as Error).message.includes('fatal') ? 'fail' as const : 'model' as const);
    const mild: Hook = { beforeTool: () => { throw new Error('mild'); } };
    expect((await oneCall({ name: 'search_web', args: { q: 'x' } }, [mild], { onToolException: decide })).error?.kind).toBe('execution');
    const fatal: Hook = { beforeTool: () => { throw new Error('fatal'); } };
    expect((await failure(oneCall({ name: 'search_web', args: { q: 'x' } }, [fatal], { onToolException: decide }))).code).toBe('tool_exception');
  });

  it('replaces the tool\'s result with the error when afterTool throws', async () => {
    const audit: Hook = { name: 'audit', afterTool: () => { throw new Error('audit log unreachable'); } };
    const { ran, error } = await oneCall({ name: 'search_web', args: { q: 'x' } }, [audit]);
    expect(ran).toEqual(['web:x']);
    expect(error).toEqual({ kind: 'execution', message: 'audit threw: audit log unreachable', by: 'audit' });
  });
});

describe('criogen afterTool', () => {
  it('replaces the result the model sees with any value other than undefined', async () => {
    const trim: Hook = { name: 'trim', afterTool: (_call, result) => ({ top: (result as { hits: string[] }).hits[0] }) };
    const { message } = await oneCall({ name: 'search_web', args: { q: 'x' } }, [trim]);
    expect(message).toMatchObject({ content: '{"top":"web result for x"}', metadata: { replacedBy: 'trim' } });
  });

  it('keeps the result when it returns undefined or the very result it got', async () => {
    const same: Hook = { afterTool: (_call, result) => result };
    const none: Hook = { afterTool: () => undefined };
    const { message } = await oneCall({ name: 'search_web', args: { q: 'x' } }, [same, none]);
    expect(message.content).toBe('{"hits":["web result for x"]}');
    expect(message.metadata).toBeUndefined();
  });

  it('receives the call as it ran, after every beforeTool\'s changes', async () => {
    const calls: ToolCall[] = [];
    const reroute: Hook = { beforeTool: (call) => ({ ...call, name: 'search_docs', args: { query: 'q' } }) };
    const watcher: Hook = { afterTool: (call) => void calls.push(call) };
    await oneCall({ name: 'search_web', args: { q: 'x' }, id: 'c1' }, [watcher, reroute]);
    expect(calls).toEqual([{ callId: 'c1', name: 'search_docs', args: { query: 'q' } }]);
  });

  it('receives a tool error as a ToolError with its message and kind, and may replace it with a value', async () => {
    const got: unknown[] = [];
    const fallback: Hook = {
      name: 'fallback',
      afterTool: (_call, result) => {
        got.push(result);
        return ToolError.is(result) ? { note: 'no data today' } : undefined;
      },
    };
    const { ran, message, error } = await oneCall({ name: 'flaky' }, [fallback]);
    expect(ran).toEqual(['flaky']);
    expect(got).toHaveLength(1);
    expect(ToolError.is(got[0])).toBe(true);
    expect(got[0]).toMatchObject({ message: 'flaky threw: disk full', kind: 'execution' });
    expect(error).toBeUndefined();
    expect(message).toMatchObject({ content: '{"note":"no data today"}', metadata: { replacedBy: 'fallback' } });
  });

  it('turns the result into that error when it returns a ToolError', async () => {
    const veto: Hook = { name: 'veto', afterTool: () => new ToolError('That result is stale; search again tomorrow.') };
    const { error } = await oneCall({ name: 'search_web', args: { q: 'x' } }, [veto]);
    expect(error).toEqual({ kind: 'tool_error', message: 'That result is stale; search again tomorrow.', by: 'veto' });
  });

  it('is not called while a call waits for approval, and is called with the result once the approved call ran', async () => {
    const log: string[] = [];
    const watcher: Hook = {
      name: 'watcher',
      beforeTool: (call) => void log.push(`before ${call.name}`),
      // A replacement here could answer for a call no human approved yet; so it waits for the result.
      afterTool: (call, result) => void log.push(`after ${call.name} ${JSON.stringify(result)}`),
    };
    const kit = toolkit();
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'deploy', args: { service: 'api' } }] }, 'Deployed.']), tools: kit.tools, hooks: [watcher] });
    const paused = await agent.run('Deploy');
    expect(paused.status).toBe('suspended');
    expect(log).toEqual(['before deploy']);
    const done = await agent.resume(paused.state, { [paused.pendingApprovals[0].toolCallId]: true });
    expect(done.text).toBe('Deployed.');
    expect(log).toEqual(['before deploy', 'before deploy', 'after deploy "deployed api"']);
    expect(kit.ran).toEqual(['deploy:api']);
  });

  it('is not called, nor is beforeTool, for a call a human declined on resume', async () => {
    const log: string[] = [];
    const watcher: Hook = { beforeTool: (call) => void log.push(`before ${call.name}`), afterTool: (call) => void log.push(`after ${call.name}`) };
    const kit = toolkit();
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'deploy', args: { service: 'api' } }] }, 'Not deployed.']), tools: kit.tools, hooks: [watcher] });
    const paused = await agent.run('Deploy');
    const done = await agent.resume(paused.state, { [paused.pendingApprovals[0].toolCallId]: { approved: false, reason: 'Friday' } });
    expect(log).toEqual(['before deploy']);
    expect(kit.ran).toEqual([]);
    expect(done.messages.find((m) => m.role === 'tool')).toMatchObject({ metadata: { error: { kind: 'denied', message: 'Friday' } } });
  });
});
