// The AgentHook dialect around tool calls: the context preToolCall and postToolCall get, and
// what each of their outcomes does. Test names quote the seed (000_…txt) or DESIGN.md §3.
import { describe, expect, it } from 'vitest';
import { createAgent, type ToolContext } from '../../../src/index.js';
import type { AgentHook, ToolCallHookContext, ToolCallHookResult } from '../../../src/hooks.js';
import type { PermissionRecord } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';
import { brokenTool, callTool, eventLog, searchTool, toolResults } from './fixtures.js';

describe('preToolCall: its context', () => {
  it('"ToolCallHookContext: toolCallId, toolName, args (live), toolCall", and it is the very context the tool gets (no copy per call)', async () => {
    let seen: ToolCallHookContext | undefined;
    let toolGot: ToolContext | undefined;
    const { tool } = searchTool();
    const spy = { ...tool, execute: (args: { query: string }, ctx: ToolContext) => { toolGot = ctx; return tool.execute(args, ctx); } };
    const hook: AgentHook = { name: 'look', preToolCall(ctx) { seen = ctx; } };
    await createAgent({ model: mockModel([callTool('search', { query: 'q' }, 'c1'), 'ok']), tools: [spy], hooks: [hook] }).run('go');
    expect(seen).toMatchObject({ toolCallId: 'c1', toolName: 'search', args: { query: 'q' }, toolCall: { id: 'c1', name: 'search', args: { query: 'q' } } });
    expect(toolGot).toBe(seen);
  });

  it('"the common fields on every context are agentId, agentName, sessionId, messages (the live conversation history), metadata and subagent (set inside a sub-agent)": in a lead agent subagent is unset', async () => {
    let seen: ToolCallHookContext | undefined;
    const hook: AgentHook = { name: 'look', preToolCall(ctx) { seen = ctx; } };
    const agent = createAgent({ name: 'helper', id: 'helper-1', metadata: { team: 'docs' }, model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks: [hook] });
    const result = await agent.run('go', { sessionId: 's-42', metadata: { user: 'ada' } });
    expect(seen).toMatchObject({ agentId: 'helper-1', agentName: 'helper', sessionId: 's-42', metadata: { team: 'docs', user: 'ada' } });
    // Live: the view the hook got shows the messages added after it ran.
    expect(seen!.messages).toEqual(result.messages);
    expect(result.messages).toHaveLength(4);
    expect('subagent' in seen!).toBe(false);
  });

  it('"resumedAfterApproval: true only when the hook fires for a call being re-run after a human approved its pause": false on a first run', async () => {
    const flags: boolean[] = [];
    const hook: AgentHook = { name: 'flag', preToolCall(ctx) { flags.push(ctx.resumedAfterApproval); }, postToolCall(ctx) { flags.push(ctx.resumedAfterApproval); } };
    await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks: [hook] }).run('go');
    expect(flags).toEqual([false, false]);
  });
});

describe('preToolCall outcomes', () => {
  it('"nothing: the call goes on unchanged"', async () => {
    const search = searchTool();
    const hook: AgentHook = { name: 'watch', preToolCall() { return undefined; } };
    const result = await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [search.tool], hooks: [hook] }).run('go');
    expect(search.calls).toEqual([{ query: 'q' }]);
    expect(toolResults(result.messages)[0].content).toBe('found q (limit none)');
  });

  it('"mutating ctx.args in place still works", and the changed args are checked against the schema again', async () => {
    const search = searchTool();
    const grow: AgentHook = { name: 'grow', preToolCall(ctx) { ctx.args.limit = 3; } };
    await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [search.tool], hooks: [grow] }).run('go');
    expect(search.calls).toEqual([{ query: 'q', limit: 3 }]);

    const spoil: AgentHook = { name: 'spoil', preToolCall(ctx) { ctx.args.limit = 'many'; } };
    const spoiled = searchTool();
    const result = await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [spoiled.tool], hooks: [spoil] }).run('go');
    expect(spoiled.calls).toEqual([]);
    expect(toolResults(result.messages)[0].metadata?.error).toMatchObject({ kind: 'validation' });
  });

  it('"{ deny: reason }: the call does not run. The model gets the same kind: \'denied\' tool error a needsApproval deny produces"', async () => {
    const search = searchTool();
    const model = mockModel([callTool('search', { query: 'q' }), 'ok']);
    const hook: AgentHook = { name: 'no-search', preToolCall: () => ({ deny: 'Searching is off today' }) };
    const result = await createAgent({ model, tools: [search.tool], hooks: [hook] }).run('go');
    expect(search.calls).toEqual([]);
    const message = toolResults(result.messages)[0];
    expect(message.metadata?.error).toEqual({ kind: 'denied', message: 'Searching is off today', by: 'no-search' });
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: 'Error (denied): Searching is off today' });
  });

  it('"streams see tool.error, and onPermissionDecision records decision: \'deny\' with hook and reason"', async () => {
    const records: PermissionRecord[] = [];
    const log = eventLog();
    const hook: AgentHook = { name: 'no-search', preToolCall: () => ({ deny: 'Searching is off today' }) };
    await createAgent({
      model: mockModel([callTool('search', { query: 'q' }, 'c1'), 'ok']), tools: [searchTool().tool], hooks: [hook],
      onPermissionDecision: (record) => void records.push(record), onEvent: log.onEvent,
    }).run('go');
    expect(records).toEqual([{ toolName: 'search', toolCallId: 'c1', args: { query: 'q' }, decision: 'deny', source: 'hook', hook: 'no-search', reason: 'Searching is off today' }]);
    expect(log.ofType('tool.error')).toMatchObject([{ toolCallId: 'c1', toolName: 'search', error: { kind: 'denied', message: 'Searching is off today' } }]);
    expect(log.ofType('permission.decision')).toHaveLength(1);
  });

  it('"{ result: value }: the call does not run and value is its result. The tool.done event and the transcript\'s tool message (metadata) carry replacedByHook"', async () => {
    const search = searchTool();
    const log = eventLog();
    const hook: AgentHook = { name: 'cache', preToolCall: () => ({ result: { cached: true } }) };
    const result = await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [search.tool], hooks: [hook], onEvent: log.onEvent }).run('go');
    expect(search.calls).toEqual([]);
    const message = toolResults(result.messages)[0];
    expect(message.content).toBe('{"cached":true}');
    expect(message.metadata).toMatchObject({ replacedByHook: 'cache' });
    expect(log.ofType('tool.done')).toMatchObject([{ result: '{"cached":true}', replacedByHook: 'cache' }]);
  });

  it('"{ input: args }: the call runs with args", and the next pre-hook sees them as ctx.args', async () => {
    const search = searchTool();
    let later: unknown;
    const hooks: AgentHook[] = [
      { name: 'limit', preToolCall: (ctx) => ({ input: { ...ctx.args, limit: 7 } }) },
      { name: 'later', preToolCall(ctx) { later = { ...ctx.args }; } },
    ];
    await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [search.tool], hooks }).run('go');
    expect(later).toEqual({ query: 'q', limit: 7 });
    expect(search.calls).toEqual([{ query: 'q', limit: 7 }]);
  });

  it('"a mismatch becomes a kind: \'validation\' tool error whose message names the hook, and the tool does not run"; "later pre-hooks do not run" (DESIGN §3)', async () => {
    const search = searchTool();
    const later: string[] = [];
    const hooks: AgentHook[] = [
      { name: 'bad-limit', preToolCall: (ctx) => ({ input: { ...ctx.args, limit: 'ten' } }) },
      { name: 'after', preToolCall(ctx) { later.push(ctx.toolName); } },
    ];
    const result = await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [search.tool], hooks }).run('go');
    expect(search.calls).toEqual([]);
    expect(later).toEqual([]);
    const error = toolResults(result.messages)[0].metadata?.error as { kind: string; message: string; by: string };
    expect(error.kind).toBe('validation');
    expect(error.by).toBe('bad-limit');
    expect(error.message).toMatch(/^Invalid arguments for search from hook bad-limit \(\{ input \}\): .*limit/s);
  });

  it('an { input } that is not an object is a validation error naming the hook', async () => {
    const search = searchTool();
    const hook: AgentHook = { name: 'listy', preToolCall: () => ({ input: ['q'] as never }) };
    const result = await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [search.tool], hooks: [hook] }).run('go');
    expect(search.calls).toEqual([]);
    expect(toolResults(result.messages)[0].metadata?.error).toMatchObject({ kind: 'validation', message: expect.stringMatching(/from hook listy: \{ input \} must be an object of arguments, got \["q"\]/) });
  });
});

describe('postToolCall', () => {
  const run = async (hook: AgentHook, tools = [searchTool().tool, brokenTool], call = callTool('search', { query: 'q' }), extra: object = {}) =>
    createAgent({ model: mockModel([call, 'ok']), tools, hooks: [hook], ...extra }).run('go');

  it('"fires after a tool call settles: success, a tool-level error, or approval required. result is { result, error?, requiresApproval? }"', async () => {
    const seen: ToolCallHookResult[] = [];
    const hook: AgentHook = { name: 'watch', postToolCall(_ctx, result) { seen.push(result); } };
    await run(hook);
    await run(hook, [brokenTool], callTool('broken'));
    const gated = searchTool({ needsApproval: true });
    const suspended = await run(hook, [gated.tool]);
    expect(suspended.status).toBe('suspended');
    expect(seen).toEqual([
      { result: 'found q (limit none)' },
      { result: undefined, error: { kind: 'execution', message: 'broken threw: disk on fire' } },
      { result: undefined, requiresApproval: true },
    ]);
  });

  it('"every post-hook runs once for every call that reached the layer, whatever settled it", a pre-hook\'s { deny } or { result } included (DESIGN §3)', async () => {
    const seen: ToolCallHookResult[] = [];
    const post: AgentHook = { name: 'post', postToolCall(_ctx, result) { seen.push(result); } };
    for (const outcome of [{ deny: 'no' }, { result: 'from cache' }]) {
      const pre: AgentHook = { name: 'pre', preToolCall: () => outcome };
      await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks: [pre, post] }).run('go');
    }
    expect(seen).toEqual([{ result: undefined, error: { kind: 'denied', message: 'no', by: 'pre' } }, { result: 'from cache' }]);
  });

  it('"may return { result: value } to replace the result the model sees"; "nothing keeps it"', async () => {
    const model = mockModel([callTool('search', { query: 'q' }), 'ok']);
    const shout: AgentHook = { name: 'shout', postToolCall: (_ctx, r) => ({ result: String(r.result).toUpperCase() }) };
    const keep: AgentHook = { name: 'keep', postToolCall: () => undefined };
    const result = await createAgent({ model, tools: [searchTool().tool], hooks: [keep, shout, keep] }).run('go');
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: 'FOUND Q (LIMIT NONE)' });
    // The tool ran: a redaction is not a replacement of the call.
    expect(toolResults(result.messages)[0].metadata).toBeUndefined();
  });

  it('replacing a failed call\'s result turns it into a success the model sees, marked replacedByHook with the post-hook\'s name', async () => {
    const hook: AgentHook = { name: 'soften', postToolCall: (_ctx, r) => (r.error ? { result: 'nothing found' } : undefined) };
    const result = await run(hook, [brokenTool], callTool('broken'));
    const message = toolResults(result.messages)[0];
    expect(message).toMatchObject({ content: 'nothing found', metadata: { replacedByHook: 'soften' } });
    expect(message.metadata?.error).toBeUndefined();
  });
});
