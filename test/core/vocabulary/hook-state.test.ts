// hookState(name, initial): a layer's own state in a run, kept with the run state, read as a
// copy made once per change, surviving suspend and resume.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Middleware } from '../../../src/index.js';
import { hookState } from '../../../src/api.js';
import { mockModel } from '../../../src/testing/index.js';

const lookup = defineTool({ name: 'lookup', description: 'Look up', input: z.object({ q: z.string() }), execute: ({ q }) => q });
const calls = (n: number) => Array.from({ length: n }, (_, i) => ({ toolCalls: [{ name: 'lookup', args: { q: `q${i}` } }] }));

describe('hookState', () => {
  it('starts each run at initial(), keeps what a layer sets in state.hookState, and reads its own copy until it changes', async () => {
    const counter = hookState('counter', () => ({ calls: 0 }));
    const reads: unknown[] = [];
    const counting: Middleware = {
      name: 'counting',
      tool(ctx, next) {
        const first = counter.get(ctx);
        reads.push(first === counter.get(ctx));
        counter.set(ctx, { calls: first.calls + 1 });
        return next();
      },
    };
    const agent = createAgent({ model: mockModel([...calls(3), 'Done.']), tools: [lookup] }).use(counting);
    const result = await agent.run('Go');
    expect(result.state.hookState.counter).toEqual({ calls: 3 });
    // The same copy twice in a row: no new copy per read.
    expect(reads).toEqual([true, true, true]);
    const again = await createAgent({ model: mockModel([...calls(1), 'Done.']), tools: [lookup] }).use(counting).run('Go');
    expect(again.state.hookState.counter).toEqual({ calls: 1 });
  });

  it('survives suspend, JSON and resume in a new agent', async () => {
    const counter = hookState('counter', () => ({ calls: 0 }));
    const counting: Middleware = { name: 'counting', tool: (ctx, next) => { counter.set(ctx, { calls: counter.get(ctx).calls + 1 }); return next(); } };
    const pay = defineTool({ name: 'pay', description: 'Pay', input: z.object({}), needsApproval: true, execute: () => 'paid' });
    const script = [{ toolCalls: [{ name: 'lookup', args: { q: 'a' } }] }, { toolCalls: [{ name: 'pay', args: {} }] }, 'Done.'];
    const first = await createAgent({ model: mockModel(script, { resumable: true }), tools: [lookup, pay] }).use(counting).run('Go');
    expect(first.status).toBe('suspended');
    const state = JSON.parse(JSON.stringify(first.state));
    const done = await createAgent({ model: mockModel(script, { resumable: true }), tools: [lookup, pay] }).use(counting).resume(state, { [state.pendingApprovals[0].toolCallId]: true });
    expect(done.status).toBe('completed');
    // lookup, pay asking, then pay again after the approval.
    expect(done.state.hookState.counter).toEqual({ calls: 3 });
  });

  it('refuses a name that is not one, and an initial that is not a function', () => {
    expect(() => hookState('', () => 0)).toThrow('hookState(name, initial): name must be a non-empty string');
    expect(() => hookState('x', 0 as unknown as () => number)).toThrow('hookState("x", initial): initial must be a function');
  });
});
