// criogen hook state ({ state }) and ctx.state, in one process. (Hook state across a resume in
// another process: state-processes.test.ts.)
import { describe, expect, it } from 'vitest';
import { createAgent, RunFailedError, type RunState } from '../../../src/index.js';
import type { Hook, HookContext } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { buildDeployAgent, type Sightings } from '../../fixtures/criogen-agent.js';

async function failure(promise: Promise<unknown>): Promise<RunFailedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof RunFailedError)) throw new Error(`expected a RunFailedError, got ${String(error)}`);
  return error;
}

describe('criogen hook state: { state }', () => {
  it('keeps what a method returns as { state } in the run state under the hook name, and gives it back as ctx.hookState', async () => {
    const seen: unknown[] = [];
    const counter: Hook = {
      name: 'counter',
      onStart: () => ({ state: { calls: 0 } }),
      beforeModel(ctx) {
        seen.push(ctx.hookState);
        return { state: { calls: (ctx.hookState as { calls: number }).calls + 1 } };
      },
      afterModel(ctx) {
        seen.push(ctx.hookState);
      },
    };
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [counter] });
    const result = await agent.run('Hello');
    expect(seen).toEqual([{ calls: 0 }, { calls: 1 }]);
    expect(result.state.hookState).toEqual({ counter: { calls: 1 } });
  });

  it('keeps the state of two instances of one class apart, as ClassName and ClassName#2', async () => {
    class RateLimit implements Hook {
      constructor(private readonly step: number) {}
      beforeModel(ctx: HookContext) {
        return { state: ((ctx.hookState as number | undefined) ?? 0) + this.step };
      }
    }
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [new RateLimit(1), new RateLimit(100)] });
    const result = await agent.run('Hello');
    expect(result.state.hookState).toEqual({ RateLimit: 1, 'RateLimit#2': 100 });
  });

  it('saves a copy, so changing the returned object afterwards does not change the saved state', async () => {
    const mine = { tags: ['a'] };
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [{ name: 'tagger', onStart: () => ({ state: mine }) }] });
    const result = await agent.run('Hello');
    mine.tags.push('b');
    expect(result.state.hookState.tagger).toEqual({ tags: ['a'] });
  });

  it.each([
    ['a Date', { at: new Date(0) }, /state\.at is a Date; .*toISOString/],
    ['a Map', { seen: new Map() }, /state\.seen is a Map; .*Object\.fromEntries/],
    ['a function', { fn: () => 1 }, /state\.fn is a function/],
    ['a class instance', { client: new (class Client {})() }, /state\.client is an instance of Client/],
    ['NaN', { ratio: Number.NaN }, /state\.ratio is NaN/],
    ['undefined in an array', { list: [1, undefined] }, /state\.list\[1\] is undefined/],
  ])('refuses state that is not plain JSON (%s), naming where it is and the fix', async (_label, state, pattern) => {
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [{ name: 'keeper', onStart: () => ({ state }) }] });
    const error = await failure(agent.run('Hello'));
    expect(error.code).toBe('hook_failed');
    expect(error.layer).toBe('keeper');
    expect(error.message).toMatch(/keeper\.onStart\(\) returned \{ state \}/);
    expect(error.message).toMatch(pattern);
  });

  it('refuses a state that contains itself (a cycle)', async () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [{ name: 'keeper', onStart: () => ({ state: loop }) }] });
    const error = await failure(agent.run('Hello'));
    expect(error.message).toMatch(/state\.self is a reference back to an object that contains it/);
  });

  it('keeps hook state across a suspend and a resume in the same process', async () => {
    const seen: Sightings = {};
    const agent = buildDeployAgent([{ toolCalls: [{ name: 'deploy', args: { service: 'api' } }] }, 'Deployed.'], seen);
    const paused = await agent.run('Deploy the api');
    expect(paused.status).toBe('suspended');
    const done = await agent.resume(paused.state, { [paused.pendingApprovals[0].toolCallId]: true });
    expect(done.text).toBe('Deployed.');
    expect(seen.Tally).toEqual([null, { total: 1 }]);
    expect(seen['Tally#2']).toEqual([null, { total: 10 }]);
    expect(done.state.hookState).toEqual({ Tally: { total: 2 }, 'Tally#2': { total: 20 }, segments: [1, 2] });
  });
});

describe('criogen hook context: ctx.state', () => {
  it('is a live view of the whole run state, the same object at every call of a segment', async () => {
    const views: unknown[] = [];
    const watcher: Hook = {
      name: 'watcher',
      beforeModel(ctx) {
        views.push(ctx.state);
        expect(ctx.state.runId).toBe(ctx.runId);
        expect(ctx.state.usage.modelCalls).toBe(ctx.modelCalls);
        expect(ctx.state.messages.length).toBe(ctx.messages.length);
      },
      afterModel(ctx) {
        views.push(ctx.state);
        expect(ctx.state.usage.modelCalls).toBe(1);
        expect(ctx.state.messages.at(-1)?.content).toBe('Hi.');
      },
    };
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [watcher] });
    await agent.run('Hello');
    expect(views).toHaveLength(2);
    expect(views[0]).toBe(views[1]);
  });

  it.each([
    ['setting a field', (ctx: HookContext) => { (ctx.state as Record<string, unknown>).status = 'completed'; }, /ctx\.state\.status cannot be changed/],
    ['setting a nested field', (ctx: HookContext) => { (ctx.state.usage as { modelCalls: number }).modelCalls = 0; }, /ctx\.state\.usage\.modelCalls cannot be changed/],
    ['pushing to the transcript through it', (ctx: HookContext) => { (ctx.state.messages as unknown[]).push({ role: 'user', content: 'x' }); }, /ctx\.state\.messages\.\d+ cannot be changed/],
    ['deleting a field', (ctx: HookContext) => { delete (ctx.state as Record<string, unknown>).output; }, /ctx\.state\.output cannot be changed/],
  ])('refuses %s with a TypeError saying to return { state } instead', async (_label, write, pattern) => {
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [{ name: 'writer', onStart: write }] });
    const error = await failure(agent.run('Hello'));
    expect(error.code).toBe('hook_failed');
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(error.message).toMatch(pattern);
    expect(error.message).toMatch(/return \{ state: value \}/);
  });

  it('can be read as JSON and spread, giving views of the live values', async () => {
    let copy: Record<string, unknown> = {};
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [{ name: 'reader', onStart: (ctx) => { copy = JSON.parse(JSON.stringify(ctx.state)); } }] });
    const result = await agent.run('Hello');
    expect(copy.runId).toBe(result.runId);
    expect(copy.messages).toEqual([{ role: 'user', content: 'Hello' }]);
  });
});
