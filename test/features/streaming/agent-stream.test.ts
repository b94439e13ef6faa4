// agent.stream() (src/stream.ts): a run as an async iterable of its events plus a `result`
// promise. Breaking out of the loop cancels the run, which still ends cleanly, exactly once,
// and leaves nothing running behind it (a process of its own that exits by itself:
// agent-stream-processes.test.ts).
import { getEventListeners } from 'node:events';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent, defineTool, RunFailedError, type AgentEvent } from '../../../src/index.js';
import type { Hook } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { add, heldStream } from '../../support/core.js';
import { nextTurn } from '../../support/waits.js';

/** A tool that waits for its signal and records that it was cancelled. */
function waitingTool(seen: { aborted: boolean[] }) {
  return defineTool({
    name: 'wait',
    description: 'Waits until cancelled',
    input: z.object({}),
    execute: (_args, ctx) => new Promise<string>((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => {
        seen.aborted.push(ctx.signal.aborted);
        reject(ctx.signal.reason);
      }, { once: true });
    }),
  });
}

describe('agent.stream(): events and result', () => {
  it('yields run.start first and run.end last, with every event an onEvent listener gets, in the same order', async () => {
    const heard: AgentEvent[] = [];
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }, 'It is 3.']), tools: [add], onEvent: (e) => heard.push(e) });
    const stream = agent.stream('1 + 2?');
    const seen: AgentEvent[] = [];
    for await (const event of stream) seen.push(event);
    expect(seen).toEqual(heard);
    expect(seen[0].type).toBe('run.start');
    expect(seen.at(-1)).toMatchObject({ type: 'run.end', status: 'completed', stopReason: 'final' });
    expect(seen.map((e) => e.type)).toEqual(['run.start', 'model.start', 'model.done', 'tool.start', 'tool.done', 'model.start', 'text.delta', 'text.delta', 'text.delta', 'model.done', 'run.end']);
    const result = await stream.result;
    expect(result).toMatchObject({ status: 'completed', stopReason: 'final', text: 'It is 3.' });
    expect(seen.every((e) => e.runId === result.runId)).toBe(true);
  });

  it('runs to the end and keeps its events when nobody iterates; result alone is enough', async () => {
    const stream = createAgent({ model: mockModel(['Fine.']) }).stream('How are you?');
    expect((await stream.result).text).toBe('Fine.');
    const late: string[] = [];
    for await (const event of stream) late.push(event.type);
    expect(late[0]).toBe('run.start');
    expect(late.at(-1)).toBe('run.end');
  });

  it('also tells the per-call onEvent listener', async () => {
    const heard: string[] = [];
    const stream = createAgent({ model: mockModel(['Hi.']) }).stream('Hello', { onEvent: (e) => heard.push(e.type) });
    await stream.result;
    expect(heard).toContain('text.delta');
    expect(heard.at(-1)).toBe('run.end');
  });

  it('can be iterated once; a second loop is a TypeError saying to start another run', async () => {
    const stream = createAgent({ model: mockModel(['Hi.']) }).stream('Hello');
    for await (const _ of stream) { /* drain */ }
    expect(() => stream[Symbol.asyncIterator]()).toThrow(new TypeError('agent.stream(): a stream can be iterated once; start another run to iterate again'));
  });

  it('ends the loop with the run\'s RunFailedError, the same error result rejects with, after run.end', async () => {
    const stream = createAgent({ model: mockModel([{ error: 'the model is down' }]) }).stream('Hi');
    const types: string[] = [];
    let thrown: unknown;
    try {
      for await (const event of stream) types.push(event.type);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RunFailedError);
    expect((thrown as RunFailedError).code).toBe('model_error');
    await expect(stream.result).rejects.toBe(thrown);
    expect(types.at(-1)).toBe('run.end');
  });
});

describe('agent.stream(): breaking out early', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => void process.off('unhandledRejection', onUnhandled));

  it('cancels the run mid-reply: stop reason aborted, run.end and onEnd once each, before the loop exits', async () => {
    const ends = { runEnd: 0, onEnd: 0 };
    const countEnds: Hook = { name: 'count-ends', onEnd: () => void ends.onEnd++ };
    const model = heldStream(mockModel([Array.from({ length: 50 }, (_, i) => `w${i}`).join(' ')]), 2);
    const agent = createAgent({ model, hooks: [countEnds], onEvent: (e) => void (e.type === 'run.end' && ends.runEnd++) });
    const stream = agent.stream('Talk');
    let deltas = 0;
    for await (const event of stream) {
      if (event.type === 'text.delta' && ++deltas === 2) break;
    }
    // The run ended before `break` let the loop go on.
    expect(ends).toEqual({ runEnd: 1, onEnd: 1 });
    const result = await stream.result;
    expect(result).toMatchObject({ status: 'completed', stopReason: 'aborted' });
    // The half-streamed reply never entered the transcript.
    expect(result.messages.map((m) => m.role)).toEqual(['user']);
    await nextTurn();
    expect(ends).toEqual({ runEnd: 1, onEnd: 1 });
    expect(unhandled).toEqual([]);
  });

  it('aborts running tools with the reason "the stream consumer stopped reading", and every call gets a result', async () => {
    const seen = { aborted: [] as boolean[] };
    const reasons: unknown[] = [];
    const agent = createAgent({
      model: mockModel([{ text: 'Waiting on two things.', toolCalls: [{ name: 'wait' }, { name: 'wait' }] }, 'never']),
      tools: [waitingTool(seen)],
    }).use({ name: 'reason', tool: async (ctx, next) => { const out = await next(); reasons.push(ctx.signal.reason); return out; } });
    const stream = agent.stream('Go');
    for await (const event of stream) if (event.type === 'tool.start') break;
    const result = await stream.result;
    expect(result.stopReason).toBe('aborted');
    expect(seen.aborted).toEqual([true, true]);
    expect(reasons).toEqual(['the stream consumer stopped reading', 'the stream consumer stopped reading']);
    const results = result.messages.filter((m) => m.role === 'tool');
    expect(results).toHaveLength(2);
    for (const m of results) expect(m.metadata?.error).toMatchObject({ kind: 'aborted' });
    expect(unhandled).toEqual([]);
  });

  it('after the run ended, break changes nothing', async () => {
    const stream = createAgent({ model: mockModel(['One two three.']) }).stream('Count');
    await stream.result;
    for await (const event of stream) if (event.type === 'text.delta') break;
    expect((await stream.result).stopReason).toBe('final');
  });

  it('the caller\'s own signal cancels a stream too', async () => {
    const controller = new AbortController();
    const stream = createAgent({ model: heldStream(mockModel(['a b c d e f g h'])) }).stream('Go', { signal: controller.signal });
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'text.delta') controller.abort(new Error('user pressed stop'));
    }
    expect(types.filter((t) => t === 'text.delta')).toHaveLength(1);
    expect(types.at(-1)).toBe('run.end');
    expect((await stream.result).stopReason).toBe('aborted');
  });

  it('stops listening to the caller\'s signal once the run ended, and when the input is refused', async () => {
    const controller = new AbortController();
    const stream = createAgent({ model: mockModel(['Hi.']) }).stream('Hello', { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort').length).toBeGreaterThan(0);
    await stream.result;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);

    expect(() => createAgent({ model: mockModel([]) }).stream(42 as never, { signal: controller.signal })).toThrow(TypeError);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
