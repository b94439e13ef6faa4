// The contexts koagent hands to layers: what they show of themselves, and what they read
// through to the segment they belong to.
import { describe, expect, it } from 'vitest';
import { createAgent, type Middleware } from '../../../src/index.js';
import type { BaseContext } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';
import { segmentOf } from '../../../src/core/run/base-context.js';
import { Segment } from '../../../src/core/run/segment.js';
import { add } from '../../support/core.js';

/** The run, model and tool contexts of one run with one tool call. */
async function contextsOfOneRun(): Promise<{ contexts: Record<'run' | 'model' | 'tool', BaseContext>; runId: string; sessionId: string }> {
  const contexts = {} as Record<'run' | 'model' | 'tool', BaseContext>;
  const keep: Middleware = {
    name: 'keep',
    run: (ctx, next) => ((contexts.run = ctx), next()),
    model: (ctx, next) => ((contexts.model = ctx), next()),
    tool: (ctx, next) => ((contexts.tool = ctx), next()),
  };
  const agent = createAgent({ name: 'keeper', model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }, 'Done.']), tools: [add], middleware: [keep] });
  const result = await agent.run('Add', { sessionId: 'session-1' });
  return { contexts, runId: result.runId, sessionId: result.sessionId };
}

describe('contexts', () => {
  it('show only their public fields: the segment they belong to is not among their own properties, nor is any symbol', async () => {
    const { contexts } = await contextsOfOneRun();
    for (const ctx of Object.values(contexts)) {
      const own = Reflect.ownKeys(ctx);
      expect(own.filter((key) => typeof key === 'symbol')).toEqual([]);
      expect(own.map((key) => (ctx as unknown as Record<PropertyKey, unknown>)[key]).some((value) => value instanceof Segment)).toBe(false);
      expect({ ...ctx }).not.toHaveProperty('writer');
    }
  });

  it('read the run they belong to through to its segment: ids, names, the live transcript and state', async () => {
    const { contexts, runId, sessionId } = await contextsOfOneRun();
    for (const ctx of Object.values(contexts)) {
      expect(ctx.runId).toBe(runId);
      expect(ctx.sessionId).toBe(sessionId);
      expect(ctx.agentName).toBe('keeper');
      expect(ctx.state.runId).toBe(runId);
      expect(ctx.messages).toBe(segmentOf(ctx).views.transcript);
      expect(ctx.messages).toEqual(segmentOf(ctx).state.messages);
      expect(ctx.signal).toBe(segmentOf(ctx).base.signal);
    }
    // One segment behind all three.
    expect(segmentOf(contexts.model)).toBe(segmentOf(contexts.run));
    expect(segmentOf(contexts.tool)).toBe(segmentOf(contexts.run));
  });
});

describe('ctx.setHookState', () => {
  it('keeps the name "__proto__" as an own key of state.hookState, never as its prototype', async () => {
    const { contexts } = await contextsOfOneRun();
    for (const ctx of Object.values(contexts)) {
      ctx.setHookState('__proto__', { polluted: 'yes' });
      expect(Object.getPrototypeOf(ctx.state.hookState)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(ctx.state.hookState, '__proto__')?.value).toEqual({ polluted: 'yes' });
    }
  });
});
