// How a segment ends: the run stack's terminal (the loop, or ctx.end) decides, and the segment
// writes that end into the state once, when it closes — whatever run layers do in between
// (call next() again, send the model back to repair an answer).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Middleware, type RunState } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { StateWriter } from '../../../src/core/state/state-writer.js';

/** Every end the writer is asked to write, as `[status, stopReason, output]`. */
function ends() {
  return vi.spyOn(StateWriter.prototype, 'end');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the end of a segment', () => {
  it('is written once, when the segment closes: the loop ending does not write it', async () => {
    const written = ends();
    const seen: string[] = [];
    const watch: Middleware = { name: 'watch', async run(ctx, next) { const result = await next(); seen.push(`${ctx.state.status}/${ctx.state.stopReason}`, `${result.state.status}`); return result; } };
    const result = await createAgent({ model: mockModel(['Done.']) }).use(watch).run('Go');
    expect(written.mock.calls).toEqual([['completed', 'final', 'Done.']]);
    // A run layer after next() reads the end in ctx.state; the state object itself is written when the segment is over.
    expect(seen).toEqual(['completed/final', 'running']);
    expect(result.state).toMatchObject({ status: 'completed', stopReason: 'final', output: 'Done.' });
  });

  it('is written once when a run layer calls next() again: the last end the loop decided', async () => {
    const written = ends();
    const again: Middleware = {
      name: 'again',
      async run(ctx, next) {
        await next();
        ctx.messages.push({ role: 'user', content: 'Once more.' });
        return next();
      },
    };
    const result = await createAgent({ model: mockModel(['First.', 'Second.']) }).use(again).run('Go');
    expect(result.text).toBe('Second.');
    expect(written.mock.calls).toEqual([['completed', 'final', 'Second.']]);
  });

  it('is written once through an output schema\'s repair turns, which run with the run still running', async () => {
    const written = ends();
    const during: unknown[] = [];
    const watch: Middleware = { name: 'watch', model: (ctx, next) => { during.push([ctx.state.status, ctx.state.stopReason, ctx.state.output]); return next(); } };
    const Weather = z.object({ city: z.string(), celsius: z.number() });
    const model = mockModel(['It is 4 degrees.', '{"city":"Oslo","celsius":"four"}', '{"city":"Oslo","celsius":4}']);
    const result = await createAgent({ model, output: Weather }).use(watch).run('Weather?');
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
    expect(during).toEqual([['running', undefined, undefined], ['running', undefined, undefined], ['running', undefined, undefined]]);
    expect(written.mock.calls).toEqual([['completed', 'final', { city: 'Oslo', celsius: 4 }]]);
  });

  it('is not written as completed before an output schema fails the run: the state says failed, once', async () => {
    const written = ends();
    const failed = vi.spyOn(StateWriter.prototype, 'fail');
    const error = await createAgent({ model: mockModel(['nope']), output: { schema: z.object({ n: z.number() }), repairs: 0 } }).run('x').catch((e: { state: RunState }) => e);
    expect(written).not.toHaveBeenCalled();
    expect(failed.mock.calls).toEqual([[expect.objectContaining({ code: 'invalid_output' })]]);
    expect(error.state).toMatchObject({ status: 'failed' });
    expect(error.state.stopReason).toBeUndefined();
  });

  it('is written once for a run layer that ends the run (ctx.end), and once for one that answers without the loop', async () => {
    const written = ends();
    const quota: Middleware = { name: 'quota', run: (ctx) => ctx.end({ refused: true }) };
    await createAgent({ model: mockModel([]) }).use(quota).run('x');
    expect(written.mock.calls).toEqual([['completed', 'hook_end', { refused: true }]]);
    written.mockClear();
    // No terminal decided an end: the result's status and stop reason are the segment's.
    const cached: Middleware = { name: 'cached', run: (ctx) => ({ runId: ctx.runId, sessionId: ctx.sessionId, status: 'completed', stopReason: 'stop:cached', text: 'cached', output: 'cached', messages: ctx.messages, usage: ctx.state.usage, pendingApprovals: [], state: ctx.state as RunState }) };
    const result = await createAgent({ model: mockModel([]) }).use(cached).run('x');
    expect(written.mock.calls).toEqual([['completed', 'stop:cached', undefined]]);
    expect(result.state).toMatchObject({ status: 'completed', stopReason: 'stop:cached' });
  });

  it('is written once per segment: a suspended one, then its resume', async () => {
    const written = ends();
    const rm = defineTool({ name: 'rm', description: 'Removes', input: z.object({ path: z.string() }), needsApproval: true, execute: () => 'removed' });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'rm', args: { path: '/tmp/x' } }] }, 'Cleaned.']), tools: [rm] });
    const suspended = await agent.run('Clean up');
    expect(written.mock.calls).toEqual([['suspended', 'approval', '']]);
    await agent.resume(suspended.state, { [suspended.pendingApprovals[0].toolCallId]: true });
    expect(written.mock.calls.map(([status, stopReason]) => [status, stopReason])).toEqual([['suspended', 'approval'], ['completed', 'final']]);
  });
});

/** What a run layer reads of how the segment ends, from ctx.state. */
function endIn(state: Readonly<RunState>) {
  return { status: state.status, stopReason: state.stopReason, output: state.output, error: state.error, approvals: state.pendingApprovals.length };
}

describe('ctx.state in a run layer after next(): the end the segment has, before it is written', () => {
  function deployAgent() {
    const deploy = defineTool({ name: 'deploy', description: 'Deploys', input: z.object({ service: z.string() }), needsApproval: true, execute: () => 'deployed' });
    return createAgent({ model: mockModel([{ toolCalls: [{ name: 'deploy', args: { service: 'api' } }, { name: 'deploy', args: { service: 'web' } }] }, 'Deployed.']), tools: [deploy] });
  }

  it('says completed, with the stop reason and output the state is then written with, to reads, `in`, keys and JSON alike', async () => {
    const seen: unknown[] = [];
    const watch: Middleware = {
      name: 'watch',
      async run(ctx, next) {
        seen.push(endIn(ctx.state));
        const result = await next();
        seen.push(endIn(ctx.state), 'stopReason' in ctx.state, Object.keys(ctx.state).includes('output'), JSON.parse(JSON.stringify(ctx.state)).status, { ...ctx.state }.status);
        return result;
      },
    };
    const result = await createAgent({ model: mockModel(['Done.']) }).use(watch).run('Go');
    expect(seen).toEqual([
      { status: 'running', stopReason: undefined, output: undefined, error: undefined, approvals: 0 },
      { status: 'completed', stopReason: 'final', output: 'Done.', error: undefined, approvals: 0 },
      true, true, 'completed', 'completed',
    ]);
    expect(endIn(result.state)).toEqual(seen[1]);
  });

  it('says suspended, with every pending approval', async () => {
    const seen: unknown[] = [];
    const agent = deployAgent().use({ name: 'watch', async run(ctx, next) { const result = await next(); seen.push(endIn(ctx.state)); return result; } });
    const paused = await agent.run('Deploy');
    expect(seen).toEqual([{ status: 'suspended', stopReason: 'approval', output: '', error: undefined, approvals: 2 }]);
    expect(endIn(paused.state)).toEqual(seen[0]);
  });

  it('says failed, with the error the state is then written with, in a layer that catches what next() threw', async () => {
    const seen: unknown[] = [];
    const outer: Middleware = { name: 'outer', async run(ctx, next) { try { return await next(); } catch (error) { seen.push(endIn(ctx.state)); throw error; } } };
    // The inner layer throws after its next() resolved: the run blames it, and so does the state the outer one reads.
    const inner: Middleware = { name: 'inner', async run(_ctx, next) { await next(); throw new Error('audit log full'); } };
    const error = await createAgent({ model: mockModel(['Done.']) }).use(outer).use(inner).run('Go').catch((e: { state: RunState }) => e);
    const failed = { code: 'hook_failed', message: 'inner failed: audit log full', layer: 'inner' };
    expect(seen).toEqual([{ status: 'failed', stopReason: undefined, output: undefined, error: failed, approvals: 0 }]);
    expect(endIn(error.state)).toEqual(seen[0]);
  });

  it('says how a layer inside answered without the loop, and the state is written so', async () => {
    const seen: unknown[] = [];
    const outer: Middleware = { name: 'outer', async run(ctx, next) { const result = await next(); seen.push(endIn(ctx.state)); return result; } };
    const cached: Middleware = { name: 'cached', run: (ctx) => ({ runId: ctx.runId, sessionId: ctx.sessionId, status: 'completed', stopReason: 'stop:cached', text: 'cached', output: 'cached', messages: ctx.messages, usage: ctx.state.usage, pendingApprovals: [], state: ctx.state as RunState }) };
    const result = await createAgent({ model: mockModel([]) }).use(outer).use(cached).run('x');
    expect(seen).toEqual([{ status: 'completed', stopReason: 'stop:cached', output: undefined, error: undefined, approvals: 0 }]);
    expect(endIn(result.state)).toEqual(seen[0]);
  });

  it('says running again inside a retry: the layers inside see no end until the loop decides anew', async () => {
    const seen: unknown[] = [];
    const retry: Middleware = {
      name: 'retry',
      async run(ctx, next) {
        try {
          return await next();
        } catch {
          seen.push(`retry after ${ctx.state.status}`);
          return next();
        }
      },
    };
    const inner: Middleware = { name: 'inner', async run(ctx, next) { seen.push(`inner before: ${ctx.state.status}`); const result = await next(); seen.push(`inner after: ${ctx.state.status}`); return result; } };
    const result = await createAgent({ model: mockModel([{ error: 'overloaded' }, 'Done.']) }).use(retry).use(inner).run('Go');
    expect(result.state.status).toBe('completed');
    expect(seen).toEqual(['inner before: running', 'retry after failed', 'inner before: running', 'inner after: completed']);
  });

  it('says running to the model layers of an output schema\'s repair turn, and the answer kept to the layers outside', async () => {
    const seen: unknown[] = [];
    const watch: Middleware = {
      name: 'watch',
      model: (ctx, next) => (seen.push(`model: ${ctx.state.status}`), next()),
      async run(ctx, next) { const result = await next(); seen.push(endIn(ctx.state)); return result; },
    };
    const model = mockModel(['{"n":"one"}', '{"n":1}']);
    const result = await createAgent({ model, output: z.object({ n: z.number() }) }).use(watch).run('A number?');
    expect(seen).toEqual(['model: running', 'model: running', { status: 'completed', stopReason: 'final', output: { n: 1 }, error: undefined, approvals: 0 }]);
    expect(endIn(result.state)).toEqual(seen[2]);
  });
});
