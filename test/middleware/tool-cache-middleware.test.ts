// toolCacheMiddleware: a cacheable tool called again with the same arguments is settled from the
// cache without running; which tools are cacheable (names, a predicate, the tools' hints); what
// is never cached (errors, calls needing approval); the time to live; priming; and the options.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent } from '../../src/index.js';
import type { ToolAnnotations } from '../../src/core/vocabulary/contexts.js';
import { memoryKeyValues, toolCacheMiddleware } from '../../src/middleware.js';
import { mockModel, type MockToolCall } from '../../src/testing/index.js';

/** A weather tool that counts its runs, and fails for the city "Nowhere". */
function weatherTool(extra: { annotations?: ToolAnnotations; needsApproval?: boolean } = {}) {
  const runs: string[] = [];
  const tool = defineTool({
    name: 'get_weather',
    description: 'The forecast for a city',
    input: z.object({ city: z.string(), units: z.enum(['C', 'F']).optional() }),
    execute: ({ city }: { city: string }) => {
      runs.push(city);
      if (city === 'Nowhere') throw new Error('no such city');
      return { city, forecast: `sunny in ${city}` };
    },
    ...extra,
  });
  return { tool, runs };
}

/** A model that calls `calls` in one turn, then answers. */
const calling = (...calls: MockToolCall[]) => mockModel([{ toolCalls: calls }, 'done']);

describe('toolCacheMiddleware: a hit', () => {
  it('settles a call with the result of an earlier one with the same arguments, without running the tool', async () => {
    const { tool, runs } = weatherTool();
    const cache = toolCacheMiddleware({ tools: ['get_weather'] });
    const events: AgentEvent[] = [];
    const first = await createAgent({ model: calling({ name: 'get_weather', args: { city: 'Oslo', units: 'C' } }), tools: [tool], middleware: [cache] }).run('Oslo?');
    // Another run, another agent, the arguments in another order: the same call.
    const second = await createAgent({ model: calling({ name: 'get_weather', args: { units: 'C', city: 'Oslo' } }), tools: [tool], middleware: [cache], onEvent: (e) => void events.push(e) }).run('Oslo?');
    expect(runs).toEqual(['Oslo']);
    const toolMessage = (messages: typeof first.messages) => messages.find((m) => m.role === 'tool')?.content;
    expect(toolMessage(second.messages)).toBe(toolMessage(first.messages));
    expect(second.usage.toolCacheHits).toBe(1);
    expect(first.usage.toolCacheHits).toBeUndefined();
    expect(events.find((e) => e.type === 'tool-cache.hit')).toMatchObject({ toolName: 'get_weather' });
    expect(events.find((e) => e.type === 'tool.done')).toMatchObject({ replacedBy: 'tool-cache' });
  });

  it('runs the tool for other arguments, and for other scopes', async () => {
    const { tool, runs } = weatherTool();
    const cache = toolCacheMiddleware({ tools: ['get_weather'], scope: (ctx) => String(ctx.metadata.tenant) });
    const agent = (city: string) => createAgent({ model: calling({ name: 'get_weather', args: { city } }), tools: [tool], middleware: [cache] });
    await agent('Oslo').run('?', { metadata: { tenant: 'a' } });
    await agent('Paris').run('?', { metadata: { tenant: 'a' } });
    await agent('Oslo').run('?', { metadata: { tenant: 'b' } });
    await agent('Oslo').run('?', { metadata: { tenant: 'a' } });
    expect(runs).toEqual(['Oslo', 'Paris', 'Oslo']);
  });

  it('serves a primed result: what a hand-written cache of known answers did', async () => {
    const { tool, runs } = weatherTool();
    const cache = toolCacheMiddleware({ tools: ['get_weather'] });
    await cache.prime('get_weather', { city: 'Oslo' }, { city: 'Oslo', forecast: 'snow, -3°C (cached)' });
    const result = await createAgent({ model: calling({ name: 'get_weather', args: { city: 'Paris' } }, { name: 'get_weather', args: { city: 'Oslo' } }), tools: [tool], middleware: [cache] }).run('?');
    expect(runs).toEqual(['Paris']);
    expect(result.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([JSON.stringify({ city: 'Paris', forecast: 'sunny in Paris' }), JSON.stringify({ city: 'Oslo', forecast: 'snow, -3°C (cached)' })]);
  });
});

describe('toolCacheMiddleware: which tools', () => {
  it('caches only the tools named, or those a predicate picks', async () => {
    for (const tools of [['other_tool'], () => false] as const) {
      const { tool, runs } = weatherTool();
      const cache = toolCacheMiddleware({ tools });
      for (let i = 0; i < 2; i++) await createAgent({ model: calling({ name: 'get_weather', args: { city: 'Oslo' } }), tools: [tool], middleware: [cache] }).run('?');
      expect(runs).toEqual(['Oslo', 'Oslo']);
    }
    const { tool, runs } = weatherTool();
    const cache = toolCacheMiddleware({ tools: (ctx) => ctx.args.city === 'Oslo' });
    for (let i = 0; i < 2; i++) await createAgent({ model: calling({ name: 'get_weather', args: { city: 'Oslo' } }), tools: [tool], middleware: [cache] }).run('?');
    expect(runs).toEqual(['Oslo']);
  });

  it('with annotated: true, caches tools that declare themselves read-only and idempotent, and no others', async () => {
    const hinted = weatherTool({ annotations: { readOnlyHint: true, idempotentHint: true } });
    const readOnlyOnly = weatherTool({ annotations: { readOnlyHint: true } });
    for (const { tool } of [hinted, readOnlyOnly]) {
      const cache = toolCacheMiddleware({ annotated: true });
      for (let i = 0; i < 2; i++) await createAgent({ model: calling({ name: 'get_weather', args: { city: 'Oslo' } }), tools: [tool], middleware: [cache] }).run('?');
    }
    expect(hinted.runs).toEqual(['Oslo']);
    expect(readOnlyOnly.runs).toEqual(['Oslo', 'Oslo']);
  });
});

describe('toolCacheMiddleware: what is never served', () => {
  it('keeps no error: a failed call runs again', async () => {
    const { tool, runs } = weatherTool();
    const cache = toolCacheMiddleware({ tools: ['get_weather'] });
    for (let i = 0; i < 2; i++) await createAgent({ model: calling({ name: 'get_weather', args: { city: 'Nowhere' } }), tools: [tool], middleware: [cache] }).run('?');
    expect(runs).toEqual(['Nowhere', 'Nowhere']);
  });

  it('never settles a call that needs approval: a human is asked each time', async () => {
    const { tool, runs } = weatherTool({ needsApproval: true });
    const cache = toolCacheMiddleware({ tools: ['get_weather'] });
    for (let i = 0; i < 2; i++) {
      const agent = createAgent({ model: calling({ id: `c${i}`, name: 'get_weather', args: { city: 'Oslo' } }), tools: [tool], middleware: [cache] });
      const paused = await agent.run('?');
      expect(paused.status).toBe('suspended');
      // The state crosses JSON, as a resume in another process gets it.
      const state = JSON.parse(JSON.stringify(paused.state));
      expect((await agent.resume(state, { [paused.pendingApprovals[0].toolCallId]: true })).status).toBe('completed');
    }
    expect(runs).toEqual(['Oslo', 'Oslo']);
  });

  it('forgets a result once its time to live has passed', async () => {
    let now = 0;
    const { tool, runs } = weatherTool();
    const cache = toolCacheMiddleware({ tools: ['get_weather'], ttlMs: 1000, store: memoryKeyValues({ now: () => now }) });
    const run = () => createAgent({ model: calling({ name: 'get_weather', args: { city: 'Oslo' } }), tools: [tool], middleware: [cache] }).run('?');
    await run();
    now = 999;
    await run();
    now = 1000;
    await run();
    expect(runs).toEqual(['Oslo', 'Oslo']);
  });
});

describe('toolCacheMiddleware: options', () => {
  it('refuses what is not an option, naming the closest, and a cache of nothing', () => {
    expect(() => toolCacheMiddleware({ tool: ['x'] } as never)).toThrow('toolCacheMiddleware: tool is not a tool-cache option; did you mean `tools`?');
    expect(() => toolCacheMiddleware({ tools: ['x'], ttl: 5 } as never)).toThrow('did you mean `ttlMs`?');
    expect(() => toolCacheMiddleware({ tools: 'get_weather' as never })).toThrow("toolCacheMiddleware: tools must be a list of tool names, e.g. ['get_weather'], or a function (ctx) => boolean");
    expect(() => toolCacheMiddleware({})).toThrow("toolCacheMiddleware: say which tools' results to cache");
    expect(toolCacheMiddleware({ annotated: true }).name).toBe('tool-cache');
    expect(toolCacheMiddleware({ annotated: true }).tool!.name).toBe('toolCache');
  });
});
