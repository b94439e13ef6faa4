import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent, type AgentOptions, type Middleware, type Tool } from '../../../src/index.js';
import { mockModel, type MockReply } from '../../../src/testing/index.js';
import { answerTo, countingTool, eventLog } from '../../fixtures/counting-tools.js';
import { nextTurn } from '../../support/waits.js';

function watched(tools: Tool<any, any>[], script: MockReply[], extra: Partial<AgentOptions> = {}) {
  const log = eventLog();
  const agent = createAgent({ model: mockModel(script), tools, onEvent: log.listener, permissions: [], ...extra });
  return { agent, log };
}

/** The event types in order, with the fields that say what happened. */
const summary = (events: AgentEvent[]) => events.map((e) => {
  switch (e.type) {
    case 'run.start': return `run.start segment=${e.segment} resumed=${e.resumed}`;
    case 'run.end': return `run.end ${e.status}/${e.stopReason ?? e.error?.code}`;
    case 'model.start': return `model.start ${e.step}`;
    case 'model.done': return `model.done ${e.step} ${e.finishReason}`;
    case 'tool.start': return `tool.start ${e.toolCallId}`;
    case 'tool.done': return `tool.done ${e.toolCallId}${e.replacedBy ? ` replacedBy=${e.replacedBy}` : ''}`;
    case 'tool.error': return `tool.error ${e.toolCallId} ${e.error.kind}`;
    case 'approval.requested': return `approval.requested ${e.toolCallId}`;
    case 'permission.decision': return `permission.decision ${e.toolCallId} ${e.decision}/${e.source}`;
    default: return e.type;
  }
});

describe('events: the life of a run', () => {
  it('a run with one tool call: start, model, tool, model, end — every event with the run id and a time', async () => {
    const read = countingTool('read');
    const { agent, log } = watched([read.tool], [{ toolCalls: [{ id: 'r', name: 'read', args: { path: 'a' } }] }, 'Read it.']);
    const result = await agent.run('go');
    expect(summary(log.events)).toEqual([
      'run.start segment=1 resumed=false',
      'model.start 1', 'model.done 1 tool_calls',
      'permission.decision r allow/default', 'tool.start r', 'tool.done r',
      'model.start 2', 'model.done 2 stop',
      'run.end completed/final',
    ]);
    for (const event of log.events) {
      expect(event.runId).toBe(result.runId);
      expect(typeof event.at).toBe('number');
    }
    expect(log.of('run.start')[0].sessionId).toBe(result.sessionId);
    expect(log.of('model.done')[1].message).toEqual({ role: 'assistant', content: 'Read it.' });
    expect(log.of('tool.start')[0]).toMatchObject({ toolName: 'read', args: { path: 'a' } });
    expect(log.of('tool.done')[0]).toMatchObject({ toolName: 'read', result: '{"ran":"read","path":"a"}' });
  });

  it('a suspended segment and its resume', async () => {
    const pay = countingTool('pay', { needsApproval: true });
    const { agent, log } = watched([pay.tool], [{ toolCalls: [{ id: 'p', name: 'pay', args: { amount: 3 } }] }, 'Paid.']);
    const paused = await agent.run('go');
    await agent.resume(paused.state, { p: true });
    expect(summary(log.events)).toEqual([
      'run.start segment=1 resumed=false', 'model.start 1', 'model.done 1 tool_calls',
      // A call that only waits for a human has no tool.start: it runs, and starts, once, after the resume.
      'permission.decision p allow/default', 'approval.requested p',
      'run.end suspended/approval',
      'run.start segment=2 resumed=true', 'permission.decision p allow/approval',
      'tool.start p', 'tool.done p', 'model.start 2', 'model.done 2 stop', 'run.end completed/final',
    ]);
    expect(log.of('approval.requested')[0]).toMatchObject({ toolName: 'pay', args: { amount: 3 } });
    expect(new Set(log.events.map((e) => e.runId)).size).toBe(1);
  });

  it('a failed run ends with run.end failed and the error', async () => {
    const { agent, log } = watched([], [{ error: 'overloaded' }]);
    await agent.run('go').catch(() => undefined);
    expect(log.events.at(-1)).toMatchObject({ type: 'run.end', status: 'failed', error: { code: 'model_error' } });
  });

  it('a per-run onEvent hears the run as well as the agent\'s', async () => {
    const { agent, log } = watched([], ['hi']);
    const own = eventLog();
    await agent.run('go', { onEvent: own.listener });
    expect(own.events).toEqual(log.events);
  });
});

describe('events: tool outcomes', () => {
  it('tool.done carries replacedBy when a layer supplied the result instead of the tool', async () => {
    const read = countingTool('read');
    const cache: Middleware = { name: 'cache', tool: () => ({ result: 'from cache' }) };
    const { agent, log } = watched([read.tool], [{ toolCalls: [{ id: 'r', name: 'read', args: {} }] }, 'ok'], { middleware: [cache] });
    const result = await agent.run('go');
    expect(read.runs).toHaveLength(0);
    expect(log.of('tool.done')).toEqual([expect.objectContaining({ toolCallId: 'r', result: 'from cache', replacedBy: 'cache' })]);
    // The tool never ran, so nothing started.
    expect(log.of('tool.start')).toEqual([]);
    expect(answerTo(result.messages, 'r').metadata).toMatchObject({ replacedBy: 'cache' });
  });

  it('tool.done has no replacedBy when the tool ran, even if a layer changed its result', async () => {
    const read = countingTool('read');
    const upper: Middleware = { name: 'upper', tool: async (_ctx, next) => ({ result: JSON.stringify((await next()).result).toUpperCase() }) };
    const { agent, log } = watched([read.tool], [{ toolCalls: [{ id: 'r', name: 'read', args: {} }] }, 'ok'], { middleware: [upper] });
    await agent.run('go');
    expect(log.of('tool.done')[0].replacedBy).toBeUndefined();
    expect(log.of('tool.done')[0].result).toBe('{"RAN":"READ"}');
  });

  it('tool.error carries the kind and the message the model sees, for every kind of failure', async () => {
    const strict = defineTool({ name: 'strict', description: 'd', input: z.object({ n: z.number() }), execute: () => 1 });
    const boom = defineTool({ name: 'boom', description: 'd', execute: () => { throw new Error('kaput'); } });
    const guarded = countingTool('guarded', { guardrails: { input: [() => ({ block: 'blocked' })] } });
    const denied = countingTool('denied');
    const calls = [
      { id: 'v', name: 'strict', args: { n: 'x' } }, { id: 'nf', name: 'nope', args: {} }, { id: 'e', name: 'boom', args: {} },
      { id: 'g', name: 'guarded', args: {} }, { id: 'd', name: 'denied', args: {} },
    ];
    const { agent, log } = watched([strict, boom, guarded.tool, denied.tool], [{ toolCalls: calls }, 'ok'], { permissions: [{ tool: 'denied', decision: 'deny' }], toolConcurrency: 1 });
    const result = await agent.run('go');
    expect(log.of('tool.error').map((e) => [e.toolCallId, e.error.kind])).toEqual([['v', 'validation'], ['nf', 'not_found'], ['e', 'execution'], ['g', 'guardrail'], ['d', 'denied']]);
    // tool.start says a tool is entered: only the one that ran (and threw) started.
    expect(log.of('tool.start').map((e) => e.toolCallId)).toEqual(['e']);
    for (const event of log.of('tool.error')) {
      expect(answerTo(result.messages, event.toolCallId).content).toBe(`Error (${event.error.kind}): ${event.error.message}`);
    }
  });
});

describe('events: listeners cannot break the run', () => {
  it('a listener that throws is logged on every event, and the other listeners still hear everything', async () => {
    const warnings: string[] = [];
    const other = eventLog();
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ id: 'r', name: 'read', args: {} }] }, 'Done.']),
      tools: [countingTool('read').tool],
      onEvent: () => { throw new Error('listener bug'); },
      logger: { warn: (m) => warnings.push(m) },
    });
    const result = await agent.run('go', { onEvent: other.listener });
    expect(result).toMatchObject({ status: 'completed', text: 'Done.' });
    expect(other.events.length).toBeGreaterThan(0);
    expect(warnings).toEqual(other.events.map((e) => `koagent: an event listener threw on ${e.type}; the run goes on`));
  });
});

describe('events: an async listener cannot break the run either', () => {
  it('a listener whose promise rejects is logged and the run goes on: no unhandled rejection reaches the process', async () => {
    const warnings: unknown[][] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const agent = createAgent({
        model: mockModel(['Done.']),
        onEvent: async (e) => { if (e.type === 'run.start') throw new Error('audit store down'); },
        logger: { warn: (...args) => warnings.push(args) },
      });
      const result = await agent.run('go');
      // A turn of the event loop: a rejection left unhandled would be reported by then.
      await nextTurn();
      expect(result.text).toBe('Done.');
      expect(warnings).toEqual([['koagent: an event listener threw on run.start; the run goes on', new Error('audit store down')]]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('events: carry what the model sees', () => {
  it('a result a layer rewrote appears in events only as rewritten', async () => {
    const secretTool = defineTool({ name: 'whoami', description: 'd', execute: () => ({ user: 'ada', token: 'tok_live_123' }) });
    const scrub: Middleware = { name: 'scrub', tool: async (_ctx, next) => { const o = await next(); return { ...o, result: { user: (o.result as { user: string }).user } }; } };
    const { agent, log } = watched([secretTool], [{ toolCalls: [{ id: 'w', name: 'whoami', args: {} }] }, 'You are ada.'], { middleware: [scrub] });
    const result = await agent.run('go');
    expect(log.of('tool.done')[0].result).toBe(answerTo(result.messages, 'w').content);
    expect(JSON.stringify(log.events)).not.toContain('tok_live_123');
  });
});
