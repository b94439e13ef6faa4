// The OpenAI-compatible provider against a real Chat Completions server on 127.0.0.1: what it
// sends (field for field), what it makes of the replies, and a full agent run over HTTP.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, openai } from '../../src/index.js';
import type { OpenAICompatibleServer } from '../../src/testing/index.js';
import { chatServerPerTest, collectParts } from '../support/chat-server.js';

const weather = defineTool({
  name: 'get_weather',
  description: 'The forecast for a city',
  input: z.object({ city: z.string(), unit: z.enum(['C', 'F']).default('C') }),
  execute: ({ city, unit }) => ({ city, forecast: `sunny, 24°${unit}` }),
});

const serve = chatServerPerTest();

const model = (s: OpenAICompatibleServer, extra: Partial<Parameters<typeof openai>[0]> = {}) => openai({ model: 'gpt-5-mini', baseURL: s.baseURL, apiKey: 'sk-test', ...extra });

describe('openai provider: a full agent run over HTTP', () => {
  it('round-trips tool calls and results, sending messages, tools (zod JSON schema), temperature, max tokens and headers exactly', async () => {
    const s = await serve(
      { reply: { toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }], usage: { prompt_tokens: 40, completion_tokens: 9 } } },
      { reply: { text: 'Paris: sunny, 24°C.', usage: { prompt_tokens: 70, completion_tokens: 6 } } },
    );
    const agent = createAgent({
      instructions: 'You report the weather.',
      model: model(s, { headers: { 'x-team': 'koagent', 'x-trace-id': 'from-provider' } }),
      tools: [weather],
      modelSettings: { temperature: 0.2, maxTokens: 256, headers: { 'x-trace-id': 'from-request' } },
    });
    const result = await agent.run('Weather in Paris?');

    expect(result.text).toBe('Paris: sunny, 24°C.');
    expect(result.usage).toMatchObject({ inputTokens: 110, outputTokens: 15, totalTokens: 125, modelCalls: 2, toolCalls: 1 });
    expect(s.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/chat/completions', 'POST /v1/chat/completions']);
    const tools = [{
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'The forecast for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'], default: 'C' } }, required: ['city'] },
      },
    }];
    expect(s.requests[0].body).toEqual({
      model: 'gpt-5-mini',
      messages: [{ role: 'system', content: 'You report the weather.' }, { role: 'user', content: 'Weather in Paris?' }],
      tools,
      temperature: 0.2,
      max_completion_tokens: 256,
    });
    expect(s.requests[1].body).toEqual({
      model: 'gpt-5-mini',
      messages: [
        { role: 'system', content: 'You report the weather.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_w1', content: '{"city":"Paris","forecast":"sunny, 24°C"}' },
      ],
      tools,
      temperature: 0.2,
      max_completion_tokens: 256,
    });
    const headers = s.requests[0].headers;
    expect(headers.authorization).toBe('Bearer sk-test');
    expect(headers['content-type']).toBe('application/json');
    expect(headers.accept).toBe('application/json');
    expect(headers['x-team']).toBe('koagent');
    expect(headers['x-trace-id']).toBe('from-request');
  });

  it('keeps arguments that are not valid JSON as the raw text: the model gets a validation error and sees its own call verbatim', async () => {
    const s = await serve(
      { reply: { toolCalls: [{ id: 'call_bad', name: 'get_weather', arguments: '{"city": "Par' }] } },
      { reply: { text: 'Sorry.' } },
    );
    const result = await createAgent({ model: model(s), tools: [weather] }).run('Weather?');
    const assistant = result.messages.find((m) => m.role === 'assistant' && m.toolCalls);
    expect(assistant).toMatchObject({ toolCalls: [{ id: 'call_bad', name: 'get_weather', args: '{"city": "Par' }] });
    const tool = result.messages.find((m) => m.role === 'tool');
    expect(tool?.metadata?.error).toMatchObject({ kind: 'validation' });
    expect(s.requests[1].body.messages[1].tool_calls[0].function.arguments).toBe('{"city": "Par');
    expect(s.requests[1].body.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_bad', content: expect.stringMatching(/^Error \(validation\): Invalid arguments for get_weather: the arguments are not valid JSON/) });
  });

  it('passes an assistant turn with both text and tool calls as content plus tool_calls, and sends no tools field when the agent has none', async () => {
    const s = await serve({ reply: { text: 'ok' } });
    await model(s).generate({
      messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c1', name: 'x', args: { a: 1 } }] }, { role: 'tool', toolCallId: 'c1', name: 'x', content: '1' }],
      tools: [],
      topP: 0.5,
      stop: ['END'],
      toolChoice: { name: 'x' },
      extraBody: { reasoning_effort: 'low' },
      somethingForAnotherProvider: true,
    });
    expect(s.requests[0].body).toEqual({
      model: 'gpt-5-mini',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '1' },
      ],
      top_p: 0.5,
      stop: ['END'],
      tool_choice: { type: 'function', function: { name: 'x' } },
      reasoning_effort: 'low',
    });
  });

  it('maps finish reasons and usage from the reply', async () => {
    const s = await serve({ reply: { text: 'cut', finishReason: 'length', usage: { prompt_tokens: 3, completion_tokens: 4 } } });
    const result = await model(s).generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [] });
    expect(result).toEqual({ message: { role: 'assistant', content: 'cut' }, usage: { inputTokens: 3, outputTokens: 4 }, finishReason: 'length' });
  });

  it('sends maxTokens as max_tokens when maxTokensField says so, and no Authorization header without a key', async () => {
    const s = await serve({ reply: { text: 'ok' } });
    await openai({ model: 'llama3.2', baseURL: s.baseURL, maxTokensField: 'max_tokens' }).generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [], maxTokens: 64 });
    expect(s.requests[0].body.max_tokens).toBe(64);
    expect(s.requests[0].body).not.toHaveProperty('max_completion_tokens');
    expect(s.requests[0].headers).not.toHaveProperty('authorization');
  });
});

describe('openai provider: streaming over SSE', () => {
  it('assembles deltas cut mid-UTF-8 character, mid-JSON and mid-"data:" line into the same text and tool calls', async () => {
    const text = 'Café in Zürich 🌍 — ça va?';
    const args = '{"city":"Zürich 🌍","unit":"C"}';
    const s = await serve({
      reply: { text, toolCalls: [{ id: 'call_s1', name: 'get_weather', arguments: args }], usage: { prompt_tokens: 11, completion_tokens: 22 } },
      splitInside: ['é', '🌍', '"tool_calls":[{"index"', 'data: {', '"finish_reason":"tool_calls"', 'data: [DONE]'],
      argumentsPiece: 5,
    });
    const parts = await collectParts(model(s).stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [weather.spec], temperature: 0 }));
    const deltas = parts.filter((p) => p.type === 'text').map((p) => (p as { delta: string }).delta);
    expect(deltas.join('')).toBe(text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(parts.filter((p) => p.type !== 'text')).toEqual([
      { type: 'tool-call', id: 'call_s1', name: 'get_weather', args: { city: 'Zürich 🌍', unit: 'C' } },
      { type: 'finish', usage: { inputTokens: 11, outputTokens: 22 }, finishReason: 'tool_calls' },
    ]);
    expect(s.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true }, temperature: 0 });
    expect(s.requests[0].headers.accept).toBe('text/event-stream');
  });

  it('streams a whole completion as parts when the server ignores stream: true', async () => {
    const s = await serve({ reply: { text: 'whole', toolCalls: [{ id: 'c9', name: 'get_weather', arguments: '{"city":"Oslo"}' }], usage: { prompt_tokens: 1, completion_tokens: 2 } }, ignoreStream: true });
    expect(await collectParts(model(s).stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }))).toEqual([
      { type: 'text', delta: 'whole' },
      { type: 'tool-call', id: 'c9', name: 'get_weather', args: { city: 'Oslo' } },
      { type: 'finish', usage: { inputTokens: 1, outputTokens: 2 }, finishReason: 'tool_calls' },
    ]);
  });
});
