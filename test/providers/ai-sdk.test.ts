// The AI SDK adapter: koagent runs on any AI SDK language model. Tested with the AI SDK's own
// MockLanguageModelV3, a LanguageModelV2 object, and @ai-sdk/openai talking real HTTP to the
// loopback Chat Completions server.
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, type LanguageModelV2, type LanguageModelV2StreamPart, type LanguageModelV2Usage, type SharedV2ProviderMetadata, type LanguageModelV3GenerateResult, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, ProviderError } from '../../src/index.js';
import { retryMiddleware } from '../../src/middleware.js';
import type { StreamPart } from '../../src/types.js';
import { aiSdk } from '../../src/providers/ai-sdk.js';
import { openaiCompatibleServer, type OpenAICompatibleServer } from '../../src/testing/index.js';
import { rejection } from '../support/core.js';
import { collectParts } from '../support/chat-server.js';

const weather = defineTool({
  name: 'get_weather',
  description: 'The forecast for a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, forecast: 'sunny' }),
});
const strict = defineTool({ name: 'strict', description: 'Fails', input: z.object({}), execute: () => { throw new Error('disk full'); } });

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});
const finish = (unified: 'stop' | 'tool-calls' | 'length') => ({ unified, raw: unified });
const generated = (content: LanguageModelV3GenerateResult['content'], reason: 'stop' | 'tool-calls', input: number, output: number): LanguageModelV3GenerateResult =>
  ({ content, finishReason: finish(reason), usage: usage(input, output), warnings: [] });

describe('aiSdk(model): generate with MockLanguageModelV3', () => {
  it('runs an agent with tool calls, giving the model the AI SDK prompt format and reading usage back', async () => {
    const model = new MockLanguageModelV3({
      provider: 'mock-provider', modelId: 'mock-model',
      doGenerate: [
        generated([{ type: 'text', text: 'Let me check.' }, { type: 'tool-call', toolCallId: 't1', toolName: 'get_weather', input: '{"city":"Paris"}' }, { type: 'tool-call', toolCallId: 't2', toolName: 'strict', input: '{}' }], 'tool-calls', 30, 12),
        generated([{ type: 'reasoning', text: 'The tool said sunny.' }, { type: 'text', text: 'Sunny in Paris.' }], 'stop', 50, 5),
      ],
    });
    const agent = createAgent({ instructions: 'Be brief.', model: aiSdk(model), tools: [weather, strict], modelSettings: { temperature: 0.3, maxTokens: 100, headers: { 'x-run': 'r1' } } });
    const result = await agent.run('Weather in Paris?');

    expect(result.text).toBe('Sunny in Paris.');
    expect(result.usage).toMatchObject({ inputTokens: 80, outputTokens: 17, modelCalls: 2, toolCalls: 2 });
    expect(result.messages[2]).toEqual({ role: 'assistant', content: 'Let me check.', toolCalls: [{ id: 't1', name: 'get_weather', args: { city: 'Paris' } }, { id: 't2', name: 'strict', args: {} }] });
    const [first, second] = model.doGenerateCalls;
    expect(first.tools).toEqual([
      { type: 'function', name: 'get_weather', description: 'The forecast for a city', inputSchema: weather.spec.parameters },
      { type: 'function', name: 'strict', description: 'Fails', inputSchema: strict.spec.parameters },
    ]);
    expect(first).toMatchObject({ temperature: 0.3, maxOutputTokens: 100, headers: { 'x-run': 'r1' } });
    expect(first.abortSignal).toBeInstanceOf(AbortSignal);
    expect(second.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool-call', toolCallId: 't1', toolName: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool-call', toolCallId: 't2', toolName: 'strict', input: {} },
      ] },
      { role: 'tool', content: [
        { type: 'tool-result', toolCallId: 't1', toolName: 'get_weather', output: { type: 'text', value: '{"city":"Paris","forecast":"sunny"}' } },
        { type: 'tool-result', toolCallId: 't2', toolName: 'strict', output: { type: 'error-text', value: 'Error (execution): strict threw: disk full' } },
      ] },
    ]);
  });

  it('keeps tool-call input that is not valid JSON as raw text (a validation error for the model), and skips provider-executed calls', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: generated([
        { type: 'tool-call', toolCallId: 'x1', toolName: 'get_weather', input: '{"city":' },
        { type: 'tool-call', toolCallId: 'x2', toolName: 'web_search', input: '{}', providerExecuted: true },
      ], 'tool-calls', 1, 1),
    });
    const reply = await aiSdk(model).generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [] });
    expect(reply).toEqual({ message: { role: 'assistant', content: '', toolCalls: [{ id: 'x1', name: 'get_weather', args: '{"city":' }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' });
  });

  it('maps toolChoice, stop and sampling settings to the call options', async () => {
    const model = new MockLanguageModelV3({ doGenerate: generated([{ type: 'text', text: 'ok' }], 'stop', 1, 1) });
    await aiSdk(model).generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [weather.spec], toolChoice: { name: 'get_weather' }, stop: 'END', topP: 0.9, seed: 7, providerOptions: { openai: { store: false } } });
    expect(model.doGenerateCalls[0]).toMatchObject({ toolChoice: { type: 'tool', toolName: 'get_weather' }, stopSequences: ['END'], topP: 0.9, seed: 7, providerOptions: { openai: { store: false } } });
  });
});

describe('aiSdk(model): stream with MockLanguageModelV3', () => {
  it('turns text deltas, a complete tool call and finish into koagent stream parts', async () => {
    const chunks: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: 'r1', modelId: 'mock' },
      { type: 'text-start', id: 'a' },
      { type: 'text-delta', id: 'a', delta: 'Hel' },
      { type: 'text-delta', id: 'a', delta: 'lo 🌍' },
      { type: 'text-end', id: 'a' },
      { type: 'tool-input-start', id: 't1', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 't1', delta: '{"city":' },
      { type: 'tool-input-delta', id: 't1', delta: '"Oslo"}' },
      { type: 'tool-input-end', id: 't1' },
      { type: 'tool-call', toolCallId: 't1', toolName: 'get_weather', input: '{"city":"Oslo"}' },
      { type: 'finish', finishReason: finish('tool-calls'), usage: usage(9, 4) },
    ];
    const model = new MockLanguageModelV3({ doStream: { stream: simulateReadableStream({ chunks }) } });
    expect(await collectParts(aiSdk(model).stream!({ messages: [{ role: 'user', content: 'Hi' }], tools: [weather.spec] }))).toEqual([
      { type: 'text', delta: 'Hel', id: 'a' },
      { type: 'text', delta: 'lo 🌍', id: 'a' },
      { type: 'tool-call', id: 't1', name: 'get_weather', args: { city: 'Oslo' } },
      { type: 'finish', usage: { inputTokens: 9, outputTokens: 4 }, finishReason: 'tool_calls' },
    ]);
    expect(model.doStreamCalls[0].prompt).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });

  it('throws the error part of a stream, as a ProviderError when it is an API call error', async () => {
    const apiError = new APICallError({ message: 'Overloaded', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 529, isRetryable: true });
    const model = new MockLanguageModelV3({ doStream: { stream: simulateReadableStream<LanguageModelV3StreamPart>({ chunks: [{ type: 'text-delta', id: 'a', delta: 'x' }, { type: 'error', error: apiError }] }) } });
    const error = await rejection(collectParts(aiSdk(model).stream!({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })));
    expect(error).toMatchObject({ name: 'ProviderError', kind: 'http', status: 529, retryable: true, providerMessage: 'Overloaded', cause: apiError });
  });

  it('a stream that ends without a finish part is a retryable error', async () => {
    const model = new MockLanguageModelV3({ doStream: { stream: simulateReadableStream<LanguageModelV3StreamPart>({ chunks: [{ type: 'text-delta', id: 'a', delta: 'x' }] }) } });
    expect(await rejection(collectParts(aiSdk(model).stream!({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })))).toMatchObject({ retryable: true, message: expect.stringMatching(/without a finish part/) });
  });
});

describe('aiSdk(model): errors', () => {
  it('an APICallError becomes a ProviderError with status, retryable and Retry-After, which retryMiddleware honours', async () => {
    const limited = new APICallError({ message: 'Rate limit reached', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 429, responseHeaders: { 'retry-after': '4' }, isRetryable: true, data: { error: { code: 'rate_limit_exceeded' } } });
    let calls = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        calls++;
        if (calls === 1) throw limited;
        return generated([{ type: 'text', text: 'done' }], 'stop', 1, 1);
      },
    });
    const direct = await rejection(aiSdk(new MockLanguageModelV3({ doGenerate: async () => { throw limited; } })).generate({ messages: [], tools: [] }));
    expect(ProviderError.is(direct)).toBe(true);
    expect(direct).toMatchObject({ status: 429, retryable: true, retryAfterMs: 4000, providerCode: 'rate_limit_exceeded', provider: 'ai-sdk:mock-provider' });

    const waits: number[] = [];
    const result = await createAgent({ model: aiSdk(model), middleware: [retryMiddleware({ sleep: async (ms) => { waits.push(ms); } })] }).run('Hi');
    expect(result.text).toBe('done');
    expect(calls).toBe(2);
    expect(waits).toEqual([4000]);
  });

  it('lets other errors through unchanged', async () => {
    const bug = new RangeError('bad prompt');
    expect(await rejection(aiSdk(new MockLanguageModelV3({ doGenerate: async () => { throw bug; } })).generate({ messages: [], tools: [] }))).toBe(bug);
  });

  it('rejects what is not an AI SDK language model, or a specification it does not know', () => {
    expect(() => aiSdk({} as never)).toThrow(/aiSdk\(model\): model must be an AI SDK language model/);
    const v4 = Object.assign(new MockLanguageModelV3(), { specificationVersion: 'v4' });
    expect(() => aiSdk(v4 as never)).toThrow(/implements specification "v4"; koagent supports v2 \(AI SDK 5\) and v3 \(AI SDK 6\)/);
  });
});

describe('aiSdk(model): a LanguageModelV2 (AI SDK 5) model', () => {
  const v2: LanguageModelV2 = {
    specificationVersion: 'v2', provider: 'v2-provider', modelId: 'v2-model', supportedUrls: {},
    async doGenerate() {
      return { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: '{"city":"Rome"}' }], finishReason: 'tool-calls', usage: { inputTokens: 5, outputTokens: 6, totalTokens: 11 }, warnings: [] };
    },
    async doStream() {
      const chunks: LanguageModelV2StreamPart[] = [
        { type: 'text-delta', id: 'a', delta: 'Ciao' },
        { type: 'finish', finishReason: 'length', usage: { inputTokens: 2, outputTokens: undefined, totalTokens: undefined } },
      ];
      return { stream: simulateReadableStream({ chunks }) };
    },
  };

  it('reads plain-number usage and string finish reasons', async () => {
    expect(await aiSdk(v2).generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })).toEqual({
      message: { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_weather', args: { city: 'Rome' } }] },
      usage: { inputTokens: 5, outputTokens: 6 }, finishReason: 'tool_calls',
    });
    expect(await collectParts(aiSdk(v2).stream!({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }))).toEqual([
      { type: 'text', delta: 'Ciao', id: 'a' },
      { type: 'finish', usage: { inputTokens: 2, outputTokens: 0 }, finishReason: 'length' },
    ]);
  });
});

describe('aiSdk(model): prompt-cache counts of a LanguageModelV2 model', () => {
  // As @ai-sdk/anthropic 2.x reports them: inputTokens is Anthropic's input_tokens, which leaves
  // out the cache reads (cachedInputTokens) and the writes (in providerMetadata only).
  const raw = { input_tokens: 40, output_tokens: 3, cache_creation_input_tokens: 512, cache_read_input_tokens: 2048 };
  const anthropicMetadata = { anthropic: { usage: raw, cacheCreationInputTokens: 512 } };
  const v2Model = (usage: LanguageModelV2Usage, providerMetadata: SharedV2ProviderMetadata): LanguageModelV2 => ({
    specificationVersion: 'v2', provider: 'anthropic.messages', modelId: 'claude-test', supportedUrls: {},
    async doGenerate() {
      return { content: [{ type: 'text', text: 'Hi' }], finishReason: 'stop', usage, providerMetadata, warnings: [] };
    },
    async doStream() {
      const chunks: LanguageModelV2StreamPart[] = [{ type: 'text-delta', id: '0', delta: 'Hi' }, { type: 'finish', finishReason: 'stop', usage, providerMetadata }];
      return { stream: simulateReadableStream({ chunks }) };
    },
  });
  const request = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };

  it('reads Anthropic\'s cacheCreationInputTokens into cacheWriteInputTokens, and counts both cache counts in inputTokens', async () => {
    const model = aiSdk(v2Model({ inputTokens: 40, outputTokens: 3, totalTokens: 43, cachedInputTokens: 2048 }, anthropicMetadata));
    const expected = { inputTokens: 2600, outputTokens: 3, cachedInputTokens: 2048, cacheWriteInputTokens: 512 };
    expect((await model.generate(request)).usage).toEqual(expected);
    expect((await collectParts(model.stream!(request))).at(-1)).toEqual({ type: 'finish', usage: expected, finishReason: 'stop' });
  });

  it('counts the cache reads in inputTokens when Anthropic wrote nothing (cacheCreationInputTokens null)', async () => {
    const model = aiSdk(v2Model({ inputTokens: 40, outputTokens: 3, totalTokens: 43, cachedInputTokens: 2048 }, { anthropic: { usage: { ...raw, cache_creation_input_tokens: null }, cacheCreationInputTokens: null } }));
    expect((await model.generate(request)).usage).toEqual({ inputTokens: 2088, outputTokens: 3, cachedInputTokens: 2048 });
  });

  it('takes inputTokens as it is from a model whose metadata says nothing of cache writes', async () => {
    const model = aiSdk(v2Model({ inputTokens: 2000, outputTokens: 3, totalTokens: 2003, cachedInputTokens: 1536 }, { openai: { acceptedPredictionTokens: 0 } }));
    expect((await model.generate(request)).usage).toEqual({ inputTokens: 2000, outputTokens: 3, cachedInputTokens: 1536 });
  });
});

describe('aiSdk(model): @ai-sdk/openai over real HTTP', () => {
  let server: OpenAICompatibleServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('runs an agent with a tool call through the AI SDK\'s OpenAI provider against the loopback server', async () => {
    server = await openaiCompatibleServer({ responses: [
      { reply: { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Lima"}' }], usage: { prompt_tokens: 20, completion_tokens: 7 } } },
      { reply: { text: 'Lima is sunny.', usage: { prompt_tokens: 35, completion_tokens: 4 } } },
    ] });
    const provider = createOpenAI({ baseURL: server.baseURL, apiKey: 'sk-test' });
    const result = await createAgent({ model: aiSdk(provider.chat('gpt-5-mini')), tools: [weather] }).run('Weather in Lima?');
    expect(result.text).toBe('Lima is sunny.');
    expect(result.usage).toMatchObject({ inputTokens: 55, outputTokens: 11 });
    expect(server.requests[1].body.messages).toEqual([
      { role: 'user', content: 'Weather in Lima?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"city":"Lima","forecast":"sunny"}' },
    ]);
  });

  it('streams through the AI SDK\'s OpenAI provider, and maps its HTTP errors', async () => {
    server = await openaiCompatibleServer({ responses: [
      { reply: { text: 'Grüße 🌍' }, splitInside: ['ü', '🌍'] },
      { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached.', type: 'requests', param: null, code: 'rate_limit_exceeded' } } },
    ] });
    const model = aiSdk(createOpenAI({ baseURL: server.baseURL, apiKey: 'sk-test' }).chat('gpt-5-mini'));
    const parts = await collectParts(model.stream!({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
    expect(parts.filter((p) => p.type === 'text').map((p) => (p as { delta: string }).delta).join('')).toBe('Grüße 🌍');
    expect(parts[parts.length - 1]).toMatchObject({ type: 'finish', finishReason: 'stop' });
    const error = await rejection(model.generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
    expect(error).toMatchObject({ name: 'ProviderError', status: 429, retryable: true, retryAfterMs: 1000, providerMessage: 'Rate limit reached.' });
  });
});
