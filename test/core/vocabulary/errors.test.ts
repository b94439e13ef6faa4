// DESIGN.md §1 "Errors" and "Retry" on each stack: exceptions propagate outward, an outer layer
// can catch them, concurrent re-entry of next() is a bug named after its layer, and whatever
// leaves the outermost layer fails the run with a RunFailedError that says who threw what.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, RunFailedError, type Middleware } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { add, gate, provider, reply, runFailure, toolMessages } from '../../support/core.js';

const toolTurn = () => mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }, 'Done.']);
type Point = 'run' | 'model' | 'tool';
const POINTS: Point[] = ['run', 'model', 'tool'];

/** An agent with an outer pass-through layer and an inner layer doing `inner` on one hook point. */
function agentWith(point: Point, inner: (next: () => Promise<unknown>) => Promise<unknown>) {
  const outer = { name: 'outer', [point]: (_ctx: unknown, next: () => Promise<unknown>) => next() } as Middleware;
  const thrower = { name: 'inner', [point]: (_ctx: unknown, next: () => Promise<unknown>) => inner(next) } as Middleware;
  return createAgent({ model: toolTurn(), tools: [add] }).use(outer).use(thrower);
}

describe('an exception leaving the outermost layer fails the run', () => {
  for (const point of POINTS) {
    it(`${point} stack: RunFailedError hook_failed, blaming the layer that threw (not the outer one), with the thrown value as cause and the failed state`, async () => {
      const thrown = new Error(`${point} broke`);
      const error = await runFailure(agentWith(point, async () => { throw thrown; }).run('Hi'), 'hook_failed');
      expect(error).toBeInstanceOf(RunFailedError);
      expect(error.layer).toBe('inner');
      expect(error.cause).toBe(thrown);
      expect(error.message).toContain(`${point} broke`);
      expect(error.state.status).toBe('failed');
      expect(error.state.error).toEqual({ code: 'hook_failed', message: error.message, layer: 'inner' });
      expect(JSON.parse(JSON.stringify(error.state))).toEqual(error.state);
    });

    it(`${point} stack: a thrown string is the cause exactly as thrown`, async () => {
      const error = await runFailure(agentWith(point, async () => { throw 'plain string'; }).run('Hi'), 'hook_failed');
      expect(error.cause).toBe('plain string');
      expect(error.layer).toBe('inner');
    });

    it(`${point} stack: even a thrown undefined is the cause exactly as thrown`, async () => {
      const error = await runFailure(agentWith(point, async () => { throw undefined; }).run('Hi'), 'hook_failed');
      expect('cause' in error).toBe(true);
      expect(error.cause).toBeUndefined();
      expect(error.layer).toBe('inner');
    });

    it(`${point} stack: an error thrown after next() returned is blamed on the layer too`, async () => {
      const error = await runFailure(agentWith(point, async (next) => { await next(); throw new RangeError('after'); }).run('Hi'), 'hook_failed');
      expect(error.layer).toBe('inner');
      expect(error.cause).toBeInstanceOf(RangeError);
    });

    it(`${point} stack: a layer that returns nothing fails the run, naming it`, async () => {
      const error = await runFailure(agentWith(point, async (next) => { await next(); return undefined; }).run('Hi'), 'hook_failed');
      expect(error.layer).toBe('inner');
      expect(error.message).toMatch(/inner returned nothing/);
    });

    it(`${point} stack: a layer that returns something that is not an outcome fails the run, naming it and what it returned`, async () => {
      const error = await runFailure(agentWith(point, async () => ({ nonsense: true })).run('Hi'), 'hook_failed');
      expect(error.layer).toBe('inner');
      expect(error.message).toContain(`inner returned {"nonsense":true} from ${point}()`);
    });

    it(`${point} stack: calling next() while the previous next() is pending fails the run with hook_failed naming the layer`, async () => {
      const agent = agentWith(point, async (next) => { const [first] = await Promise.all([next(), next()]); return first; });
      const error = await runFailure(agent.run('Hi'), 'hook_failed');
      expect(error.layer).toBe('inner');
      expect(error.message).toMatch(/inner called next\(\) again while its previous next\(\) was still pending/);
    });
  }

  it('blames the layer that threw even when an outer layer caught and rethrew it', async () => {
    const agent = createAgent({ model: toolTurn(), tools: [add] })
      .use({ name: 'rethrower', async tool(_ctx, next) { try { return await next(); } catch (e) { throw e; } } })
      .use({ name: 'origin', async tool() { throw new Error('deep'); } });
    const error = await runFailure(agent.run('Hi'), 'hook_failed');
    expect(error.layer).toBe('origin');
  });

  it('blames an outer layer that throws a new error of its own after catching', async () => {
    const agent = createAgent({ model: toolTurn(), tools: [add] })
      .use({ name: 'wrapper', async model(_ctx, next) { try { return await next(); } catch (e) { throw new Error('wrapped', { cause: e }); } } })
      .use({ name: 'origin', async model() { throw new Error('deep'); } });
    const error = await runFailure(agent.run('Hi'), 'hook_failed');
    expect(error.layer).toBe('wrapper');
    expect((error.cause as Error).message).toBe('wrapped');
  });
});

/** Let an orphaned call or loop run to its end. */
const drain = async () => { for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r)); };

describe('work an orphaned next() left running does not change the run', () => {
  it('a model layer that re-entered next() concurrently: the orphaned provider reply stays out of the failed state', async () => {
    const release = gate();
    const slow = provider(async () => { await release.promise; return reply('late reply'); });
    const agent = createAgent({ model: slow }).use({ name: 'eager', async model(_ctx, next) { const [r] = await Promise.all([next(), next()]); return r; } });
    const error = await runFailure(agent.run('Hi'), 'hook_failed');
    release.open();
    await drain();
    expect(error.state.messages.map((m) => m.role)).toEqual(['user']);
  });

  it('a run layer that re-entered next() concurrently: the orphaned loop calls no model and changes nothing', async () => {
    const release = gate();
    const slow = provider(async (_req, n) => { await release.promise; return n === 1 ? reply('', [{ id: 'c1', name: 'add', args: { a: 1, b: 1 } }]) : reply('late'); });
    const agent = createAgent({ model: slow, tools: [add] }).use({ name: 'eager', async run(_ctx, next) { const [r] = await Promise.all([next(), next()]); return r; } });
    const error = await runFailure(agent.run('Hi'), 'hook_failed');
    const before = structuredClone(error.state);
    release.open();
    await drain();
    expect(slow.requests).toHaveLength(1);
    expect(error.state).toEqual(before);
  });

  it('a run layer that gave up on next(): a reply a model layer returns afterwards stays out of the failed state', async () => {
    const release = gate();
    const agent = createAgent({ model: mockModel([]) })
      .use({ name: 'impatient', async run(_ctx, next) { next().catch(() => undefined); throw new Error('gave up'); } })
      .use({ name: 'slow-cache', async model() { await release.promise; return reply('cached, but too late'); } });
    const error = await runFailure(agent.run('Hi'), 'hook_failed');
    expect(error.layer).toBe('impatient');
    release.open();
    await drain();
    expect(error.state.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(error.state.status).toBe('failed');
  });

  it('a model layer that did not wait for next(): the late provider reply neither replaces its reply nor counts', async () => {
    const release = gate();
    const slow = provider(async () => { await release.promise; return reply('late provider reply'); });
    const agent = createAgent({ model: slow }).use({ name: 'impatient', async model(_ctx, next) { next().catch(() => undefined); return reply('canned'); } });
    const result = await agent.run('Hi');
    const before = structuredClone(result.state);
    release.open();
    await drain();
    expect(slow.requests).toHaveLength(1);
    expect(result.state).toEqual(before);
    expect(result.text).toBe('canned');
  });
});

describe('errors propagate outward and try/catch around next() works', () => {
  it('run stack: a layer catches the loop\'s failure and returns a result of its own', async () => {
    const model = mockModel([{ error: 'provider down' }]);
    const agent = createAgent({ model }).use({ name: 'fallback', async run(ctx, next) {
      try {
        return await next();
      } catch (error) {
        const result = { runId: ctx.runId, sessionId: ctx.sessionId, status: 'completed' as const, stopReason: 'final' as const, text: `sorry: ${(error as Error).message}`, output: null, messages: ctx.messages, usage: ctx.state.usage, pendingApprovals: [], state: ctx.state as never };
        return result;
      }
    } });
    const result = await agent.run('Hi');
    expect(result.text).toBe('sorry: provider down');
  });

  it('model stack: a layer turns a model error into a fallback reply, and the run completes with it', async () => {
    const model = mockModel([{ error: new Error('rate limited') }]);
    const seen: unknown[] = [];
    const agent = createAgent({ model }).use({ name: 'fallback', async model(_ctx, next) {
      try {
        return await next();
      } catch (error) {
        seen.push(error);
        return reply('The model is busy; try again later.');
      }
    } });
    const result = await agent.run('Hi');
    expect((seen[0] as Error).message).toBe('rate limited');
    expect(result.stopReason).toBe('final');
    expect(result.text).toBe('The model is busy; try again later.');
    expect(result.messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
    // The failed attempt was a call made: it counts, with no tokens.
    expect(result.usage).toMatchObject({ modelCalls: 1, totalTokens: 0 });
  });

  it('tool stack: a layer catches an inner layer\'s throw and settles the call; the run goes on', async () => {
    const agent = createAgent({ model: toolTurn(), tools: [add] })
      .use({ name: 'safety-net', async tool(_ctx, next) { try { return await next(); } catch (e) { return { result: `recovered from ${(e as Error).message}` }; } } })
      .use({ name: 'flaky', async tool() { throw new Error('flaky layer'); } });
    const result = await agent.run('1+2?');
    expect(result.text).toBe('Done.');
    expect(toolMessages(result.messages)[0].content).toBe('recovered from flaky layer');
  });

  it('model stack: a retry layer that calls next() again after a failure gets the second reply', async () => {
    const model = mockModel([{ error: 'transient' }, 'fine now']);
    const agent = createAgent({ model }).use({ name: 'retry', async model(_ctx, next) { try { return await next(); } catch { return next(); } } });
    const result = await agent.run('Hi');
    expect(result.text).toBe('fine now');
    expect(model.calls).toHaveLength(2);
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'fine now' }]);
  });
});

describe('a model layer\'s replacement reply is checked whole, and the layer named', () => {
  it.each([
    ['toolCalls that are no list', { toolCalls: 'oops' }, /toolCalls that are not a list/],
    ['content that is a number', { content: 42 }, /a message whose content is neither text nor a list of parts/],
    ['a tool call without a name', { toolCalls: [{ id: 'x', args: {} }] }, /toolCalls that are not a list/],
  ])('%s fails the run with hook_failed naming the layer, not internal', async (_what, change, message) => {
    const agent = createAgent({ model: mockModel(['real']) }).use({ name: 'rewriter', async model(_ctx, next) { const r = await next(); return { ...r, message: { ...r.message, ...change } as never }; } });
    const error = await runFailure(agent.run('Hi'), 'hook_failed');
    expect(error.layer).toBe('rewriter');
    expect(error.message).toMatch(message);
  });

  it('so result.text is always a string', async () => {
    const agent = createAgent({ model: mockModel(['real']) }).use({ name: 'rewriter', async model(_ctx, next) { const r = await next(); return { ...r, message: { role: 'assistant', content: 'replaced' } }; } });
    expect((await agent.run('Hi')).text).toBe('replaced');
  });
});

describe('failures from the model and the tools', () => {
  it('a provider that throws fails the run with model_error and the provider\'s error as cause', async () => {
    const boom = new Error('connection reset');
    const error = await runFailure(createAgent({ model: { name: 'flaky-api', generate: async () => { throw boom; } } }).run('Hi'), 'model_error');
    expect(error.cause).toBe(boom);
    expect(error.message).toMatch(/flaky-api/);
    expect(error.state.messages.at(-1)).toEqual({ role: 'user', content: 'Hi' });
  });

  it('a provider that throws a string fails the run with model_error and that string as cause', async () => {
    const error = await runFailure(createAgent({ model: { name: 'stringly', generate: async () => { throw 'quota exceeded'; } } }).run('Hi'), 'model_error');
    expect(error.cause).toBe('quota exceeded');
    expect(error.message).toMatch(/stringly/);
  });

  it('onToolException: "fail" fails the run with tool_exception and the tool\'s error as cause', async () => {
    const thrown = new Error('disk full');
    const broken = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: () => { throw thrown; } });
    const error = await runFailure(createAgent({ model: toolTurn(), tools: [broken], onToolException: 'fail' }).run('Hi'), 'tool_exception');
    expect(error.cause).toBe(thrown);
    expect(error.message).toMatch(/disk full/);
  });
});
