// How the OpenAI-compatible provider fails, against a real loopback server: each failure is one
// typed ProviderError (or the run's abort), the retry middleware recovers what is retryable,
// and a failed run's state resumes once the server is back.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAgent, openai, ProviderError, RunFailedError } from '../../src/index.js';
import { retryMiddleware } from '../../src/middleware.js';
import type { StreamPart } from '../../src/types.js';
import type { OpenAICompatibleServer } from '../../src/testing/index.js';
import { add, rejection, runFailure } from '../support/core.js';
import { chatServerPerTest, collectParts } from '../support/chat-server.js';

const serve = chatServerPerTest();

const model = (s: OpenAICompatibleServer) => openai({ model: 'gpt-5-mini', baseURL: s.baseURL, apiKey: 'sk-test' });
const ask = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };
const openaiError = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });

describe('HTTP errors become one typed ProviderError', () => {
  it('a 400 is not retryable and keeps the server\'s message and code verbatim', async () => {
    const s = await serve({ status: 400, body: openaiError("Unsupported value: 'temperature' does not support 0.2 with this model.", 'invalid_request_error', 'unsupported_value') });
    const error = await rejection(model(s).generate(ask));
    expect(ProviderError.is(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'ProviderError', code: 'model_error', kind: 'http', status: 400, retryable: false, provider: 'openai', modelId: 'gpt-5-mini',
      providerMessage: "Unsupported value: 'temperature' does not support 0.2 with this model.", providerCode: 'unsupported_value',
    });
    expect(error.message).toBe("openai (gpt-5-mini): HTTP 400: Unsupported value: 'temperature' does not support 0.2 with this model. (not retryable)");
  });

  it('a 500 is retryable', async () => {
    const s = await serve({ status: 500, body: openaiError('The server had an error while processing your request.', 'server_error', null) });
    const error = await rejection(model(s).generate(ask));
    expect(error).toMatchObject({ kind: 'http', status: 500, retryable: true, providerMessage: 'The server had an error while processing your request.', providerCode: 'server_error' });
  });

  it('a 429 is retryable and carries the wait the server asked for', async () => {
    const s = await serve({ status: 429, headers: { 'retry-after': '3' }, body: openaiError('Rate limit reached for gpt-5-mini.', 'requests', 'rate_limit_exceeded') });
    const error = await rejection(model(s).generate(ask));
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 3000, providerCode: 'rate_limit_exceeded' });
  });

  it('an error body that is plain text (not OpenAI\'s JSON) still gives its text as the message', async () => {
    const s = await serve({ status: 502, body: 'Bad Gateway: upstream timed out' });
    expect(await rejection(model(s).generate(ask))).toMatchObject({ status: 502, retryable: true, providerMessage: 'Bad Gateway: upstream timed out' });
  });

  it('a 401 tells the user what to check', async () => {
    const s = await serve({ status: 401, body: openaiError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key') });
    const error = await rejection(model(s).generate(ask));
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(error.message).toMatch(/Incorrect API key provided\..*Check the apiKey or headers this server expects/);
  });

  it('a 200 whose body is not JSON is a malformed-response error, not retryable', async () => {
    const s = await serve({ rawBody: '{"id":"chatcmpl-1","choices":[{"message":' });
    const error = await rejection(model(s).generate(ask));
    expect(error).toMatchObject({ kind: 'malformed', status: 200, retryable: false });
    expect(error.message).toMatch(/the body is not JSON .*Is http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions an OpenAI-compatible Chat Completions endpoint\?/);
  });

  it('a 200 whose JSON is not a chat.completion says what is missing', async () => {
    const s = await serve({ rawBody: '{"object":"list","data":[]}' });
    expect((await rejection(model(s).generate(ask))).message).toMatch(/the body has no choices\[0\]/);
  });

  it('a refused connection is a retryable network error naming the URL', async () => {
    const s = await serve();
    const url = s.baseURL;
    await s.close();
    const error = await rejection(openai({ model: 'm', baseURL: url }).generate(ask));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(/ECONNREFUSED.*POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/);
  });
});

describe('streamed replies that break', () => {
  it('a connection reset mid-stream is a retryable network error', async () => {
    const s = await serve({ reply: { text: 'This reply will be cut short by the server.' }, resetAfterEvents: 3 });
    const seen: StreamPart[] = [];
    const error = await rejection((async () => { for await (const part of model(s).stream(ask)) seen.push(part); })());
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((p) => p.type === 'finish')).toBe(false);
  });

  it('an error event inside the stream is a retryable stream error with the server\'s message', async () => {
    const s = await serve({ reply: { text: 'Half a reply' }, errorAfterEvents: 2 });
    const error = await rejection(collectParts(model(s).stream(ask)));
    expect(error).toMatchObject({ kind: 'stream', status: 200, retryable: true, providerCode: 'server_error', providerMessage: 'The server had an error while processing your request. Sorry about that!' });
  });

  it('a stream event that is not JSON is a malformed-response error', async () => {
    const s = await serve({ rawBody: 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {oops\n\n', contentType: 'text/event-stream' });
    expect(await rejection(collectParts(model(s).stream(ask)))).toMatchObject({ kind: 'malformed', retryable: false, message: expect.stringMatching(/a stream event is not JSON/) });
  });

  it('a stream that ends without a finish reason or [DONE] is a retryable network error', async () => {
    const s = await serve({ rawBody: 'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n', contentType: 'text/event-stream' });
    expect(await rejection(collectParts(model(s).stream(ask)))).toMatchObject({ kind: 'network', retryable: true, message: expect.stringMatching(/ended before the reply was complete/) });
  });
});

describe('through an agent: no run state is lost', () => {
  it('a 429 with Retry-After, then success, through retryMiddleware: two requests, the wait the server asked for', async () => {
    const s = await serve(
      { status: 429, headers: { 'retry-after': '2' }, body: openaiError('Rate limit reached.', 'requests', 'rate_limit_exceeded') },
      { reply: { text: 'Hello after the wait.' } },
    );
    const waits: number[] = [];
    const retry = retryMiddleware({ sleep: async (ms) => { waits.push(ms); } });
    const result = await createAgent({ model: model(s), middleware: [retry] }).run('Hi');
    expect(result.text).toBe('Hello after the wait.');
    expect(s.requests).toHaveLength(2);
    expect(waits).toEqual([2000]);
    expect(result.usage.modelCalls).toBe(2);
  });

  it('a 429 whose retry-after-ms is small is waited out with the real timer', async () => {
    const s = await serve(
      { status: 429, headers: { 'retry-after-ms': '15' }, body: openaiError('Rate limit reached.', 'tokens', 'rate_limit_exceeded') },
      { status: 503, body: openaiError('Overloaded.', 'server_error', null) },
      { reply: { text: 'third time lucky' } },
    );
    const result = await createAgent({ model: model(s), middleware: [retryMiddleware({ initialDelayMs: 5 })] }).run('Hi');
    expect(result.text).toBe('third time lucky');
    expect(s.requests).toHaveLength(3);
  });

  it('a 400 is not retried: one request, the run fails with model_error and the ProviderError as cause', async () => {
    const s = await serve({ status: 400, body: openaiError("Invalid 'messages[1]'.", 'invalid_request_error', null) }, { reply: { text: 'never' } });
    const error = await runFailure(createAgent({ model: model(s), middleware: [retryMiddleware({ sleep: async () => {} })] }).run('Hi'), 'model_error');
    expect(s.requests).toHaveLength(1);
    expect(ProviderError.is(error.cause)).toBe(true);
    expect(error.cause).toMatchObject({ status: 400, providerMessage: "Invalid 'messages[1]'." });
  });

  it('a connection reset mid-reply fails the run with the ProviderError as cause; the state resumes once the server is back', async () => {
    const s = await serve(
      { reply: { toolCalls: [{ id: 'call_a', name: 'add', arguments: '{"a":2,"b":3}' }] } },
      { reply: { text: 'The sum is 5.' }, resetAfterBytes: 40 },
    );
    const agent = createAgent({ instructions: 'Add things.', model: model(s), tools: [add] });
    const error = await runFailure(agent.run('2+3?'), 'model_error');
    expect(error).toBeInstanceOf(RunFailedError);
    expect(ProviderError.is(error.cause)).toBe(true);
    expect(error.cause).toMatchObject({ kind: 'network', retryable: true });
    expect(error.state.status).toBe('failed');
    expect(error.state.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(JSON.parse(JSON.stringify(error.state))).toEqual(error.state);

    s.push({ reply: { text: 'The sum is 5.' } });
    const resumed = await agent.resume(error.state);
    expect(resumed.text).toBe('The sum is 5.');
    expect(resumed.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(resumed.usage.toolCalls).toBe(1);
    // The resumed request carries the whole transcript, the tool result included, exactly once.
    expect(s.requests[2].body.messages.filter((m: { role: string }) => m.role === 'tool')).toEqual([{ role: 'tool', tool_call_id: 'call_a', content: '5' }]);
  });

  it('a slow server aborted by the signal: the run ends aborted, the transcript has no half reply, and the request is dropped', async () => {
    const s = await serve({ hang: true });
    const controller = new AbortController();
    const pending = createAgent({ model: model(s) }).run('Hi', { signal: controller.signal });
    await s.received(1);
    controller.abort(new Error('user pressed stop'));
    const result = await pending;
    expect(result).toMatchObject({ status: 'completed', stopReason: 'aborted' });
    expect(result.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    // The request was made (the server may bill it): it counts, with no tokens.
    expect(result.usage).toMatchObject({ modelCalls: 1, totalTokens: 0 });
    await s.disconnected(1);
    expect(s.disconnects).toBe(1);
  });

  it('an aborted stream rejects with the signal\'s reason, and the server sees the client go', async () => {
    const s = await serve({ hang: true });
    const controller = new AbortController();
    const reason = new Error('stop streaming');
    const pending = collectParts(model(s).stream({ ...ask, signal: controller.signal }));
    await s.received(1);
    controller.abort(reason);
    expect(await rejection(pending)).toBe(reason);
    await s.disconnected(1);
    expect(s.disconnects).toBe(1);
  });
});

describe('construction', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('without a key for OpenAI itself, openai() names OPENAI_API_KEY', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    vi.stubEnv('OPENAI_BASE_URL', '');
    expect(() => openai({ model: 'gpt-5-mini' })).toThrow(/no API key for https:\/\/api\.openai\.com\/v1; set OPENAI_API_KEY or pass apiKey/);
  });

  it('never sends OPENAI_API_KEY to a baseURL given in code', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-secret');
    const s = await serve({ reply: { text: 'ok' } });
    await openai({ model: 'm', baseURL: s.baseURL }).generate(ask);
    expect(s.requests[0].headers).not.toHaveProperty('authorization');
  });

  it('uses OPENAI_BASE_URL and OPENAI_API_KEY together from the environment', async () => {
    const s = await serve({ reply: { text: 'ok' } });
    vi.stubEnv('OPENAI_API_KEY', 'sk-env');
    vi.stubEnv('OPENAI_BASE_URL', s.baseURL);
    await openai({ model: 'm' }).generate(ask);
    expect(s.requests[0].headers.authorization).toBe('Bearer sk-env');
  });

  it('rejects bad options naming the option', () => {
    expect(() => openai({ model: '' })).toThrow(/model must be the model id/);
    expect(() => openai({ model: 'm', baseURL: 'not a url' })).toThrow(/baseURL "not a url" is not a URL/);
    expect(() => openai({ model: 'm', baseURL: 'http://x', maxTokensField: 'max' as never })).toThrow(/maxTokensField must be/);
    expect(() => openai({ model: 'm', baseURL: 'http://x', headers: { a: 1 } as never })).toThrow(/headers\.a must be a string \(got 1\)/);
  });

  it('rejects a request whose temperature or maxTokens is not a number, before sending it', async () => {
    const s = await serve();
    await expect(model(s).generate({ ...ask, temperature: 'hot' as unknown as number })).rejects.toThrow(/request\.temperature must be a number/);
    await expect(model(s).generate({ ...ask, maxTokens: 0 })).rejects.toThrow(/request\.maxTokens must be a whole number ≥ 1/);
    expect(s.requests).toHaveLength(0);
  });
});
