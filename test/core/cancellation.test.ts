// Cancellation: the `signal` option of run, send, stream and resume aborts the model call in
// flight and the running tools (their ctx.signal). The segment then ends with stop reason
// `aborted` and a state that can be read and continued: every tool call has a result.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type GenerateOptions, type Message, type RunResult } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { heldStream } from '../support/core.js';

/** A tool that runs until its signal aborts, recording that it saw the abort. */
function untilAborted(log: { started: number; aborted: number }, onStart?: () => void) {
  return defineTool({
    name: 'long_job',
    description: 'Runs until cancelled',
    input: z.object({}),
    execute: (_args, ctx) => new Promise<string>((_resolve, reject) => {
      log.started++;
      ctx.signal.addEventListener('abort', () => {
        log.aborted++;
        reject(ctx.signal.reason);
      }, { once: true });
      onStart?.();
    }),
  });
}

/** Every tool call of the transcript has exactly one result after it. */
function everyCallAnswered(messages: readonly Message[]): void {
  const asked = messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls ?? [] : [])).map((c) => c.id);
  const answered = messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
  expect(answered.sort()).toEqual(asked.sort());
}

/** A model that waits on its request's signal, recording whether the abort reached it. */
function hangingModel(seen: { aborted: boolean }) {
  return {
    name: 'hanging',
    generate: (request: GenerateOptions) => new Promise<never>((_resolve, reject) => {
      request.signal!.addEventListener('abort', () => {
        seen.aborted = true;
        reject(request.signal!.reason);
      }, { once: true });
    }),
  };
}

describe('signal on run()', () => {
  it('aborts the model call in flight: stop reason aborted, no reply in the transcript', async () => {
    const seen = { aborted: false };
    const controller = new AbortController();
    const agent = createAgent({ model: hangingModel(seen) }).use({ name: 'abort-when-sent', model: (_ctx, next) => { const reply = next(); controller.abort(new Error('stop')); return reply; } });
    const result = await agent.run('Hi', { signal: controller.signal });
    expect(seen.aborted).toBe(true);
    expect(result).toMatchObject({ status: 'completed', stopReason: 'aborted' });
    expect(result.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('keeps no reply that a provider ignoring the signal sends after the run was aborted', async () => {
    const controller = new AbortController();
    const deaf = { name: 'deaf', generate: async () => ({ message: { role: 'assistant' as const, content: 'Too late' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' as const }) };
    const agent = createAgent({ model: deaf }).use({ name: 'abort-when-sent', model: (_ctx, next) => { const reply = next(); controller.abort(new Error('stop')); return reply; } });
    const result = await agent.run('Hi', { signal: controller.signal });
    expect(result).toMatchObject({ status: 'completed', stopReason: 'aborted' });
    expect(result.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('aborts every running tool of the turn and settles each call as aborted; the model is not called again', async () => {
    const log = { started: 0, aborted: 0 };
    const controller = new AbortController();
    const model = mockModel([{ toolCalls: [{ name: 'long_job' }, { name: 'long_job' }] }, 'never']);
    const agent = createAgent({ model, tools: [untilAborted(log, () => log.started === 2 && controller.abort('enough'))] });
    const result = await agent.run('Go', { signal: controller.signal });
    expect(log).toEqual({ started: 2, aborted: 2 });
    expect(result.stopReason).toBe('aborted');
    expect(model.calls).toHaveLength(1);
    everyCallAnswered(result.messages);
    for (const m of result.messages.filter((x) => x.role === 'tool')) expect(m.metadata?.error).toMatchObject({ kind: 'aborted' });
  });

  it('settles calls that had not started yet as aborted, without running them', async () => {
    const log = { started: 0, aborted: 0 };
    const controller = new AbortController();
    const model = mockModel([{ toolCalls: [{ name: 'long_job' }, { name: 'long_job' }, { name: 'long_job' }] }]);
    const agent = createAgent({ model, tools: [untilAborted(log, () => controller.abort('enough'))], toolConcurrency: 1 });
    const result = await agent.run('Go', { signal: controller.signal });
    expect(log).toEqual({ started: 1, aborted: 1 });
    everyCallAnswered(result.messages);
    const errors = result.messages.filter((m) => m.role === 'tool').map((m) => (m.metadata?.error as { message: string }).message);
    expect(errors.slice(1)).toEqual(['The run was cancelled before this call ran', 'The run was cancelled before this call ran']);
  });

  it('with a signal aborted before the run, calls no model at all', async () => {
    const model = mockModel(['never']);
    const result = await createAgent({ model }).run('Hi', { signal: AbortSignal.abort('too late') });
    expect(result.stopReason).toBe('aborted');
    expect(model.calls).toHaveLength(0);
  });
});

describe('signal on send()', () => {
  it('aborts a send, and the session goes on from a consistent transcript', async () => {
    const log = { started: 0, aborted: 0 };
    const controller = new AbortController();
    const model = mockModel([{ toolCalls: [{ name: 'long_job' }] }, 'Sorry, that took too long. Hello!']);
    const agent = createAgent({ model, tools: [untilAborted(log, () => controller.abort('user left'))] });
    const first = await agent.send('Start the job', { signal: controller.signal });
    expect(first.stopReason).toBe('aborted');
    everyCallAnswered(first.messages);
    const second = await agent.send('Hello again');
    expect(second.text).toBe('Sorry, that took too long. Hello!');
    // The model was sent the aborted call with its result, then the new message.
    expect(model.calls[1].messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
  });
});

describe('signal on stream()', () => {
  it('aborts the streamed model call; the stream ends with run.end and the result says aborted', async () => {
    const controller = new AbortController();
    const stream = createAgent({ model: heldStream(mockModel(['one two three four five six'])) }).stream('Count', { signal: controller.signal });
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'text.delta') controller.abort('stop');
    }
    const result: RunResult = await stream.result;
    expect(result.stopReason).toBe('aborted');
    expect(types.at(-1)).toBe('run.end');
    expect(result.messages.map((m) => m.role)).toEqual(['user']);
  });
});

describe('signal on resume()', () => {
  it('aborts the resumed segment: an approved call that had not run yet settles as aborted', async () => {
    const runs: string[] = [];
    const deploy = defineTool({ name: 'deploy', description: 'Deploys', input: z.object({}), needsApproval: true, execute: () => { runs.push('deploy'); return 'deployed'; } });
    const model = mockModel([{ toolCalls: [{ name: 'deploy' }] }, 'never']);
    const agent = createAgent({ model, tools: [deploy] });
    const suspended = await agent.run('Deploy');
    expect(suspended.status).toBe('suspended');
    const result = await agent.resume(suspended.state, { [suspended.pendingApprovals[0].toolCallId]: true }, { signal: AbortSignal.abort('cancelled by the operator') });
    expect(result.stopReason).toBe('aborted');
    expect(runs).toEqual([]);
    everyCallAnswered(result.messages);
  });

  it('aborts a resumed segment while its approved tool runs', async () => {
    const log = { started: 0, aborted: 0 };
    const controller = new AbortController();
    const job = defineTool({
      name: 'long_job', description: 'Runs until cancelled', input: z.object({}), needsApproval: true,
      execute: untilAborted(log, () => controller.abort('operator stop')).execute,
    });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'long_job' }] }, 'never']), tools: [job] });
    const suspended = await agent.run('Go');
    const result = await agent.resume(suspended.state, { [suspended.pendingApprovals[0].toolCallId]: true }, { signal: controller.signal });
    expect(log).toEqual({ started: 1, aborted: 1 });
    expect(result.stopReason).toBe('aborted');
    everyCallAnswered(result.messages);
  });
});
