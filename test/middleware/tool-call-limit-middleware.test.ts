// toolCallLimitMiddleware: caps per tool and overall, per run and per session; past a cap the
// call does not run and the model reads why, or the run ends; what counts; and that the counts
// survive suspend → JSON → resume without counting an approved call twice.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, memoryStore, type AgentEvent, type Middleware } from '../../src/index.js';
import { memoryKeyValues, toolCallLimitMiddleware } from '../../src/middleware.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { toolError, toolMessages } from '../support/core.js';

/** Tools that record every run of theirs. */
function tools() {
  const ran: string[] = [];
  const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ q: z.string() }), execute: ({ q }) => { ran.push(`search:${q}`); return `results for ${q}`; } });
  const fetchPage = defineTool({ name: 'fetch_page', description: 'Fetches a page', input: z.object({ url: z.string() }), execute: ({ url }) => { ran.push(`fetch:${url}`); return `page ${url}`; } });
  const broken = defineTool({ name: 'broken', description: 'Always fails', input: z.object({}), execute: () => { ran.push('broken'); throw new Error('disk on fire'); } });
  return { ran, search, fetchPage, broken, all: [search, fetchPage, broken] };
}

const searches = (...qs: string[]): MockReply[] => qs.map((q) => ({ toolCalls: [{ name: 'search', args: { q } }] }));

describe('toolCallLimitMiddleware: caps per run', () => {
  it('refuses a call of a tool past its own cap with a tool error naming the cap and what to do instead; the tool does not run', async () => {
    const t = tools();
    const model = mockModel([...searches('a', 'b', 'c'), 'Done.']);
    const events: AgentEvent[] = [];
    const result = await createAgent({ model, tools: t.all, middleware: [toolCallLimitMiddleware({ perRun: { byTool: { search: 2 } } })] }).run('Go', { onEvent: (e) => events.push(e) });
    expect(t.ran).toEqual(['search:a', 'search:b']);
    expect(result.text).toBe('Done.');
    const third = toolMessages(result.messages)[2];
    expect(toolError(third)).toEqual({ kind: 'tool_error', by: 'tool-call-limit',
      message: 'Tool call limit reached: search may be called at most 2 times in this run, so this call was not run. Do not call search again: use the results you already have, or another tool.' });
    expect(model.calls[3].messages.at(-1)?.content).toMatch(/^Error \(tool_error\): Tool call limit reached: search/);
    expect(events.find((e) => e.type === 'tool_call_limit.reached')).toMatchObject({ toolName: 'search', scope: 'run', tool: 'search', max: 2, onLimit: 'error' });
  });

  it('bounds only the tools it names, and the total bounds every tool together', async () => {
    const t = tools();
    const model = mockModel([...searches('a'), { toolCalls: [{ name: 'fetch_page', args: { url: 'x' } }] }, { toolCalls: [{ name: 'fetch_page', args: { url: 'y' } }] }, ...searches('b'), 'Done.']);
    const result = await createAgent({ model, tools: t.all, middleware: [toolCallLimitMiddleware({ perRun: { total: 3, byTool: { search: 5 } } })] }).run('Go');
    expect(t.ran).toEqual(['search:a', 'fetch:x', 'fetch:y']);
    expect(toolError(toolMessages(result.messages)[3])?.message).toBe('Tool call limit reached: at most 3 tool calls in this run, so this call was not run. Do not call any more tools: answer with the information you already have.');
  });

  it('lets exactly the cap run when one reply makes more calls than it allows at once', async () => {
    const t = tools();
    const model = mockModel([{ toolCalls: ['a', 'b', 'c', 'd'].map((q) => ({ name: 'search', args: { q } })) }, 'Done.']);
    const result = await createAgent({ model, tools: t.all, toolConcurrency: 4, middleware: [toolCallLimitMiddleware({ perRun: { byTool: { search: 2 } } })] }).run('Go');
    expect(t.ran).toHaveLength(2);
    expect(toolMessages(result.messages).filter((m) => toolError(m)?.kind === 'tool_error')).toHaveLength(2);
  });

  it('counts each run on its own: a new run of the session starts at zero', async () => {
    const t = tools();
    const agent = createAgent({ model: mockModel([...searches('a'), 'One.', ...searches('b'), 'Two.']), tools: t.all, middleware: [toolCallLimitMiddleware({ perRun: { byTool: { search: 1 } } })] });
    await agent.send('First');
    await agent.send('Second');
    expect(t.ran).toEqual(['search:a', 'search:b']);
  });
});

describe('toolCallLimitMiddleware: what counts', () => {
  it('does not count a call that did not run (denied by an inner layer), and does count a tool that failed', async () => {
    const t = tools();
    const noBad: Middleware = { name: 'no-bad', tool: (ctx, next) => (ctx.args.q === 'bad' ? ctx.deny('not that one') : next()) };
    const model = mockModel([...searches('bad', 'bad', 'a'), { toolCalls: [{ name: 'broken', args: {} }] }, ...searches('b'), 'Done.']);
    const result = await createAgent({ model, tools: t.all, middleware: [toolCallLimitMiddleware({ perRun: { total: 2 } }), noBad] }).run('Go');
    // Two denials took no place; 'a' and the failing tool did; 'b' is past the cap.
    expect(t.ran).toEqual(['search:a', 'broken']);
    expect(toolMessages(result.messages).map((m) => toolError(m)?.kind ?? 'ok')).toEqual(['denied', 'denied', 'ok', 'execution', 'tool_error']);
    expect(result.state.hookState['tool-call-limit']).toEqual({ total: 2, byTool: { search: 1, broken: 1 }, open: {} });
  });

  it('counts a call that waits for approval once, when it runs after the approval — through suspend, JSON and resume in a new agent', async () => {
    const build = (ran: string[]) => {
      const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ q: z.string() }), needsApproval: ({ q }) => q === 'b', execute: ({ q }) => { ran.push(q); return `results for ${q}`; } });
      return createAgent({ model: mockModel([...searches('a', 'b', 'c'), 'Done.'], { resumable: true }), tools: [search], middleware: [toolCallLimitMiddleware({ perRun: { byTool: { search: 2 } } })] });
    };
    const ranBefore: string[] = [];
    const first = await build(ranBefore).run('Go');
    expect(first.status).toBe('suspended');
    expect(first.state.hookState['tool-call-limit']).toEqual({ total: 1, byTool: { search: 1 }, open: {} });
    const state = JSON.parse(JSON.stringify(first.state));
    const ranAfter: string[] = [];
    const done = await build(ranAfter).resume(state, { [first.pendingApprovals[0].toolCallId]: { approved: true } });
    expect([...ranBefore, ...ranAfter]).toEqual(['a', 'b']);
    expect(done.state.hookState['tool-call-limit']).toEqual({ total: 2, byTool: { search: 2 }, open: {} });
    expect(toolError(toolMessages(done.messages)[2])?.message).toMatch(/^Tool call limit reached: search may be called at most 2 times in this run/);
  });

  it('reads the counts from the state it resumes, not from a later one it wrote: one suspended state resumed twice counts the same', async () => {
    const ran: string[] = [];
    const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ q: z.string() }), needsApproval: ({ q }) => q === 'b', execute: ({ q }) => { ran.push(q); return q; } });
    // One middleware instance in two agents (a process that resumes a run twice from its JSON).
    const limit = toolCallLimitMiddleware({ perRun: { byTool: { search: 3 } } });
    const agent = () => createAgent({ model: mockModel([...searches('a', 'b', 'c', 'd'), 'Done.'], { resumable: true }), tools: [search], middleware: [limit] });
    const first = await agent().run('Go');
    const json = JSON.stringify(first.state);
    const decision = { [first.pendingApprovals[0].toolCallId]: true };
    const once = await agent().resume(JSON.parse(json), decision);
    const twice = await agent().resume(JSON.parse(json), decision);
    expect(ran).toEqual(['a', 'b', 'c', 'b', 'c']);
    expect(twice.state.hookState['tool-call-limit']).toEqual(once.state.hookState['tool-call-limit']);
  });

  it('checks an approved call against the cap when it runs: an approval never takes a run past its cap', async () => {
    const ran: string[] = [];
    const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ q: z.string() }), needsApproval: ({ q }) => q === 'b', execute: ({ q }) => { ran.push(q); return q; } });
    const agent = createAgent({ model: mockModel([{ toolCalls: ['a', 'b', 'c'].map((q) => ({ name: 'search', args: { q } })) }, 'Done.']), tools: [search], middleware: [toolCallLimitMiddleware({ perRun: { byTool: { search: 2 } } })] });
    const first = await agent.run('Go');
    // All three entered at once: 'c' waited for 'b' to settle, and 'b' holds no place while it waits for a human.
    expect(ran).toEqual(['a', 'c']);
    const done = await agent.resume(JSON.parse(JSON.stringify(first.state)), { [first.pendingApprovals[0].toolCallId]: true });
    expect(ran).toEqual(['a', 'c']);
    expect(toolError(toolMessages(done.messages)[1])).toMatchObject({ kind: 'tool_error', message: expect.stringMatching(/^Tool call limit reached/) });
  });
});

describe('toolCallLimitMiddleware: caps per session', () => {
  it('counts across the runs of a session, in the store given (a run store\'s key-value store)', async () => {
    const t = tools();
    const store = memoryStore();
    const agent = createAgent({ model: mockModel([...searches('a', 'b'), 'One.', ...searches('c', 'd'), 'Two.']), tools: t.all, middleware: [toolCallLimitMiddleware({ perSession: { byTool: { search: 3 } }, store })] });
    const one = await agent.send('First');
    const two = await agent.send('Second');
    expect(t.ran).toEqual(['search:a', 'search:b', 'search:c']);
    expect(toolError(toolMessages(two.messages).at(-1))?.message).toBe('Tool call limit reached: search may be called at most 3 times in this session, so this call was not run. Do not call search again: use the results you already have, or another tool.');
    // The refused call left no count behind.
    expect(await store.keyValues!.get(`tool-call-limit:${one.state.sessionId}:tool:search`)).toBe(3);
  });

  it('keeps sessions apart', async () => {
    const t = tools();
    const limit = toolCallLimitMiddleware({ perSession: { total: 1 } });
    const agent = createAgent({ model: mockModel([...searches('a'), 'One.', ...searches('b'), 'Two.']), tools: t.all, middleware: [limit] });
    await agent.run('First', { sessionId: 's1' });
    await agent.run('Second', { sessionId: 's2' });
    expect(t.ran).toEqual(['search:a', 'search:b']);
  });

  it('lets concurrent runs of one session pass the cap no further than it allows together', async () => {
    const t = tools();
    const values = memoryKeyValues();
    const limit = toolCallLimitMiddleware({ perSession: { byTool: { search: 3 } }, store: values });
    const runOnce = (tag: string) => createAgent({ model: mockModel([{ toolCalls: [1, 2, 3].map((i) => ({ name: 'search', args: { q: `${tag}${i}` } })) }, 'Done.']), tools: t.all, toolConcurrency: 3, middleware: [limit] }).run('Go', { sessionId: 'shared' });
    await Promise.all([runOnce('x'), runOnce('y'), runOnce('z')]);
    expect(t.ran).toHaveLength(3);
    expect(await values.get('tool-call-limit:shared:tool:search')).toBe(3);
  });

  it('starts a new count ttlMs after a session\'s first counted call', async () => {
    let now = 1_000;
    const values = memoryKeyValues({ now: () => now });
    const t = tools();
    const agent = createAgent({ model: mockModel([...searches('a', 'b'), 'One.', ...searches('c'), 'Two.']), tools: t.all, middleware: [toolCallLimitMiddleware({ perSession: { total: 1, ttlMs: 60_000 }, store: values })] });
    await agent.send('First');
    now += 60_000;
    await agent.send('Second');
    expect(t.ran).toEqual(['search:a', 'search:c']);
  });
});

describe("toolCallLimitMiddleware: onLimit 'end'", () => {
  it('ends the run before the next model call with limit:tool_calls:<tool>; the call past the cap does not run', async () => {
    const t = tools();
    const model = mockModel([...searches('a', 'b'), 'never asked']);
    const result = await createAgent({ model, tools: t.all, middleware: [toolCallLimitMiddleware({ perRun: { byTool: { search: 1 } }, onLimit: 'end' })] }).run('Go');
    expect(t.ran).toEqual(['search:a']);
    expect(model.calls).toHaveLength(2);
    expect(result.stopReason).toBe('limit:tool_calls:search');
    expect(result.output).toEqual({ limit: 'tool_calls', scope: 'run', tool: 'search', max: 1,
      message: 'Tool call limit reached: search may be called at most once in this run, so this call was not run. The run ends here.' });
    expect(toolError(toolMessages(result.messages)[1])?.message).toMatch(/The run ends here\.$/);
  });

  it('ends with limit:tool_calls for the total, and a session cap ends it the same way', async () => {
    const t = tools();
    const total = await createAgent({ model: mockModel([...searches('a', 'b'), 'x']), tools: t.all, middleware: [toolCallLimitMiddleware({ perRun: { total: 1 }, onLimit: 'end' })] }).run('Go');
    expect(total.stopReason).toBe('limit:tool_calls');
    const session = await createAgent({ model: mockModel([...searches('a', 'b'), 'x']), tools: t.all, middleware: [toolCallLimitMiddleware({ perSession: { byTool: { search: 1 } }, onLimit: 'end' })] }).run('Go');
    expect(session.stopReason).toBe('limit:tool_calls:search');
    expect(session.output).toMatchObject({ scope: 'session' });
  });

  it('ends a run resumed from JSON that reached the cap before it suspended', async () => {
    const ran: string[] = [];
    const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ q: z.string() }), needsApproval: ({ q }) => q === 'wait', execute: ({ q }) => { ran.push(q); return q; } });
    const agent = createAgent({ model: mockModel([{ toolCalls: ['wait', 'a', 'b'].map((q) => ({ name: 'search', args: { q } })) }, 'never asked']), tools: [search], middleware: [toolCallLimitMiddleware({ perRun: { byTool: { search: 1 } }, onLimit: 'end' })] });
    const first = await agent.run('Go');
    // 'a' waited for 'wait' to settle (it waits for a human, so it holds no place), then ran; 'b' was past the cap.
    expect(first.status).toBe('suspended');
    expect(ran).toEqual(['a']);
    const done = await agent.resume(JSON.parse(JSON.stringify(first.state)), { [first.pendingApprovals[0].toolCallId]: true });
    expect(ran).toEqual(['a']);
    expect(done.stopReason).toBe('limit:tool_calls:search');
  });
});

describe('toolCallLimitMiddleware: options', () => {
  it.each([
    [{ perRun: { byTol: { search: 1 } } }, 'toolCallLimitMiddleware: perRun.byTol is not a per-run cap; did you mean `byTool`?'],
    [{ perRun: { total: 2 }, onLimt: 'end' }, 'toolCallLimitMiddleware: onLimt is not a tool-call limit option; did you mean `onLimit`?'],
    [{ perSession: { total: 2, ttl: 5 } }, 'toolCallLimitMiddleware: perSession.ttl is not a per-session cap; did you mean `ttlMs`?'],
    [{ perRun: { total: -1 } }, 'toolCallLimitMiddleware: perRun.total must be a whole number ≥ 0 (got -1)'],
    [{ perRun: { total: 1 }, onLimit: 'stop' }, "toolCallLimitMiddleware: onLimit must be 'error' or 'end' (got the string \"stop\")"],
    [{ perRun: {} }, 'toolCallLimitMiddleware: give a cap (perRun or perSession, with total or byTool), e.g. { perRun: { byTool: { search: 3 } } }'],
  ])('refuses %o, saying what to fix', (options, message) => {
    expect(() => toolCallLimitMiddleware(options as never)).toThrow(new TypeError(message));
  });

  it('is a named middleware with named functions', () => {
    const m = toolCallLimitMiddleware({ perRun: { total: 1 } });
    expect(m.name).toBe('tool-call-limit');
    expect([m.run, m.tool?.name, m.model?.name]).toEqual([undefined, 'limitToolCalls', 'endAtLimit']);
  });
});
