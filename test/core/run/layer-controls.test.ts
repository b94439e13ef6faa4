// What a layer may do to a run through its context beyond the transcript: end it with a stop
// reason of its own, send a call to another model, and count usage of its own.
import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type Middleware } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { add, provider, reply } from '../../support/core.js';

describe('ctx.end(output, reason)', () => {
  it('ends the run from a model layer with the reason given, keeping the output', async () => {
    const model = mockModel(['never asked']);
    const budget: Middleware = { name: 'budget', model: (ctx) => ctx.end({ spent: 2 }, 'limit:cost') };
    const result = await createAgent({ model, middleware: [budget] }).run('Hi');
    expect(result.stopReason).toBe('limit:cost');
    expect(result.output).toEqual({ spent: 2 });
    expect(result.state.stopReason).toBe('limit:cost');
  });

  it('replaces the loop\'s end when a run layer ends after next()', async () => {
    const guard: Middleware = { name: 'guard', run: async (ctx, next) => {
      const result = await next();
      return result.text.includes('secret') ? ctx.end({ verdict: 'leak' }, 'stop:guardrail') : result;
    } };
    const result = await createAgent({ model: mockModel(['the secret is 42']), middleware: [guard] }).run('Hi');
    expect(result.stopReason).toBe('stop:guardrail');
    expect(result.output).toEqual({ verdict: 'leak' });
    expect(result.state.stopReason).toBe('stop:guardrail');
  });

  it('is hook_end without a reason, and refuses a reason that passes for one of koagent\'s own', async () => {
    const plain = await createAgent({ model: mockModel(['x']), middleware: [{ name: 'end', model: (ctx) => ctx.end('done') }] }).run('Hi');
    expect(plain.stopReason).toBe('hook_end');
    const refused = createAgent({ model: mockModel(['x']), middleware: [{ name: 'end', model: (ctx) => ctx.end('done', 'final' as never) }] }).run('Hi');
    await expect(refused).rejects.toThrow(/reason must be 'hook_end', 'limit:<what>' or 'stop:<what>'/);
  });
});

describe('ctx.provider', () => {
  it('is the agent\'s model, and a layer may send the call to another one', async () => {
    const primary = provider(() => reply('from primary'));
    const backup = provider(() => reply('from backup'));
    const seen: unknown[] = [];
    const swap: Middleware = { name: 'swap', model: (ctx, next) => { seen.push(ctx.provider); ctx.provider = backup; return next(); } };
    const result = await createAgent({ model: primary, middleware: [swap] }).run('Hi');
    expect(seen).toEqual([primary]);
    expect(result.text).toBe('from backup');
    expect(primary.requests).toHaveLength(0);
    expect(backup.requests).toHaveLength(1);
  });

  it('refuses a provider that is not one, naming the field', async () => {
    const swap: Middleware = { name: 'swap', model: (ctx, next) => { ctx.provider = {} as never; return next(); } };
    await expect(createAgent({ model: mockModel(['x']), middleware: [swap] }).run('Hi')).rejects.toThrow(/ctx.provider must be a model provider/);
  });
});

describe('ctx.countUsage and cached tokens', () => {
  it('adds a counter of its own to the run\'s usage, kept through suspend, JSON and resume', async () => {
    const store = memoryStore();
    const cost: Middleware = { name: 'cost', model: async (ctx, next) => { const r = await next(); ctx.countUsage('cost', 0.5); return r; } };
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }, 'Done.']);
    const agent = createAgent({ model, tools: [add], middleware: [cost], permissions: [{ tool: 'add', decision: 'ask' }] });
    const first = await agent.run('Add', { store });
    expect(first.status).toBe('suspended');
    expect(first.usage.cost).toBe(0.5);
    const state = JSON.parse(JSON.stringify(first.state));
    const id = first.pendingApprovals[0].toolCallId;
    const done = await agent.resume(state, { [id]: { approved: true } });
    expect(done.usage.cost).toBe(1);
  });

  it('refuses koagent\'s own counters and amounts that are not finite', async () => {
    const tries: string[] = [];
    const bad: Middleware = { name: 'bad', model: async (ctx, next) => {
      for (const [name, amount] of [['inputTokens', 1], ['cost', Number.NaN]] as const) {
        try { ctx.countUsage(name, amount); } catch (error) { tries.push((error as Error).message); }
      }
      return next();
    } };
    await createAgent({ model: mockModel(['x']), middleware: [bad] }).run('Hi');
    expect(tries[0]).toMatch(/a counter of your own, not "inputTokens"/);
    expect(tries[1]).toMatch(/finite number/);
  });

  it('counts the cached input tokens a provider reports', async () => {
    const model = provider(() => ({ ...reply('hi'), usage: { inputTokens: 100, outputTokens: 5, cachedInputTokens: 80 } }));
    const result = await createAgent({ model }).run('Hi');
    expect(result.usage.cachedInputTokens).toBe(80);
    expect(result.usage.inputTokens).toBe(100);
  });

  it('sums the cache writes a provider reports over the run, and keeps them through JSON', async () => {
    const usages = [{ inputTokens: 100, outputTokens: 5, cacheWriteInputTokens: 90 }, { inputTokens: 120, outputTokens: 5, cachedInputTokens: 90, cacheWriteInputTokens: 20 }];
    const model = provider((_, call) => ({ ...(call === 1 ? reply('', [{ id: 't1', name: 'add', args: { a: 1, b: 2 } }]) : reply('3')), usage: usages[call - 1] }));
    const result = await createAgent({ model, tools: [add] }).run('Add');
    expect(result.usage).toMatchObject({ inputTokens: 220, cachedInputTokens: 90, cacheWriteInputTokens: 110 });
    expect(JSON.parse(JSON.stringify(result.state)).usage.cacheWriteInputTokens).toBe(110);
  });

  it('refuses a layer counting cache writes itself', async () => {
    let refused = '';
    const bad: Middleware = { name: 'bad', model: async (ctx, next) => {
      try { ctx.countUsage('cacheWriteInputTokens', 1); } catch (error) { refused = (error as Error).message; }
      return next();
    } };
    await createAgent({ model: mockModel(['x']), middleware: [bad] }).run('Hi');
    expect(refused).toMatch(/a counter of your own, not "cacheWriteInputTokens"/);
  });
});
