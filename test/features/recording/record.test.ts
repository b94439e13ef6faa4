// The record of the world a traced run keeps (state.hookState['koagent.replay']): each provider
// call's request fingerprint and reply, each tool execution's arguments and result, and a mark at
// the start and at each step's end — what fork, replay and fixtures read.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type Middleware } from '../../../src/index.js';
import { piiRedactionMiddleware } from '../../../src/middleware.js';
import { mockModel } from '../../../src/testing/index.js';
import { fork } from '../../../src/replay.js';
import { REPLAY_STATE, replayRecordOf } from '../../../src/features/recording/record.js';
import { transcriptAt } from '../../../src/features/recording/record.js';
import { noteTool, SCRIPT, turnCounter } from '../../replay/support.js';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const file = join(tmpdir(), `koagent-record-${process.pid}.txt`);
const agentWith = (middleware: Middleware[] = [], layerTrace = true) => createAgent({ name: 'noter', model: mockModel(SCRIPT, { resumable: true }), tools: [noteTool(file)], middleware: [turnCounter, ...middleware], layerTrace });

describe('what a traced run records', () => {
  it('each provider call (its request as a fingerprint, its reply), each tool execution, and a mark at the start and at each step\'s end', async () => {
    const { state } = await agentWith().run('Note four things');
    const record = replayRecordOf(state)!;
    expect(record.models.map((m) => [m.key, m.messages, m.tools, m.reply?.message.toolCalls?.map((c) => c.id) ?? m.reply?.message.content])).toEqual([
      ['turn:1:1', 1, ['note'], ['c1']], ['turn:2:1', 3, ['note'], ['c2', 'c3']], ['turn:3:1', 6, ['note'], ['c4']], ['turn:4:1', 8, ['note'], 'Noted four things.'],
    ]);
    expect(record.models[0].digest).toMatch(/^[0-9a-f]{16}$/);
    expect(record.models[0].reply?.usage).toEqual({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
    expect(record.tools.map((t) => [t.id, t.step, t.args, t.result])).toEqual([['c1', 1, { text: 'one' }, { noted: 'one' }], ['c2', 2, { text: 'two' }, { noted: 'two' }], ['c3', 2, { text: 'three' }, { noted: 'three' }], ['c4', 3, { text: 'four' }, { noted: 'four' }]]);
    const ends = record.marks.filter((m) => m.kind !== 'request');
    expect(ends.map((m) => [m.kind, m.step, m.messages, m.calls, m.hooks, m.usage?.modelCalls])).toEqual([
      ['start', 0, 1, undefined, undefined, 0], ['step', 0, 1, undefined, undefined, 0],
      ['step', 1, 3, ['c1'], { turns: 1 }, 1], ['step', 2, 6, ['c2', 'c3'], { turns: 2 }, 2], ['step', 3, 8, ['c4'], { turns: 3 }, 3],
    ]);
  });

  it('nothing without the layer trace', async () => {
    const { state } = await agentWith([], false).run('Note four things');
    expect(state.hookState[REPLAY_STATE]).toBeUndefined();
  });

  it('one record across segments: a run suspended for a human and resumed', async () => {
    const pay = defineTool({ name: 'pay', description: 'Pays', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => `paid ${amount}` });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'p1', name: 'pay', args: { amount: 5 } }] }, 'Paid.'], { resumable: true }), tools: [pay], layerTrace: true });
    const first = await agent.run('Pay 5');
    const done = await agent.resume(first.state, { p1: true });
    const record = replayRecordOf(done.state)!;
    expect(record.marks.filter((m) => m.kind === 'start')).toHaveLength(1);
    expect(record.marks.filter((m) => m.kind === 'step').map((m) => [m.step, m.segment])).toEqual([[0, 1], [1, 2]]);
    expect(record.tools.map((t) => [t.id, t.result])).toEqual([['p1', 'paid 5']]);
  });

  it('header values as fingerprints only: a key a layer sets never enters the record', async () => {
    const auth: Middleware = { name: 'auth', model: (ctx, next) => { ctx.request.headers = { authorization: 'Bearer sk-very-secret' }; return next(); } };
    const { state } = await agentWith([auth]).run('Note four things');
    expect(replayRecordOf(state)!.models[0].fields).toEqual({ headers: { authorization: expect.stringMatching(/^sha256:[0-9a-f]{12}$/) } });
    expect(JSON.stringify(state.hookState[REPLAY_STATE])).not.toContain('sk-very-secret');
  });

  it('no reply, result or argument when a layer keeps values out of traces (traceValues: false)', async () => {
    const { state } = await agentWith([piiRedactionMiddleware()]).run('Note four things');
    const record = replayRecordOf(state)!;
    expect(record.withheld).toBe(true);
    expect(record.models.every((m) => m.reply === undefined)).toBe(true);
    expect(record.tools.map((t) => [t.args, t.result])).toEqual([['[withheld]', undefined], ['[withheld]', undefined], ['[withheld]', undefined], ['[withheld]', undefined]]);
  });
});

describe('the transcript at each mark', () => {
  it('kept whole on the last mark before a layer replaced an old message, so each mark reads its transcript as it was', async () => {
    const clearOld: Middleware = { name: 'clear-old', model: (ctx, next) => { if (ctx.step === 3) ctx.messages[2] = { role: 'tool', toolCallId: 'c1', name: 'note', content: '[cleared]' }; return next(); } };
    const agent = agentWith([clearOld]);
    const { state } = await agent.run('Note four things');
    const record = replayRecordOf(state)!;
    const afterStep1 = record.marks.findIndex((m) => m.kind === 'step' && m.step === 1);
    expect(state.messages[2].content).toBe('[cleared]');
    expect(transcriptAt(record, state.messages, afterStep1)?.[2].content).toBe('{"noted":"one"}');
    // Forked by the agent without that layer (so nothing clears it again), the fork starts from the message as it was.
    const forked = await fork(agentWith(), state, { atStep: 2 });
    expect(forked.messages[2].content).toBe('{"noted":"one"}');
  });

  it('not told when a layer edited an old message in place: fork refuses that step rather than give the wrong one', async () => {
    const editInPlace: Middleware = { name: 'edit-in-place', model: (ctx, next) => { if (ctx.step === 3) (ctx.messages[2] as { content: string }).content = '[edited]'; return next(); } };
    const agent = agentWith([editInPlace]);
    const { state } = await agent.run('Note four things');
    await expect(fork(agent, state, { atStep: 1 })).rejects.toThrow(/the transcript of run .* after step 1 is no longer known/);
  });
});
