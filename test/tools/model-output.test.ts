// What a tool gives back: its result checked against the tool's output schema (innermost), and
// what the model reads of it — the result as JSON, or what toModelOutput makes of it (text or parts).
import { z } from 'zod';
import { describe, expect, it, expectTypeOf } from 'vitest';
import { createAgent, defineTool, type AgentEvent, type Middleware, type ToolOutcome } from '../../src/index.js';
import type { AgentHook, Hook } from '../../src/hooks.js';
import { mockModel } from '../../src/testing/index.js';

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const callOnce = (name: string, args: object = {}) => mockModel([{ toolCalls: [{ name, args }] }, 'Done.']);
const toolMessage = (messages: readonly { role: string }[]) => messages.find((m) => m.role === 'tool') as { content: unknown } | undefined;

describe('a tool\'s output schema', () => {
  const Total = z.object({ total: z.number(), currency: z.string().default('EUR') });

  it('gives on the schema\'s output (defaults applied), and types the tool\'s result from it', async () => {
    const sum = defineTool({ name: 'sum', description: 'Sums', input: z.object({ xs: z.array(z.number()) }), output: Total, execute: ({ xs }) => ({ total: xs.reduce((a, b) => a + b, 0) }) });
    expectTypeOf<Awaited<ReturnType<typeof sum.execute>>>().toEqualTypeOf<{ total: number; currency: string }>();
    const seen: unknown[] = [];
    const watch: Middleware = { name: 'watch', tool: async (ctx, next) => { const outcome = await next(); seen.push(outcome.result); return outcome; } };
    const result = await createAgent({ model: callOnce('sum', { xs: [1, 2] }), tools: [sum], middleware: [watch] }).run('Sum');
    expect(seen).toEqual([{ total: 3, currency: 'EUR' }]);
    expect(toolMessage(result.messages)?.content).toBe('{"total":3,"currency":"EUR"}');
  });

  it('settles a result that does not fit as an execution error naming the field', async () => {
    const sum = defineTool({ name: 'sum', description: 'Sums', output: Total, execute: () => ({ total: 'three' }) as never });
    const events: AgentEvent[] = [];
    const result = await createAgent({ model: callOnce('sum'), tools: [sum] }).run('Sum', { onEvent: (e) => events.push(e) });
    expect(toolMessage(result.messages)?.content).toMatch(/sum returned a result that does not fit its output schema.*total/s);
    expect(events.find((e) => e.type === 'tool.error')).toMatchObject({ error: { kind: 'execution' }, toolName: 'sum' });
  });
});

describe('toModelOutput: what the model reads of a result', () => {
  const screenshot = defineTool({
    name: 'screenshot',
    description: 'Takes a screenshot',
    input: z.object({ url: z.string() }),
    execute: ({ url }) => ({ url, png, width: 1 }),
    toModelOutput: (shot) => [{ type: 'text', text: `Screenshot of ${shot.url}` }, { type: 'image', image: shot.png, mediaType: 'image/png' }],
  });

  it('puts parts in the tool message, while layers and hooks see the result itself', async () => {
    const results: unknown[] = [];
    const hook: AgentHook = { name: 'post', postToolCall: (_ctx, { result }) => { results.push(result); } };
    const criogen: Hook = { name: 'after', afterTool: (_call, result) => { results.push(result); } };
    const model = callOnce('screenshot', { url: 'https://example.com' });
    const result = await createAgent({ model, tools: [screenshot], hooks: [hook, criogen] }).run('Look');
    expect(toolMessage(result.messages)?.content).toEqual([{ type: 'text', text: 'Screenshot of https://example.com' }, { type: 'image', image: png, mediaType: 'image/png' }]);
    expect(toolMessage(model.calls[1].messages)?.content).toEqual(toolMessage(result.messages)?.content);
    expect(results).toEqual([{ url: 'https://example.com', png, width: 1 }, { url: 'https://example.com', png, width: 1 }]);
  });

  it('runs on the result the layers settled on, so a layer that redacts the result redacts what the model sees', async () => {
    const redact: Middleware = { name: 'redact', tool: async (ctx, next) => { const outcome: ToolOutcome = await next(); return { ...outcome, result: { ...(outcome.result as object), url: '[hidden]' } }; } };
    const result = await createAgent({ model: callOnce('screenshot', { url: 'https://secret.example' }), tools: [screenshot], middleware: [redact] }).run('Look');
    expect(JSON.stringify(toolMessage(result.messages)?.content)).not.toContain('secret');
    expect((toolMessage(result.messages)?.content as Array<{ text?: string }>)[0].text).toBe('Screenshot of [hidden]');
  });

  it('may give text, and is not asked for errors: the model reads the error as always', async () => {
    const short = defineTool({ name: 'short', description: 'x', execute: () => ({ long: 'x'.repeat(100) }), toModelOutput: (r) => `${r.long.length} chars` });
    const failing = defineTool({ name: 'failing', description: 'x', execute: (): { a: 1 } => { throw new Error('disk full'); }, toModelOutput: () => 'never' });
    const a = await createAgent({ model: callOnce('short'), tools: [short] }).run('x');
    expect(toolMessage(a.messages)?.content).toBe('100 chars');
    const b = await createAgent({ model: callOnce('failing'), tools: [failing] }).run('x');
    expect(toolMessage(b.messages)?.content).toMatch(/disk full/);
  });

  it('settles the call as an execution error when toModelOutput throws or gives something that is not content', async () => {
    const throws = defineTool({ name: 'throws', description: 'x', execute: () => 1, toModelOutput: () => { throw new Error('cannot render'); } });
    const result = await createAgent({ model: callOnce('throws'), tools: [throws] }).run('x');
    expect(toolMessage(result.messages)?.content).toMatch(/cannot render/);
    const numbers = defineTool({ name: 'numbers', description: 'x', execute: () => 1, toModelOutput: () => 42 as never });
    const other = await createAgent({ model: callOnce('numbers'), tools: [numbers] }).run('x');
    expect(toolMessage(other.messages)?.content).toMatch(/toModelOutput/);
  });
});
