// loopDetectionMiddleware: the same call repeated within a window, or an A-B-A-B oscillation,
// is a loop; the call that closes it does not run, and the model is told, or the run ends with
// stop:loop. The window lives in hook state and survives suspend → JSON → resume.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type AgentEvent } from '../../src/index.js';
import { loopDetectionMiddleware } from '../../src/middleware.js';
import { mockModel, type MockToolCall } from '../../src/testing/index.js';
import { toolError, toolMessages } from '../support/core.js';

function tools() {
  const ran: string[] = [];
  const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ q: z.string(), page: z.number().optional() }), execute: ({ q, page }) => { ran.push(`search:${q}${page ? `:${page}` : ''}`); return `results for ${q}`; } });
  const open = defineTool({ name: 'open', description: 'Opens a file', input: z.object({ path: z.string() }), execute: ({ path }) => { ran.push(`open:${path}`); return `contents of ${path}`; } });
  const wait = defineTool({ name: 'wait', description: 'Waits a moment', input: z.object({}), execute: () => { ran.push('wait'); return 'waited'; } });
  return { ran, all: [search, open, wait] };
}

/** One tool call per model turn, then a final answer. */
const turns = (...calls: MockToolCall[]) => mockModel([...calls.map((call) => ({ toolCalls: [call] })), 'Done.'], { resumable: true });
const search = (q: string, extra: Record<string, unknown> = {}): MockToolCall => ({ name: 'search', args: { q, ...extra } });
const open = (path: string): MockToolCall => ({ name: 'open', args: { path } });

describe('loopDetectionMiddleware: the same call repeated', () => {
  it('does not run the call that repeats the same call `repeats` times, and tells the model why', async () => {
    const t = tools();
    const events: AgentEvent[] = [];
    const result = await createAgent({ model: turns(search('koa'), search('koa'), search('koa')), tools: t.all, middleware: [loopDetectionMiddleware({ repeats: 3 })] }).run('Go', { onEvent: (e) => events.push(e) });
    expect(t.ran).toEqual(['search:koa', 'search:koa']);
    expect(result.text).toBe('Done.');
    expect(toolError(toolMessages(result.messages)[2])).toEqual({ kind: 'tool_error', by: 'loop-detection',
      message: 'Loop detected: this is call number 3 of search with these same arguments within the last 10 tool calls, so this call was not run. Its result would be the one you already have. Do something different: change the arguments, use another tool, or answer with what you know.' });
    expect(events.find((e) => e.type === 'loop_detection.detected')).toMatchObject({ toolName: 'search', loop: 'repeat', times: 3, action: 'warn' });
  });

  it('takes arguments that differ only in key order for the same call, and different arguments for different calls', async () => {
    const t = tools();
    const model = turns(search('koa', { page: 1 }), { name: 'search', args: { page: 1, q: 'koa' } }, search('koa', { page: 2 }), search('koa', { page: 1 }));
    const result = await createAgent({ model, tools: t.all, middleware: [loopDetectionMiddleware({ repeats: 3 })] }).run('Go');
    expect(t.ran).toEqual(['search:koa:1', 'search:koa:1', 'search:koa:2']);
    expect(toolError(toolMessages(result.messages)[3])?.message).toMatch(/^Loop detected: this is call number 3 of search/);
  });

  it('forgets calls that slid out of the window', async () => {
    const t = tools();
    // With a window of 4, the first 'koa' is gone by the third.
    const model = turns(search('koa'), open('a'), search('koa'), open('b'), open('c'), search('koa'));
    await createAgent({ model, tools: t.all, middleware: [loopDetectionMiddleware({ window: 4, repeats: 3, oscillation: false })] }).run('Go');
    expect(t.ran.filter((r) => r === 'search:koa')).toHaveLength(3);
    // The same script with a window of 6 catches it.
    const t2 = tools();
    await createAgent({ model: turns(search('koa'), open('a'), search('koa'), open('b'), open('c'), search('koa')), tools: t2.all, middleware: [loopDetectionMiddleware({ window: 6, repeats: 3, oscillation: false })] }).run('Go');
    expect(t2.ran.filter((r) => r === 'search:koa')).toHaveLength(2);
  });

  it('sees repeats within one reply, and calls the agent has no tool for (it looks before validation)', async () => {
    const t = tools();
    const model = mockModel([{ toolCalls: [search('x'), search('x'), search('x')] }, { toolCalls: [{ name: 'nope', args: {} }] }, { toolCalls: [{ name: 'nope', args: {} }] }, 'Done.']);
    const result = await createAgent({ model, tools: t.all, middleware: [loopDetectionMiddleware({ repeats: 2 })] }).run('Go');
    expect(t.ran).toEqual(['search:x']);
    expect(toolMessages(result.messages).map((m) => toolError(m)?.kind ?? 'ok')).toEqual(['ok', 'tool_error', 'tool_error', 'not_found', 'tool_error']);
  });

  it('leaves excluded tools alone: polling is not a loop', async () => {
    const t = tools();
    await createAgent({ model: turns(...Array.from({ length: 5 }, (): MockToolCall => ({ name: 'wait', args: {} }))), tools: t.all, middleware: [loopDetectionMiddleware({ repeats: 2, excludeTools: ['wait'] })] }).run('Go');
    expect(t.ran).toEqual(['wait', 'wait', 'wait', 'wait', 'wait']);
  });
});

describe('loopDetectionMiddleware: oscillation', () => {
  it('does not run the call that completes A-B-A-B', async () => {
    const t = tools();
    const result = await createAgent({ model: turns(open('a'), open('b'), open('a'), open('b')), tools: t.all, middleware: [loopDetectionMiddleware()] }).run('Go');
    expect(t.ran).toEqual(['open:a', 'open:b', 'open:a']);
    expect(toolError(toolMessages(result.messages)[3])?.message).toBe('Loop detected: the last 4 tool calls repeat the same 2 calls (open, open) 2 times over, so this call was not run. Its result would be the one you already have. Do something different: change the arguments, use another tool, or answer with what you know.');
  });

  it('finds longer periods up to maxPeriod, and needs `cycles` rounds', async () => {
    const abc = () => turns(open('a'), search('b'), open('c'), open('a'), search('b'), open('c'));
    const two = tools();
    await createAgent({ model: abc(), tools: two.all, middleware: [loopDetectionMiddleware({ oscillation: { maxPeriod: 2 } })] }).run('Go');
    expect(two.ran).toHaveLength(6);
    const three = tools();
    const result = await createAgent({ model: abc(), tools: three.all, middleware: [loopDetectionMiddleware({ oscillation: { maxPeriod: 3 } })] }).run('Go');
    expect(three.ran).toHaveLength(5);
    expect(toolError(toolMessages(result.messages)[5])?.message).toMatch(/repeat the same 3 calls \(open, search, open\) 2 times over/);
    const rounds = tools();
    await createAgent({ model: turns(open('a'), open('b'), open('a'), open('b'), open('a'), open('b')), tools: rounds.all, middleware: [loopDetectionMiddleware({ repeats: 10, oscillation: { cycles: 3 } })] }).run('Go');
    expect(rounds.ran).toHaveLength(5);
  });
});

describe("loopDetectionMiddleware: onLoop 'end' and maxWarnings", () => {
  it('ends the run before the next model call with stop:loop, the loop as its output; the looping call does not run', async () => {
    const t = tools();
    const model = turns(search('koa'), search('koa'), search('koa'));
    const result = await createAgent({ model, tools: t.all, middleware: [loopDetectionMiddleware({ onLoop: 'end' })] }).run('Go');
    expect(t.ran).toEqual(['search:koa', 'search:koa']);
    expect(model.calls).toHaveLength(3);
    expect(result.stopReason).toBe('stop:loop');
    expect(result.output).toEqual({ loop: 'repeat', tool: 'search', times: 3, window: 10,
      message: 'Loop detected: this is call number 3 of search with these same arguments within the last 10 tool calls, so this call was not run. The run ends here.' });
  });

  it('warns maxWarnings times, then ends at the next loop', async () => {
    const t = tools();
    const model = turns(search('koa'), search('koa'), search('koa'), search('koa'), search('koa'));
    const result = await createAgent({ model, tools: t.all, middleware: [loopDetectionMiddleware({ maxWarnings: 1 })] }).run('Go');
    expect(t.ran).toHaveLength(2);
    expect(result.stopReason).toBe('stop:loop');
    expect(toolMessages(result.messages).map((m) => toolError(m)?.message.endsWith('The run ends here.') ?? 'ok')).toEqual(['ok', 'ok', false, true]);
  });
});

describe('loopDetectionMiddleware: state', () => {
  it('keeps its window across suspend → JSON → resume in a new agent, and does not count the approved call twice', async () => {
    const build = (ran: string[]) => {
      const act = defineTool({ name: 'act', description: 'Acts', input: z.object({ n: z.number() }), needsApproval: true, execute: ({ n }) => { ran.push(`act:${n}`); return 'acted'; } });
      const look = defineTool({ name: 'look', description: 'Looks', input: z.object({}), execute: () => { ran.push('look'); return 'seen'; } });
      return createAgent({ model: turns({ name: 'look', args: {} }, { name: 'act', args: { n: 1 } }, { name: 'look', args: {} }, { name: 'look', args: {} }), tools: [act, look], middleware: [loopDetectionMiddleware({ repeats: 3, oscillation: false })] });
    };
    const before: string[] = [];
    const first = await build(before).run('Go');
    expect(first.status).toBe('suspended');
    const state = JSON.parse(JSON.stringify(first.state));
    expect((state.hookState['loop-detection'] as { recent: unknown[] }).recent).toHaveLength(2);
    const after: string[] = [];
    const done = await build(after).resume(state, { [first.pendingApprovals[0].toolCallId]: true });
    // The third 'look' is the loop: the window came through the resume; the approved 'act' entered it once.
    expect([...before, ...after]).toEqual(['look', 'act:1', 'look']);
    expect((done.state.hookState['loop-detection'] as { recent: string[][] }).recent.map((s) => s[1])).toEqual(['look', 'act', 'look', 'look']);
    expect(toolError(toolMessages(done.messages)[3])?.kind).toBe('tool_error');
  });

  it('keeps at most `window` calls, as digests: no arguments in the state', async () => {
    const t = tools();
    const result = await createAgent({ model: turns(...Array.from({ length: 8 }, (_, i) => search(`secret-${i}@example.com`))), tools: t.all, middleware: [loopDetectionMiddleware({ window: 3, repeats: 2, oscillation: false })] }).run('Go');
    const kept = result.state.hookState['loop-detection'] as { recent: unknown[] };
    expect(kept.recent).toHaveLength(3);
    expect(JSON.stringify(kept)).not.toContain('secret');
  });
});

describe('loopDetectionMiddleware: options', () => {
  it.each([
    [{ windw: 5 }, 'loopDetectionMiddleware: windw is not a loop-detection option; did you mean `window`?'],
    [{ oscillation: { maxPeriods: 3 } }, 'loopDetectionMiddleware: oscillation.maxPeriods is not an oscillation option; did you mean `maxPeriod`?'],
    [{ repeats: 1 }, 'loopDetectionMiddleware: repeats must be a whole number ≥ 2 (got 1)'],
    [{ onLoop: 'stop' }, "loopDetectionMiddleware: onLoop must be 'warn' or 'end' (got the string \"stop\")"],
    [{ window: 4, repeats: 5 }, 'loopDetectionMiddleware: repeats (5) must be at most window (4): a loop must fit in the window'],
    [{ window: 5, oscillation: { maxPeriod: 3 } }, 'loopDetectionMiddleware: oscillation.maxPeriod × cycles (6) must be at most window (5): a loop must fit in the window'],
  ])('refuses %o, saying what to fix', (options, message) => {
    expect(() => loopDetectionMiddleware(options as never)).toThrow(new TypeError(message));
  });

  it('is a named middleware with named functions', () => {
    const m = loopDetectionMiddleware();
    expect([m.name, m.run, m.tool?.name, m.model?.name]).toEqual(['loop-detection', undefined, 'detectLoops', 'endOnLoop']);
  });
});
