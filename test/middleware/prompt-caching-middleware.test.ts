// promptCachingMiddleware: which messages of a request carry the cache marks, that the marks are
// for that request only (the transcript and other providers never see them), and that tokens
// read from the cache reach usage.cachedInputTokens and tokens written to it
// usage.cacheWriteInputTokens — through the AI SDK's mock model, through @ai-sdk/anthropic's real
// request body and a loopback Messages API server, and over the OpenAI wire from a loopback server.
import { createAnthropic } from '@ai-sdk/anthropic';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, openai, type Message } from '../../src/index.js';
import { promptCachingMiddleware } from '../../src/middleware.js';
import { aiSdk } from '../../src/providers/ai-sdk.js';
import { startAnthropicServer, type AnthropicServer, type AnthropicStep } from '../fixtures/anthropic-messages-server.js';
import { chatServerPerTest } from '../support/chat-server.js';

const CACHE = { anthropic: { cacheControl: { type: 'ephemeral' } } };
const lookup = defineTool({ name: 'lookup', description: 'Looks up', input: z.object({}), execute: () => 'found' });

const generated = (content: any[], input: { total: number; cacheRead: number; cacheWrite?: number }, reason: 'stop' | 'tool-calls' = 'stop') => ({
  content,
  finishReason: { unified: reason, raw: reason },
  usage: { inputTokens: { total: input.total, noCache: input.total - input.cacheRead - (input.cacheWrite ?? 0), cacheRead: input.cacheRead, cacheWrite: input.cacheWrite ?? 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
  warnings: [],
});

/** Which prompt messages (by role and index) carry provider options, and which. */
const marksOf = (prompt: any[]) => prompt.flatMap((m, i) => {
  const onMessage = m.providerOptions;
  const onParts = Array.isArray(m.content) ? m.content.filter((p: any) => p.providerOptions?.anthropic).map((p: any) => p.providerOptions) : [];
  return onMessage !== undefined || onParts.length > 0 ? [{ at: i, role: m.role, options: onMessage ?? onParts[0] }] : [];
});

const earlier: Message[] = [
  { role: 'system', content: 'You are a careful assistant.' },
  { role: 'user', content: 'First question' },
  { role: 'assistant', content: 'First answer' },
];

describe('promptCachingMiddleware: where the marks go', () => {
  it('marks the instructions, the last message before the newest user turn, and the latest message', async () => {
    const model = new MockLanguageModelV3({ doGenerate: [generated([{ type: 'text', text: 'Second answer' }], { total: 100, cacheRead: 0 })] });
    await createAgent({ model: aiSdk(model), middleware: [promptCachingMiddleware()] }).run([...earlier, { role: 'user', content: 'Second question' }]);
    const { prompt } = model.doGenerateCalls[0];
    expect(marksOf(prompt)).toEqual([
      { at: 0, role: 'system', options: CACHE },
      { at: 2, role: 'assistant', options: CACHE },
      { at: 3, role: 'user', options: CACHE },
    ]);
  });

  it('moves the latest mark along a tool loop, and leaves at most three marks', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        generated([{ type: 'tool-call', toolCallId: 't1', toolName: 'lookup', input: '{}' }], { total: 100, cacheRead: 0 }, 'tool-calls'),
        generated([{ type: 'text', text: 'Done' }], { total: 120, cacheRead: 100 }),
      ],
    });
    await createAgent({ model: aiSdk(model), instructions: 'Be brief.', tools: [lookup], middleware: [promptCachingMiddleware()] }).run('Look it up');
    const second = model.doGenerateCalls[1].prompt;
    // system, user, assistant (tool call), tool: the user turn is the newest, so no history mark.
    expect(marksOf(second).map(({ at, role }) => [at, role])).toEqual([[0, 'system'], [3, 'tool']]);
    // A tool message's mark is on its result part (tool messages in a row are one AI SDK message).
    expect((second[3] as any).content[0].providerOptions).toEqual(CACHE);
  });

  it('marks only the breakpoints asked for, with the provider options given, merged into a message\'s own', async () => {
    const model = new MockLanguageModelV3({ doGenerate: [generated([{ type: 'text', text: 'ok' }], { total: 10, cacheRead: 0 })] });
    const bedrock = { bedrock: { cachePoint: { type: 'default' } } };
    const system: Message = { role: 'system', content: 'Rules', providerOptions: { bedrock: { note: 'kept' } } };
    await createAgent({ model: aiSdk(model), middleware: [promptCachingMiddleware({ breakpoints: ['instructions'], providerOptions: bedrock })] }).run([system, { role: 'user', content: 'Hi' }]);
    const { prompt } = model.doGenerateCalls[0];
    expect(prompt[0]).toEqual({ role: 'system', content: 'Rules', providerOptions: { bedrock: { note: 'kept', cachePoint: { type: 'default' } } } });
    expect(prompt[1]).not.toHaveProperty('providerOptions');
  });
});

describe('promptCachingMiddleware: the marks are for the request only', () => {
  it('leaves the transcript (and so the stored state) without them', async () => {
    const model = new MockLanguageModelV3({ doGenerate: [generated([{ type: 'text', text: 'Second answer' }], { total: 100, cacheRead: 0 })] });
    const result = await createAgent({ model: aiSdk(model), middleware: [promptCachingMiddleware()] }).run([...earlier, { role: 'user', content: 'Second question' }]);
    expect(JSON.stringify(result.state)).not.toContain('cacheControl');
    expect(result.messages[0]).toEqual(earlier[0]);
  });

  it('sends nothing of them on the OpenAI wire, which caches by itself', async () => {
    const serve = await chatServer({ reply: { text: 'Hi', usage: { prompt_tokens: 2000, completion_tokens: 3, cached_tokens: 1536 } } });
    const model = openai({ model: 'gpt-5-mini', baseURL: serve.baseURL, apiKey: 'sk-test' });
    const result = await createAgent({ model, instructions: 'Be brief.', middleware: [promptCachingMiddleware()] }).run('Hello');
    expect(JSON.stringify(serve.requests[0].body)).not.toMatch(/cache|providerOptions/i);
    expect(serve.requests[0].body.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }]);
    expect(result.usage.cachedInputTokens).toBe(1536);
  });
});

const chatServer = (() => {
  const serve = chatServerPerTest();
  return (...steps: Parameters<typeof serve>) => serve(...steps);
})();

describe('promptCachingMiddleware: cached tokens in usage', () => {
  it('reads the AI SDK\'s cacheRead into usage.cachedInputTokens, summed over the run', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        generated([{ type: 'tool-call', toolCallId: 't1', toolName: 'lookup', input: '{}' }], { total: 1200, cacheRead: 1024 }, 'tool-calls'),
        generated([{ type: 'text', text: 'Done' }], { total: 1300, cacheRead: 1200 }),
      ],
    });
    const result = await createAgent({ model: aiSdk(model), tools: [lookup], middleware: [promptCachingMiddleware()] }).run('Look it up');
    expect(result.usage).toMatchObject({ inputTokens: 2500, cachedInputTokens: 2224 });
    expect(result.usage).not.toHaveProperty('cacheWriteInputTokens');
  });

  it('reads the AI SDK\'s cacheWrite into usage.cacheWriteInputTokens, summed over the run (both are part of inputTokens)', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        generated([{ type: 'tool-call', toolCallId: 't1', toolName: 'lookup', input: '{}' }], { total: 1200, cacheRead: 0, cacheWrite: 1100 }, 'tool-calls'),
        generated([{ type: 'text', text: 'Done' }], { total: 1300, cacheRead: 1100, cacheWrite: 150 }),
      ],
    });
    const result = await createAgent({ model: aiSdk(model), tools: [lookup], middleware: [promptCachingMiddleware()] }).run('Look it up');
    expect(result.usage).toMatchObject({ inputTokens: 2500, cachedInputTokens: 1100, cacheWriteInputTokens: 1250 });
  });

  it('reports OpenAI\'s cached_tokens when streaming too', async () => {
    const serve = await chatServer({ reply: { text: 'Streamed', usage: { prompt_tokens: 1800, completion_tokens: 2, cached_tokens: 1024 } } });
    const stream = createAgent({ model: openai({ model: 'gpt-5-mini', baseURL: serve.baseURL, apiKey: 'sk-test' }), middleware: [promptCachingMiddleware()] }).stream('Hello');
    for await (const _ of stream) void _;
    expect((await stream.result).usage).toMatchObject({ inputTokens: 1800, cachedInputTokens: 1024 });
  });
});

describe('promptCachingMiddleware: with @ai-sdk/anthropic', () => {
  it('puts cache_control on the system prompt and the marked messages of the real request body, and reads cache_read_input_tokens and cache_creation_input_tokens back', async () => {
    const bodies: any[] = [];
    const fetch = async (_url: unknown, init?: { body?: unknown }) => {
      bodies.push(JSON.parse(String(init?.body)));
      return new Response(JSON.stringify({
        id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [{ type: 'text', text: 'Second answer' }],
        stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 40, output_tokens: 3, cache_creation_input_tokens: 512, cache_read_input_tokens: 2048 },
      }), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const anthropic = createAnthropic({ apiKey: 'sk-ant-test', baseURL: 'http://127.0.0.1:9/v1', fetch: fetch as typeof globalThis.fetch });
    const result = await createAgent({ model: aiSdk(anthropic('claude-test') as any), middleware: [promptCachingMiddleware()] }).run([...earlier, { role: 'user', content: 'Second question' }]);
    const body = bodies[0];
    expect(body.system).toEqual([{ type: 'text', text: 'You are a careful assistant.', cache_control: { type: 'ephemeral' } }]);
    expect(body.messages.map((m: any) => m.content.map((p: any) => p.cache_control ?? null))).toEqual([[null], [{ type: 'ephemeral' }], [{ type: 'ephemeral' }]]);
    // input_tokens leaves both cache counts out; koagent's inputTokens counts them in.
    expect(result.usage).toMatchObject({ inputTokens: 2600, cachedInputTokens: 2048, cacheWriteInputTokens: 512 });
  });
});

describe('promptCachingMiddleware: cache counts from a Messages API server through @ai-sdk/anthropic', () => {
  let server: AnthropicServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  // The first call writes the prefix, the second reads it and writes the tool turn after it.
  const steps: AnthropicStep[] = [
    { content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }], usage: { input_tokens: 12, output_tokens: 8, cache_creation_input_tokens: 1800 } },
    { content: [{ type: 'text', text: 'Found it.' }], usage: { input_tokens: 6, output_tokens: 4, cache_read_input_tokens: 1800, cache_creation_input_tokens: 60 } },
  ];
  const agentOn = (baseURL: string) => createAgent({ model: aiSdk(createAnthropic({ apiKey: 'sk-ant-test', baseURL })('claude-test') as any), instructions: 'Be brief.', tools: [lookup], middleware: [promptCachingMiddleware()] });
  const expected = { inputTokens: 12 + 1800 + 6 + 1800 + 60, outputTokens: 12, cachedInputTokens: 1800, cacheWriteInputTokens: 1860 };

  it('sums cache_creation_input_tokens into usage.cacheWriteInputTokens over a tool loop', async () => {
    server = await startAnthropicServer(steps);
    const result = await agentOn(server.baseURL).run('Look it up');
    expect(result.output).toBe('Found it.');
    expect(result.usage).toMatchObject(expected);
  });

  it('reads them from message_start when streaming', async () => {
    server = await startAnthropicServer(steps);
    const stream = agentOn(server.baseURL).stream('Look it up');
    for await (const _ of stream) void _;
    expect(server.requests.every((r) => r.body.stream === true)).toBe(true);
    expect((await stream.result).usage).toMatchObject(expected);
  });
});

describe('promptCachingMiddleware: options', () => {
  it('refuses unknown keys naming the closest one, and unknown breakpoints', () => {
    expect(() => promptCachingMiddleware({ breakpoint: ['latest'] } as never)).toThrow(/breakpoint is not a prompt caching option; did you mean `breakpoints`\?/);
    expect(() => promptCachingMiddleware({ breakpoints: ['tools'] } as never)).toThrow(/breakpoints\[0\] must be 'instructions', 'history' or 'latest'/);
  });

  it('is a named middleware whose model layer is a named function', () => {
    const mw = promptCachingMiddleware();
    expect([mw.name, mw.model?.name]).toEqual(['prompt-caching', 'promptCaching']);
  });
});
