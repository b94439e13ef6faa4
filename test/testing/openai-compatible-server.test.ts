// openaiCompatibleServer: a scripted Chat Completions server on loopback, as a user's tests use
// it — through openai() and an agent — and as the wire shows it (fetch). (That it is on
// koagent/testing only, out of the root's reach: test/exports.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, openai, ProviderError } from '../../src/index.js';
import { openaiCompatibleServer, type OpenAICompatibleServer, type ScriptedResponse } from '../../src/testing/index.js';
import { rejection } from '../support/core.js';

let server: OpenAICompatibleServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const start = async (...responses: ScriptedResponse[]) => (server = await openaiCompatibleServer({ responses }));
const modelOn = (s: OpenAICompatibleServer) => openai({ model: 'gpt-5-mini', baseURL: s.baseURL, apiKey: 'sk-test' });
const weather = defineTool({
  name: 'get_weather',
  description: 'The forecast for a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, forecast: 'sunny' }),
});
const post = (s: OpenAICompatibleServer, body: object) => fetch(`${s.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('scripted replies', () => {
  it('answers each request with the next reply, as a chat.completion', async () => {
    const s = await start({ reply: { text: 'Hello.', usage: { prompt_tokens: 3, completion_tokens: 2 } } });
    const response = await post(s, { model: 'gpt-5-mini', messages: [{ role: 'user', content: 'Hi' }] });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-5-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it('runs an agent through openai(): scripted tool calls (ids and JSON filled in) reach the tool, and the next reply ends the run', async () => {
    const s = await start({ reply: { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] } }, { reply: { text: 'Sunny in Paris.' } });
    const result = await createAgent({ model: modelOn(s), tools: [weather] }).run('Weather in Paris?');
    expect(result.text).toBe('Sunny in Paris.');
    expect(s.requests[1].body.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1_0', content: '{"city":"Paris","forecast":"sunny"}' },
    ]);
  });

  it('sends reasoning in the field the reply names', async () => {
    const s = await start({ reply: { reasoning: 'Think.', text: 'Four.' } }, { reply: { reasoning: 'Again.', reasoningField: 'reasoning', text: 'Four!' } });
    const first = (await (await post(s, { messages: [] })).json()) as any;
    const second = (await (await post(s, { messages: [] })).json()) as any;
    expect(first.choices[0].message.reasoning_content).toBe('Think.');
    expect(second.choices[0].message.reasoning).toBe('Again.');
  });
});

describe('streaming (SSE)', () => {
  it('streams a reply as chat.completion.chunk events when the request asks, ending with [DONE]', async () => {
    const s = await start({ reply: { text: 'Hello there.' } });
    const response = await post(s, { model: 'm', messages: [], stream: true, stream_options: { include_usage: true } });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await response.text()).split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello there.');
    expect(chunks.at(-1).usage).toMatchObject({ completion_tokens: expect.any(Number) });
  });

  it('streams an agent run through openai(), cut inside multi-byte characters where splitInside says', async () => {
    const s = await start({ reply: { text: 'Grüße 🌍' }, splitInside: ['ü', '🌍'] });
    const deltas: string[] = [];
    const stream = createAgent({ model: modelOn(s) }).stream('Hi');
    for await (const event of stream) if (event.type === 'text.delta') deltas.push(event.delta);
    expect((await stream.result).text).toBe('Grüße 🌍');
    expect(deltas.join('')).toBe('Grüße 🌍');
    expect(s.requests[0].body.stream).toBe(true);
  });

  it('answers a streamed request with a whole completion when the response says ignoreStream', async () => {
    const s = await start({ reply: { text: 'whole' }, ignoreStream: true });
    const response = await post(s, { messages: [], stream: true });
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(((await response.json()) as any).choices[0].message.content).toBe('whole');
  });
});

describe('failures a test can script', () => {
  it('answers an HTTP error with its status, body and headers: openai() reports it as a ProviderError', async () => {
    const s = await start({ status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'Slow down.', type: 'requests', param: null, code: 'rate_limit_exceeded' } } });
    const error = await rejection(modelOn(s).generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }));
    expect(ProviderError.is(error) && error.status).toBe(429);
  });

  it('answers a request beyond the script with a 500 that says so', async () => {
    const s = await start();
    const response = await post(s, { messages: [] });
    expect(response.status).toBe(500);
    expect(((await response.json()) as any).error.message).toBe('openaiCompatibleServer: no response scripted for request 1; add one to responses (or push it)');
  });

  it('answers a splitInside that is not in the stream with a 500 that names it, and keeps serving', async () => {
    const s = await start({ reply: { text: 'abc' }, splitInside: ['zz'] }, { reply: { text: 'next' } });
    const response = await post(s, { messages: [], stream: true });
    expect(response.status).toBe(500);
    expect(((await response.json()) as any).error.message).toContain('cannot cut inside "zz"');
    expect((await (await post(s, { messages: [] })).json()) as any).toMatchObject({ choices: [{ message: { content: 'next' } }] });
  });

  it('holds a hanging request until the client goes away, and counts the disconnect; disconnected(n) waits for the nth', async () => {
    const s = await start({ hang: true });
    const controller = new AbortController();
    const pending = fetch(`${s.baseURL}/chat/completions`, { method: 'POST', body: '{}', signal: controller.signal }).then(() => 'answered', () => 'aborted');
    await s.received(1);
    expect(s.disconnects).toBe(0);
    controller.abort();
    expect(await pending).toBe('aborted');
    await s.disconnected(1);
    expect(s.disconnects).toBe(1);
  });
});

describe('the request log', () => {
  it('keeps each request: method, path, headers and parsed body; received(n) waits for the nth; push adds responses', async () => {
    const s = await start({ reply: { text: 'one' } });
    await createAgent({ model: modelOn(s), instructions: 'Be brief.' }).run('First');
    s.push({ reply: { text: 'two' } });
    const second = createAgent({ model: modelOn(s) }).run('Second');
    await s.received(2);
    expect((await second).text).toBe('two');
    expect(s.requests).toHaveLength(2);
    expect(s.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', headers: { authorization: 'Bearer sk-test' } });
    expect(s.requests[0].body).toMatchObject({ model: 'gpt-5-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'First' }] });
  });
});
