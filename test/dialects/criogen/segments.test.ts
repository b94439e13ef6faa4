import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, RunFailedError, type RunState } from '../../../src/index.js';
import type { Hook } from '../../../src/hooks.js';
import type { Logger } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';

async function failure(promise: Promise<unknown>): Promise<RunFailedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof RunFailedError)) throw new Error(`expected a RunFailedError, got ${String(error)}`);
  return error;
}

/** A hook that logs onStart and onEnd as `<name>.start` / `<name>.end(<outcome>)`. */
function bookends(name: string, log: string[], extra: Partial<Hook> = {}): Hook {
  return { name, onStart: () => void log.push(`${name}.start`), onEnd: (_ctx, outcome) => void log.push(`${name}.end(${outcome})`), ...extra };
}

function deployTool(ran: string[]) {
  return defineTool({ name: 'deploy', description: 'Deploy a service', input: z.object({ service: z.string() }), needsApproval: true, execute: ({ service }) => { ran.push(service); return `deployed ${service}`; } });
}

function countTool(ran: string[]) {
  return defineTool({ name: 'count', description: 'Count', execute: () => { ran.push('count'); return ran.length; } });
}

describe('criogen onStart and onEnd: once per segment', () => {
  it('runs each once for a run that completes, onEnd with completed, in reverse order', async () => {
    const log: string[] = [];
    const result = await createAgent({ model: mockModel(['Hi.']), hooks: [bookends('A', log), bookends('B', log)] }).run('Hello');
    expect(result.status).toBe('completed');
    expect(log).toEqual(['A.start', 'B.start', 'B.end(completed)', 'A.end(completed)']);
  });

  it('ends a segment that waits for approval with suspended, and starts again for the continuation', async () => {
    const log: string[] = [];
    const ran: string[] = [];
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ name: 'deploy', args: { service: 'api' } }] }, 'Deployed.']),
      tools: [deployTool(ran)],
      hooks: [bookends('A', log)],
    });
    const paused = await agent.run('Deploy the api');
    expect(log).toEqual(['A.start', 'A.end(suspended)']);
    const done = await agent.resume(paused.state, { [paused.pendingApprovals[0].toolCallId]: true });
    expect(done.text).toBe('Deployed.');
    expect(log).toEqual(['A.start', 'A.end(suspended)', 'A.start', 'A.end(completed)']);
    expect(ran).toEqual(['api']);
  });

  it('tells every hook failed after a hook_failed, the failing hook included, once each', async () => {
    const log: string[] = [];
    const broken = bookends('B', log, { afterModel: () => { throw new Error('classifier down'); } });
    const error = await failure(createAgent({ model: mockModel(['Hi.']), hooks: [bookends('A', log), broken, bookends('C', log)] }).run('Hello'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'B' });
    expect(log).toEqual(['A.start', 'B.start', 'C.start', 'C.end(failed)', 'B.end(failed)', 'A.end(failed)']);
  });

  it('"onEnd: Always, once per run segment": when a hook\'s onStart throws, every hook is told failed, in reverse order, the hooks after it too', async () => {
    const log: string[] = [];
    const broken = bookends('B', log, { onStart: () => { log.push('B.start'); throw new Error('no config'); } });
    const error = await failure(createAgent({ model: mockModel(['Hi.']), hooks: [bookends('A', log), broken, bookends('C', log)] }).run('Hello'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'B' });
    // C never started (B threw first), and still ends, before B and A.
    expect(log).toEqual(['A.start', 'B.start', 'C.end(failed)', 'B.end(failed)', 'A.end(failed)']);
  });

  it('"onEnd: Always, once per run segment": a native run layer that settles the segment between two hooks does not keep the inner hook from ending', async () => {
    const log: string[] = [];
    const agent = createAgent({ model: mockModel([]), hooks: [bookends('A', log)] })
      .use({ name: 'gate', run: (ctx) => ctx.end('closed') })
      .use(bookends('C', log));
    const result = await agent.run('Hello');
    expect(result).toMatchObject({ stopReason: 'hook_end', output: 'closed' });
    expect(log).toEqual(['A.start', 'C.end(completed)', 'A.end(completed)']);
  });

  it('tells failed when the model fails, and the run can be retried: a new segment, onStart again', async () => {
    const log: string[] = [];
    const agent = createAgent({ model: mockModel([{ error: 'overloaded' }, 'Hi.']), hooks: [bookends('A', log)] });
    const error = await failure(agent.run('Hello'));
    expect(error.code).toBe('model_error');
    expect(log).toEqual(['A.start', 'A.end(failed)']);
    const result = await agent.resume(error.state);
    expect(result.text).toBe('Hi.');
    expect(log).toEqual(['A.start', 'A.end(failed)', 'A.start', 'A.end(completed)']);
  });

  it('retries a run a hook failed from the last consistent point, without running a completed tool call again', async () => {
    const log: string[] = [];
    const ran: string[] = [];
    let beforeModelCalls = 0;
    const flaky = bookends('flaky', log, { beforeModel: () => { if (++beforeModelCalls === 2) throw new Error('rate store timeout'); } });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'count' }] }, 'Counted once.']), tools: [countTool(ran)], hooks: [flaky] });
    const error = await failure(agent.run('Count'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'flaky' });
    expect(ran).toEqual(['count']);
    const result = await agent.resume(error.state);
    expect(result.text).toBe('Counted once.');
    expect(ran).toEqual(['count']);
    expect(log).toEqual(['flaky.start', 'flaky.end(failed)', 'flaky.start', 'flaky.end(completed)']);
  });

  it('logs what onEnd throws and leaves the outcome as it was', async () => {
    const warnings: unknown[][] = [];
    const logger: Logger = { warn: (...args) => void warnings.push(args) };
    const thrown = new Error('metrics endpoint down');
    const noisy: Hook = { name: 'metrics', onEnd: () => { throw thrown; } };
    const result = await createAgent({ model: mockModel(['Hi.']), hooks: [noisy], logger }).run('Hello');
    expect(result).toMatchObject({ status: 'completed', text: 'Hi.' });
    expect(warnings).toEqual([[expect.stringMatching(/hook metrics threw in onEnd; the segment's outcome \(completed\) is unchanged/), thrown]]);
  });

  it('logs what onEnd throws after a failure and rejects with the original error', async () => {
    const warnings: unknown[][] = [];
    const thrown = new Error('model said no');
    const hooks: Hook[] = [{ name: 'noisy', onEnd: () => { throw new Error('also broken'); } }, { name: 'fragile', beforeModel: () => { throw thrown; } }];
    const error = await failure(createAgent({ model: mockModel(['Hi.']), hooks, logger: { warn: (...a) => void warnings.push(a) } }).run('Hello'));
    expect(error.cause).toBe(thrown);
    expect(warnings).toHaveLength(1);
  });

  it('gives onEnd the context at the end of the segment: model calls made and the state saved', async () => {
    const seen: unknown[] = [];
    const hook: Hook = { beforeModel: () => ({ state: 'saved' }), onEnd: (ctx) => void seen.push(ctx.modelCalls, ctx.hookState, ctx.messages.length) };
    await createAgent({ model: mockModel(['Hi.']), hooks: [hook] }).run('Hello');
    expect(seen).toEqual([1, 'saved', 2]);
  });
});

describe('criogen onStart: { end }', () => {
  it('ends the segment before any model call, with stop reason hook_end and the output given', async () => {
    const log: string[] = [];
    const model = mockModel([]);
    const closed: Hook = bookends('closed', log, { onStart: () => { log.push('closed.start'); return { end: true, output: 'We are closed today.' }; } });
    const result = await createAgent({ model, hooks: [bookends('A', log), closed, bookends('C', log)] }).run('Hello');
    expect(result).toMatchObject({ status: 'completed', stopReason: 'hook_end', output: 'We are closed today.' });
    expect(model.calls).toHaveLength(0);
    // The hook after it never started; its onEnd still runs, once, in reverse order.
    expect(log).toEqual(['A.start', 'closed.start', 'C.end(completed)', 'closed.end(completed)', 'A.end(completed)']);
  });

  it('saves the state it returns alongside { end }', async () => {
    const hook: Hook = { name: 'gate', onStart: () => ({ state: { refused: 1 }, end: true }) };
    const result = await createAgent({ model: mockModel([]), hooks: [hook] }).run('Hello');
    expect(result.state.hookState).toEqual({ gate: { refused: 1 } });
    expect(result.output).toBeUndefined();
  });
});

/** What onEnd reads of how the segment ended, from ctx.state. */
function endOf(state: Record<string, unknown>) {
  return { status: state.status, stopReason: state.stopReason, output: state.output, error: state.error, pendingApprovals: state.pendingApprovals };
}

/** The same fields of the state the segment left, once it is over. */
function writtenEnd(state: RunState) {
  return endOf(state as unknown as Record<string, unknown>);
}

describe('criogen onEnd: ctx.state is the state the segment ended with', () => {
  it('completed: the status, stop reason and output the run state keeps, as JSON too', async () => {
    const seen: unknown[] = [];
    const hook: Hook = { name: 'audit', onEnd: (ctx, outcome) => void seen.push(outcome, endOf(ctx.state), JSON.parse(JSON.stringify(ctx.state)).status) };
    const result = await createAgent({ model: mockModel(['Hi.']), hooks: [hook] }).run('Hello');
    expect(seen).toEqual(['completed', { status: 'completed', stopReason: 'final', output: 'Hi.', error: undefined, pendingApprovals: [] }, 'completed']);
    expect(seen[1]).toEqual(writtenEnd(result.state));
  });

  it('suspended: status suspended, stop reason approval, and every pending approval of the turn, in the model\'s order', async () => {
    const ran: string[] = [];
    const seen: unknown[] = [];
    const hook: Hook = { name: 'audit', onEnd: (ctx, outcome) => void seen.push({ outcome, ...endOf(ctx.state) }) };
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ name: 'deploy', args: { service: 'api' } }, { name: 'count' }, { name: 'deploy', args: { service: 'web' } }] }, 'Deployed both.']),
      tools: [deployTool(ran), countTool(ran)],
      hooks: [hook],
      toolConcurrency: 3,
    });
    const paused = await agent.run('Deploy api and web');
    expect(paused.pendingApprovals.map((p) => p.args)).toEqual([{ service: 'api' }, { service: 'web' }]);
    expect(seen).toEqual([{ outcome: 'suspended', ...writtenEnd(paused.state) }]);
    expect(seen[0]).toMatchObject({ status: 'suspended', stopReason: 'approval', pendingApprovals: paused.pendingApprovals });
    const done = await agent.resume(paused.state, Object.fromEntries(paused.pendingApprovals.map((p) => [p.toolCallId, true])));
    expect(seen[1]).toEqual({ outcome: 'completed', ...writtenEnd(done.state) });
    expect(seen[1]).toMatchObject({ status: 'completed', stopReason: 'final', output: 'Deployed both.', pendingApprovals: [] });
  });

  it('completed by { end } in onStart: stop reason hook_end and the output given, for the hooks outside and the ones it kept from starting', async () => {
    const seen: unknown[] = [];
    const watch = (name: string): Hook => ({ name, onEnd: (ctx) => void seen.push([name, ctx.state.status, ctx.state.stopReason, ctx.state.output]) });
    const closed: Hook = { name: 'closed', onStart: () => ({ end: true, output: { open: false } }), onEnd: (ctx) => void seen.push(['closed', ctx.state.status, ctx.state.stopReason, ctx.state.output]) };
    const result = await createAgent({ model: mockModel([]), hooks: [watch('outer'), closed, watch('never-started')] }).run('Hello');
    const end = ['completed', 'hook_end', { open: false }];
    expect(seen).toEqual([['never-started', ...end], ['closed', ...end], ['outer', ...end]]);
    expect([result.state.status, result.state.stopReason, result.state.output]).toEqual(end);
  });

  it('failed when the model fails: status failed with the error the run state keeps, no stop reason', async () => {
    const seen: unknown[] = [];
    const hook: Hook = { name: 'audit', onEnd: (ctx, outcome) => void seen.push({ outcome, ...endOf(ctx.state) }) };
    const error = await failure(createAgent({ model: mockModel([{ error: 'overloaded' }]), hooks: [hook] }).run('Hello'));
    expect(seen).toEqual([{ outcome: 'failed', ...writtenEnd(error.state) }]);
    expect(seen[0]).toMatchObject({ status: 'failed', stopReason: undefined, error: { code: 'model_error' } });
  });

  it('failed when a hook\'s onStart throws: the hook itself, the hooks outside it and those it kept from starting all see the failure it caused', async () => {
    const seen: unknown[] = [];
    const watch = (name: string, extra: Partial<Hook> = {}): Hook => ({ name, onEnd: (ctx, outcome) => void seen.push([name, outcome, ctx.state.status, ctx.state.error]), ...extra });
    const hooks = [watch('outer'), watch('thrower', { onStart: () => { throw new Error('no config'); } }), watch('never-started')];
    const error = await failure(createAgent({ model: mockModel(['Hi.']), hooks }).run('Hello'));
    const failed = { code: 'hook_failed', message: 'thrower failed: no config', layer: 'thrower' };
    expect(error.state.error).toEqual(failed);
    expect(seen).toEqual([['never-started', 'failed', 'failed', failed], ['thrower', 'failed', 'failed', failed], ['outer', 'failed', 'failed', failed]]);
  });
});
