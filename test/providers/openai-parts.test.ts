// Content parts through the OpenAI-compatible provider, against the loopback Chat Completions
// server: what goes on the wire for each part (images, files, audio, reasoning, tool results
// with images), what comes back (reasoning in replies and in stream deltas), and the errors for
// parts the wire cannot carry.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, openai, type Message } from '../../src/index.js';
import type { OpenAICompatibleServer } from '../../src/testing/index.js';
import { rejection } from '../support/core.js';
import { chatServerPerTest, collectParts } from '../support/chat-server.js';

const serve = chatServerPerTest();
const model = (s: OpenAICompatibleServer, extra: Partial<Parameters<typeof openai>[0]> = {}) => openai({ model: 'gpt-5-mini', baseURL: s.baseURL, apiKey: 'sk-test', ...extra });

// The first bytes of real files, in base64: enough for the media type to be read from them.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==';
const PDF = 'JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSPj4Kc3RyZWFtCg==';
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=';

const user = (content: Message['content']): Message => ({ role: 'user', content } as Message);

describe('openai provider: user images and files on the wire', () => {
  it('sends images as image_url parts: base64 as a data URL (media type given or read from the bytes), URLs and data URLs as they are, with the detail level', async () => {
    const s = await serve({ reply: { text: 'Two cats and a chart.' } });
    await model(s).generate({
      tools: [],
      messages: [user([
        { type: 'text', text: 'What is in these?' },
        { type: 'image', image: JPEG, mediaType: 'image/jpeg' },
        { type: 'image', image: PNG },
        { type: 'image', image: 'https://example.com/cat.webp', providerOptions: { openai: { imageDetail: 'low' } } },
        { type: 'image', image: `data:image/gif;base64,R0lGODlhAQABAAAAACw=` },
      ])],
    });
    expect(s.requests[0].body.messages).toEqual([{ role: 'user', content: [
      { type: 'text', text: 'What is in these?' },
      { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${JPEG}` } },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.webp', detail: 'low' } },
      { type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' } },
    ] }]);
  });

  it('sends files as file parts with a data URL and a filename, wav and mp3 as input_audio, and a file of an image type as image_url', async () => {
    const s = await serve({ reply: { text: 'ok' } });
    await model(s).generate({
      tools: [],
      messages: [user([
        { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'invoice.pdf' },
        { type: 'file', data: `data:application/pdf;base64,${PDF}`, mediaType: 'application/pdf' },
        { type: 'file', data: 'aGVsbG8=', mediaType: 'text/plain' },
        { type: 'file', data: WAV, mediaType: 'audio/wav' },
        { type: 'file', data: 'SUQzBAAAAAAAI1RTU0U=', mediaType: 'audio/mpeg' },
        { type: 'file', data: 'https://example.com/chart.png', mediaType: 'image/png' },
      ])],
    });
    expect(s.requests[0].body.messages[0].content).toEqual([
      { type: 'file', file: { filename: 'invoice.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
      { type: 'file', file: { filename: 'file.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
      { type: 'file', file: { filename: 'file.plain', file_data: 'data:text/plain;base64,aGVsbG8=' } },
      { type: 'input_audio', input_audio: { data: WAV, format: 'wav' } },
      { type: 'input_audio', input_audio: { data: 'SUQzBAAAAAAAI1RTU0U=', format: 'mp3' } },
      { type: 'image_url', image_url: { url: 'https://example.com/chart.png' } },
    ]);
  });

  it('keeps a user message of text parts a plain string, as every server takes it', async () => {
    const s = await serve({ reply: { text: 'ok' } });
    await model(s).generate({ tools: [], messages: [user([{ type: 'text', text: 'Hello, ' }, { type: 'text', text: 'world' }])] });
    expect(s.requests[0].body.messages).toEqual([{ role: 'user', content: 'Hello, world' }]);
  });

  it('refuses, before anything is sent, what the wire cannot carry: naming the part, its path and the provider', async () => {
    const s = await serve();
    const send = (content: Message['content'], messages: Message[] = []) => rejection(model(s, { name: 'vllm' }).generate({ tools: [], messages: [...messages, user(content)] }));
    expect((await send([{ type: 'image', image: 'AAAAAAAA' }])).message).toBe(
      "vllm cannot send messages[0].content[0], an image given as base64 without a mediaType: its bytes are not PNG, JPEG, GIF or WebP, so its type cannot be told; set mediaType, e.g. { type: 'image', image, mediaType: 'image/png' }");
    expect((await send([{ type: 'text', text: 'Read it' }, { type: 'file', data: 'https://example.com/a.pdf', mediaType: 'application/pdf' }], [{ role: 'system', content: 'Be brief.' }])).message).toBe(
      "vllm cannot send messages[1].content[1], a file given by URL (https://example.com/a.pdf): Chat Completions takes files as data only; fetch the file and pass its bytes as base64 in `data` (Buffer.from(bytes).toString('base64'))");
    expect((await send([{ type: 'image', image: 'file:///tmp/cat.png' }])).message).toMatch(/^vllm cannot send messages\[0\]\.content\[0\], an image given by a file: URL: the server can fetch only http\(s\) URLs/);
    const assistantFile = await rejection(model(s).generate({ tools: [], messages: [user('Draw a cat'), { role: 'assistant', content: [{ type: 'file', data: PNG, mediaType: 'image/png' }] }, user('Again')] }));
    expect(assistantFile).toBeInstanceOf(TypeError);
    expect(assistantFile.message).toMatch(/^openai cannot send messages\[1\]\.content\[0\], a file part \(image\/png\) in an assistant message: an assistant turn holds text and tool calls/);
    expect(s.requests).toHaveLength(0);
  });
});

describe('openai provider: tool results with images', () => {
  const screenshot = defineTool({
    name: 'screenshot',
    description: 'A screenshot of a page',
    input: z.object({ url: z.string() }),
    execute: ({ url }) => ({ url, png: PNG }),
    toModelOutput: (shot) => [{ type: 'text', text: `Screenshot of ${shot.url}` }, { type: 'image', image: shot.png, mediaType: 'image/png' }],
  });
  const chart = defineTool({
    name: 'chart',
    description: 'A chart',
    input: z.object({}),
    execute: () => PNG,
    toModelOutput: (png) => [{ type: 'image', image: png }],
  });

  it('sends the text in the tool message and the images in one user message after the run of tool messages', async () => {
    const s = await serve(
      { reply: { toolCalls: [{ id: 'call_a', name: 'screenshot', arguments: '{"url":"https://koagent.dev"}' }, { id: 'call_b', name: 'chart', arguments: '{}' }] } },
      { reply: { text: 'The page has a blue header.' } },
    );
    const result = await createAgent({ model: model(s), tools: [screenshot, chart] }).run('Look at koagent.dev');
    expect(result.text).toBe('The page has a blue header.');
    expect(s.requests[1].body.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'Screenshot of https://koagent.dev' },
      { role: 'tool', tool_call_id: 'call_b', content: '(the result is an attachment, sent in the next user message)' },
      { role: 'user', content: [
        { type: 'text', text: 'Attachments of the result of screenshot (tool call call_a):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'text', text: 'Attachments of the result of chart (tool call call_b):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      ] },
    ]);
    // The transcript itself keeps the parts: only the wire splits them.
    expect(result.messages[2]).toMatchObject({ role: 'tool', content: [{ type: 'text' }, { type: 'image', mediaType: 'image/png' }] });
  });

  it('places the attachments before a user message that follows the tool messages, and names a tool image it cannot send', async () => {
    const s = await serve({ reply: { text: 'ok' } });
    const call: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'chart', args: {} }] };
    await model(s).generate({ tools: [], messages: [user('Chart?'), call, { role: 'tool', toolCallId: 'c1', name: 'chart', content: [{ type: 'image', image: PNG }] }, user('And now?')] });
    expect(s.requests[0].body.messages.slice(2).map((m: { role: string }) => m.role)).toEqual(['tool', 'user', 'user']);
    expect(s.requests[0].body.messages[4]).toEqual({ role: 'user', content: 'And now?' });
    const error = await rejection(model(s).generate({ tools: [], messages: [user('Chart?'), call, { role: 'tool', toolCallId: 'c1', name: 'chart', content: [{ type: 'text', text: 'see' }, { type: 'image', image: 'AAAA' }] }] }));
    expect(error.message).toMatch(/^openai cannot send messages\[2\]\.content\[1\], an image given as base64 without a mediaType/);
  });
});

describe('openai provider: reasoning', () => {
  it('reads reasoning_content and reasoning from a whole reply into a reasoning part before the text', async () => {
    const s = await serve(
      { reply: { reasoning: 'The user greets me.', text: 'Hello!' } },
      { reply: { reasoning: 'Only a tool can tell.', reasoningField: 'reasoning', toolCalls: [{ id: 'c1', name: 'x', arguments: '{}' }] } },
      { reply: { text: 'Plain.' } },
    );
    const m = model(s);
    const ask = () => m.generate({ tools: [], messages: [user('Hi')] });
    expect((await ask()).message).toEqual({ role: 'assistant', content: [{ type: 'reasoning', text: 'The user greets me.' }, { type: 'text', text: 'Hello!' }] });
    expect((await ask()).message).toEqual({ role: 'assistant', content: [{ type: 'reasoning', text: 'Only a tool can tell.' }], toolCalls: [{ id: 'c1', name: 'x', args: {} }] });
    expect((await ask()).message).toEqual({ role: 'assistant', content: 'Plain.' });
  });

  it('streams reasoning deltas as reasoning parts, from either field, and an agent keeps them in the reply', async () => {
    const s = await serve(
      { reply: { reasoning: 'Think: 2+2 is 4.', text: 'Four.' } },
      { reply: { reasoning: 'Again.', reasoningField: 'reasoning', text: 'Four!' } },
    );
    const parts = await collectParts(model(s).stream({ tools: [], messages: [user('2+2?')] }));
    const reasoning = parts.filter((p) => p.type === 'reasoning');
    expect(reasoning.length).toBeGreaterThan(1);
    expect(reasoning.map((p) => (p as { delta: string }).delta).join('')).toBe('Think: 2+2 is 4.');
    expect(parts.findIndex((p) => p.type === 'text')).toBeGreaterThan(parts.findLastIndex((p) => p.type === 'reasoning'));

    const events: string[] = [];
    const stream = createAgent({ model: model(s) }).stream('2+2?');
    for await (const event of stream) events.push(event.type);
    const result = await stream.result;
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'reasoning', text: 'Again.' }, { type: 'text', text: 'Four!' }] });
    expect(result.text).toBe('Four!');
  });

  const history: Message[] = [
    user('Weather?'),
    { role: 'assistant', content: [{ type: 'reasoning', text: 'I need the tool.' }, { type: 'reasoning', text: ' Call it.' }], toolCalls: [{ id: 'c1', name: 'get_weather', args: { city: 'Oslo' } }] },
    { role: 'tool', toolCallId: 'c1', name: 'get_weather', content: 'sunny' },
  ];

  it('sends no reasoning back by default, and sends it in reasoning_content or reasoning when sendReasoning asks', async () => {
    const s = await serve({ reply: { text: 'a' } }, { reply: { text: 'b' } }, { reply: { text: 'c' } }, { reply: { text: 'd' } });
    await model(s).generate({ tools: [], messages: history });
    await model(s, { sendReasoning: true }).generate({ tools: [], messages: history });
    await model(s, { sendReasoning: 'reasoning' }).generate({ tools: [], messages: history });
    await collectParts(model(s, { sendReasoning: 'reasoning_content' }).stream({ tools: [], messages: history }));
    const call = [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }];
    expect(s.requests.map((r) => r.body.messages[1])).toEqual([
      { role: 'assistant', content: null, tool_calls: call },
      { role: 'assistant', content: null, tool_calls: call, reasoning_content: 'I need the tool. Call it.' },
      { role: 'assistant', content: null, tool_calls: call, reasoning: 'I need the tool. Call it.' },
      { role: 'assistant', content: null, tool_calls: call, reasoning_content: 'I need the tool. Call it.' },
    ]);
  });

  it('refuses a sendReasoning that names no field, saying which it takes', () => {
    expect(() => openai({ model: 'm', baseURL: 'http://127.0.0.1:1/v1', sendReasoning: 'thoughts' as never })).toThrow(/sendReasoning must be true, false, 'reasoning_content' or 'reasoning'/);
  });
});

describe('openai provider: response formats', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };

  it('sends a JSON schema as json_schema (name, description, strict when asked), JSON without one as json_object, text as nothing', async () => {
    const s = await serve(...Array.from({ length: 5 }, () => ({ reply: { text: '{"city":"Oslo"}' } })));
    const ask = (m: ReturnType<typeof model>, responseFormat: unknown) => m.generate({ tools: [], messages: [user('City?')], responseFormat: responseFormat as never });
    await ask(model(s), { type: 'json', schema, name: 'city answer', description: 'The city' });
    await ask(model(s, { strictJsonSchema: true }), { type: 'json', schema });
    await ask(model(s), { type: 'json' });
    await ask(model(s), { type: 'text' });
    await collectParts(model(s).stream({ tools: [], messages: [user('City?')], responseFormat: { type: 'json', schema } }));
    expect(s.requests.map((r) => r.body.response_format)).toEqual([
      { type: 'json_schema', json_schema: { name: 'city_answer', description: 'The city', schema } },
      { type: 'json_schema', json_schema: { name: 'response', schema, strict: true } },
      { type: 'json_object' },
      undefined,
      { type: 'json_schema', json_schema: { name: 'response', schema } },
    ]);
  });

  it('with structuredOutputs: false, sends json_object and says so on the provider', async () => {
    const s = await serve({ reply: { text: '{}' } });
    const m = model(s, { structuredOutputs: false });
    expect(m.structuredOutputs).toBe(false);
    expect(model(s).structuredOutputs).toBe(true);
    await m.generate({ tools: [], messages: [user('City?')], responseFormat: { type: 'json', schema } });
    expect(s.requests[0].body.response_format).toEqual({ type: 'json_object' });
  });

  it('passes the wire forms as they are, and refuses a response format of another shape', async () => {
    const s = await serve({ reply: { text: '{}' } });
    const wire = { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } };
    await model(s).generate({ tools: [], messages: [user('City?')], responseFormat: wire as never });
    expect(s.requests[0].body.response_format).toEqual(wire);
    await expect(model(s).generate({ tools: [], messages: [user('x')], responseFormat: { type: 'yaml' } as never })).rejects.toThrow(
      `request.responseFormat must be { type: 'text' } or { type: 'json', schema?, name?, description? } (got {"type":"yaml"})`);
    await expect(model(s).generate({ tools: [], messages: [user('x')], responseFormat: { type: 'json', schema: 'object' } as never })).rejects.toThrow(/responseFormat\.schema must be a JSON schema object/);
    expect(s.requests).toHaveLength(1);
  });
});
