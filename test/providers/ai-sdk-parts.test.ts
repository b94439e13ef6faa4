// Content parts through the AI SDK adapter, with the AI SDK's own MockLanguageModelV3 (and a
// LanguageModelV2 object): every part of the transcript in the prompt, every part of a reply and
// of a stream back in koagent's terms, provider metadata round-tripped, and the errors for parts
// a model cannot take.
import type { LanguageModelV2, LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Message } from '../../src/index.js';
import { aiSdk } from '../../src/providers/ai-sdk.js';
import { collectParts } from '../support/chat-server.js';
import { rejection } from '../support/core.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF = 'JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSPj4Kc3RyZWFtCg==';
const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };
const generated = (content: LanguageModelV3GenerateResult['content'], unified: 'stop' | 'tool-calls' = 'stop'): LanguageModelV3GenerateResult => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] });
const ok = () => generated([{ type: 'text', text: 'ok' }]);
const SUPPORTED = { 'image/*': [/^https:\/\/.*$/], 'application/pdf': [/^https:\/\/docs\.example\/.*$/] };

const transcript: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: [
    { type: 'text', text: 'Compare these', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } },
    { type: 'image', image: PNG },
    { type: 'image', image: 'https://img.example/cat.jpg' },
    { type: 'image', image: `data:image/gif;base64,R0lGODlhAQABAAAAACw=` },
    { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'a.pdf' },
    { type: 'file', data: 'https://docs.example/b.pdf', mediaType: 'application/pdf' },
  ] },
  { role: 'assistant', content: [
    { type: 'reasoning', text: 'Both are cats.', providerOptions: { anthropic: { signature: 'sig-1' } } },
    { type: 'text', text: 'Let me look closer.' },
    { type: 'file', data: PNG, mediaType: 'image/png', providerOptions: { google: { thoughtSignature: 'ts-f' } } },
  ], toolCalls: [
    { id: 'c1', name: 'zoom', args: { x: 1 }, providerOptions: { google: { thoughtSignature: 'ts-1' } } },
    { id: 'c2', name: 'fetch_doc', args: '{"broken"' },
    { id: 'c3', name: 'zoom', args: {} },
  ] },
  { role: 'tool', toolCallId: 'c1', name: 'zoom', content: [
    { type: 'text', text: 'Zoomed' },
    { type: 'image', image: PNG, mediaType: 'image/png' },
    { type: 'image', image: 'https://img.example/zoom.png' },
    { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'z.pdf' },
    { type: 'file', data: 'https://docs.example/z.pdf', mediaType: 'application/pdf' },
  ] },
  { role: 'tool', toolCallId: 'c2', name: 'fetch_doc', content: 'Error (validation): not JSON', metadata: { error: { kind: 'validation', message: 'not JSON' } } },
  { role: 'tool', toolCallId: 'c3', name: 'zoom', content: 'plain' },
];

/** URL objects compare equal to any other URL in toEqual, so the prompt is checked with them spelled out. */
function spelled(value: unknown): unknown {
  if (value instanceof URL) return { url: value.href };
  if (Array.isArray(value)) return value.map(spelled);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, spelled(v)]));
  return value;
}

describe('aiSdk(model): the prompt holds every part', () => {
  it('maps text, images, files, reasoning, tool calls and tool results (V3 content outputs) with their provider options', async () => {
    const model = new MockLanguageModelV3({ supportedUrls: SUPPORTED, doGenerate: ok() });
    await aiSdk(model).generate({ messages: transcript, tools: [] });
    const prompt = model.doGenerateCalls[0].prompt;
    expect((prompt[1].content[2] as { data: unknown }).data).toBeInstanceOf(URL);
    expect(spelled(prompt)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [
        { type: 'text', text: 'Compare these', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } },
        { type: 'file', data: PNG, mediaType: 'image/png' },
        { type: 'file', data: { url: 'https://img.example/cat.jpg' }, mediaType: 'image/*' },
        { type: 'file', data: 'R0lGODlhAQABAAAAACw=', mediaType: 'image/gif' },
        { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'a.pdf' },
        { type: 'file', data: { url: 'https://docs.example/b.pdf' }, mediaType: 'application/pdf' },
      ] },
      { role: 'assistant', content: [
        { type: 'reasoning', text: 'Both are cats.', providerOptions: { anthropic: { signature: 'sig-1' } } },
        { type: 'text', text: 'Let me look closer.' },
        { type: 'file', data: PNG, mediaType: 'image/png', providerOptions: { google: { thoughtSignature: 'ts-f' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'zoom', input: { x: 1 }, providerOptions: { google: { thoughtSignature: 'ts-1' } } },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'fetch_doc', input: '{"broken"' },
        { type: 'tool-call', toolCallId: 'c3', toolName: 'zoom', input: {} },
      ] },
      { role: 'tool', content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'zoom', output: { type: 'content', value: [
          { type: 'text', text: 'Zoomed' },
          { type: 'image-data', data: PNG, mediaType: 'image/png' },
          { type: 'image-url', url: 'https://img.example/zoom.png' },
          { type: 'file-data', data: PDF, mediaType: 'application/pdf', filename: 'z.pdf' },
          { type: 'file-url', url: 'https://docs.example/z.pdf', mediaType: 'application/pdf' },
        ] } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'fetch_doc', output: { type: 'error-text', value: 'Error (validation): not JSON' } },
        { type: 'tool-result', toolCallId: 'c3', toolName: 'zoom', output: { type: 'text', value: 'plain' } },
      ] },
    ]);
  });

  it('gives a V2 (AI SDK 5) model tool-result images and files as base64 media, and refuses one given by URL', async () => {
    const prompts: unknown[] = [];
    const v2: LanguageModelV2 = {
      specificationVersion: 'v2', provider: 'five', modelId: 'm', supportedUrls: {},
      async doGenerate(options) {
        prompts.push(options.prompt);
        return { content: [{ type: 'text', text: 'ok' }], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, warnings: [] };
      },
      async doStream() {
        throw new Error('not used');
      },
    };
    const call: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'shot', args: {} }] };
    const result = (content: Message['content']): Message[] => [{ role: 'user', content: 'Shoot' }, call, { role: 'tool', toolCallId: 'c1', name: 'shot', content } as Message];
    await aiSdk(v2).generate({ tools: [], messages: result([{ type: 'text', text: 'Shot' }, { type: 'image', image: PNG }, { type: 'file', data: `data:application/pdf;base64,${PDF}`, mediaType: 'application/pdf' }]) });
    expect((prompts[0] as Array<{ content: unknown }>)[2].content).toEqual([{ type: 'tool-result', toolCallId: 'c1', toolName: 'shot', output: { type: 'content', value: [
      { type: 'text', text: 'Shot' },
      { type: 'media', data: PNG, mediaType: 'image/png' },
      { type: 'media', data: PDF, mediaType: 'application/pdf' },
    ] } }]);
    const error = await rejection(aiSdk(v2).generate({ tools: [], messages: result([{ type: 'image', image: 'https://img.example/x.png' }]) }));
    expect(error.message).toBe('ai-sdk:five cannot send messages[2].content[0], an image given by URL in a tool result: a v2 (AI SDK 5) tool result holds media as base64 data only; return the bytes as base64 with their mediaType');
    expect(prompts).toHaveLength(1);
  });

  it('refuses, before calling the model, a URL the model does not fetch itself and an image whose type cannot be told', async () => {
    const model = new MockLanguageModelV3({ provider: 'anthropic.messages', supportedUrls: SUPPORTED, doGenerate: ok() });
    const send = (content: Message['content']) => rejection(aiSdk(model).generate({ tools: [], messages: [{ role: 'user', content } as Message] }));
    expect((await send([{ type: 'file', data: 'https://elsewhere.example/c.pdf', mediaType: 'application/pdf' }])).message).toBe(
      "ai-sdk:anthropic.messages cannot send messages[0].content[0], a file given by URL (https://elsewhere.example/c.pdf, application/pdf): the model does not fetch such URLs itself (see its supportedUrls), and koagent does not download them; pass the bytes as base64 with their mediaType (Buffer.from(bytes).toString('base64'))");
    expect((await send([{ type: 'text', text: 'See' }, { type: 'image', image: 'http://img.example/plain-http.png' }])).message).toMatch(/^ai-sdk:anthropic\.messages cannot send messages\[0\]\.content\[1\], an image given by URL \(http:\/\/img\.example\/plain-http\.png, image\/\*\)/);
    expect((await send([{ type: 'image', image: 'AAAAAAAA' }])).message).toMatch(/cannot send messages\[0\]\.content\[0\], an image given as base64 without a mediaType: .*set mediaType/);
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it('passes responseFormat through as the call option, and refuses one of another shape', async () => {
    const model = new MockLanguageModelV3({ doGenerate: ok() });
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    await aiSdk(model).generate({ tools: [], messages: [{ role: 'user', content: 'City?' }], responseFormat: { type: 'json', schema, name: 'city' } });
    expect(model.doGenerateCalls[0].responseFormat).toEqual({ type: 'json', schema, name: 'city' });
    await expect(aiSdk(model).generate({ tools: [], messages: [], responseFormat: { type: 'json_object' } as never })).rejects.toThrow(/request\.responseFormat must be \{ type: 'text' \} or \{ type: 'json'/);
  });
});

describe('aiSdk(model): replies come back part for part', () => {
  it('reads text, reasoning (provider metadata as providerOptions), files and tool calls; two reasoning parts stay two', async () => {
    const bytes = Uint8Array.from(Buffer.from(PNG, 'base64'));
    const model = new MockLanguageModelV3({ doGenerate: generated([
      { type: 'reasoning', text: 'First thought.', providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'enc==' } } },
      { type: 'reasoning', text: 'Second thought.' },
      { type: 'text', text: 'Here is a cat:' },
      { type: 'file', mediaType: 'image/png', data: bytes },
      { type: 'source', sourceType: 'url', id: 's1', url: 'https://cats.example' },
      { type: 'tool-call', toolCallId: 'g1', toolName: 'zoom', input: '{"x":2}', providerMetadata: { google: { thoughtSignature: 'ts-9' } } },
    ], 'tool-calls') });
    expect((await aiSdk(model).generate({ tools: [], messages: [{ role: 'user', content: 'Cat?' }] })).message).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'First thought.', providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'enc==' } } },
        { type: 'reasoning', text: 'Second thought.' },
        { type: 'text', text: 'Here is a cat:' },
        { type: 'file', data: PNG, mediaType: 'image/png' },
      ],
      toolCalls: [{ id: 'g1', name: 'zoom', args: { x: 2 }, providerOptions: { google: { thoughtSignature: 'ts-9' } } }],
    });
  });

  it('keeps a reply of text alone a plain string', async () => {
    const model = new MockLanguageModelV3({ doGenerate: generated([{ type: 'text', text: 'Hello ' }, { type: 'text', text: 'there' }]) });
    expect((await aiSdk(model).generate({ tools: [], messages: [] })).message).toEqual({ role: 'assistant', content: 'Hello there' });
  });
});

describe('aiSdk(model): streamed reasoning and files', () => {
  const chunks: LanguageModelV3StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'reasoning-start', id: 'r0', providerMetadata: { anthropic: { redactedData: 'opaque==' } } },
    { type: 'reasoning-end', id: 'r0' },
    { type: 'reasoning-start', id: 'r1' },
    { type: 'reasoning-delta', id: 'r1', delta: 'Look at ' },
    { type: 'reasoning-delta', id: 'r1', delta: 'the cat.' },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: 'A cat.' },
    // The metadata of r1 comes after its text had begun: it still belongs to r1.
    { type: 'reasoning-end', id: 'r1', providerMetadata: { openai: { itemId: 'rs_7', reasoningEncryptedContent: 'enc7' } } },
    { type: 'text-end', id: 't1' },
    { type: 'file', mediaType: 'image/png', data: PNG },
    { type: 'tool-call', toolCallId: 'z1', toolName: 'zoom', input: '{}', providerMetadata: { google: { thoughtSignature: 'ts-z' } } },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage },
  ];

  it('turns reasoning-start/delta/end into reasoning parts with their id, carrying metadata that comes on start or end', async () => {
    const model = new MockLanguageModelV3({ doStream: { stream: simulateReadableStream({ chunks }) } });
    expect(await collectParts(aiSdk(model).stream!({ tools: [], messages: [{ role: 'user', content: 'Cat?' }] }))).toEqual([
      { type: 'reasoning', delta: '', id: 'r0', providerOptions: { anthropic: { redactedData: 'opaque==' } } },
      { type: 'reasoning', delta: 'Look at ', id: 'r1' },
      { type: 'reasoning', delta: 'the cat.', id: 'r1' },
      { type: 'text', delta: 'A cat.', id: 't1' },
      { type: 'reasoning', delta: '', id: 'r1', providerOptions: { openai: { itemId: 'rs_7', reasoningEncryptedContent: 'enc7' } } },
      { type: 'file', data: PNG, mediaType: 'image/png' },
      { type: 'tool-call', id: 'z1', name: 'zoom', args: {}, providerOptions: { google: { thoughtSignature: 'ts-z' } } },
      { type: 'finish', usage: { inputTokens: 3, outputTokens: 2 }, finishReason: 'tool_calls' },
    ]);
  });

  it('assembles them in an agent run into a reply whose reasoning parts carry their metadata, sent back on the next call', async () => {
    const model = new MockLanguageModelV3({
      doStream: [
        { stream: simulateReadableStream({ chunks }) },
        { stream: simulateReadableStream<LanguageModelV3StreamPart>({ chunks: [{ type: 'text-delta', id: 't', delta: 'Zoomed.' }, { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage }] }) },
      ],
    });
    const zoom = defineTool({ name: 'zoom', description: 'Zoom', input: z.object({}), execute: () => 'zoomed' });
    const stream = createAgent({ model: aiSdk(model), tools: [zoom] }).stream('Cat?');
    for await (const _ of stream);
    const result = await stream.result;
    const reply = [
      { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque==' } } },
      { type: 'reasoning', text: 'Look at the cat.', providerOptions: { openai: { itemId: 'rs_7', reasoningEncryptedContent: 'enc7' } } },
      { type: 'text', text: 'A cat.' },
      { type: 'file', data: PNG, mediaType: 'image/png' },
    ];
    expect(result.messages[1]).toEqual({ role: 'assistant', content: reply, toolCalls: [{ id: 'z1', name: 'zoom', args: {}, providerOptions: { google: { thoughtSignature: 'ts-z' } } }] });
    expect(model.doStreamCalls[1].prompt[1]).toEqual({ role: 'assistant', content: [
      ...reply.slice(0, 3),
      { type: 'file', data: PNG, mediaType: 'image/png' },
      { type: 'tool-call', toolCallId: 'z1', toolName: 'zoom', input: {}, providerOptions: { google: { thoughtSignature: 'ts-z' } } },
    ] });
  });
});

describe('aiSdk(model): text with provider metadata', () => {
  const itemId = { openai: { itemId: 'msg_7' } };

  it('keeps a text part\'s metadata (an item id) from a whole reply and sends it back on the next call', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => generated([{ type: 'text', text: 'Hello.', providerMetadata: itemId }]) });
    const agent = createAgent({ model: aiSdk(model) });
    const first = await agent.send('Hi');
    expect(first.messages.at(-1)?.content).toEqual([{ type: 'text', text: 'Hello.', providerOptions: itemId }]);
    await agent.send('Again');
    expect(model.doGenerateCalls[1].prompt[1]).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Hello.', providerOptions: itemId }] });
  });

  it('puts metadata that arrives on text-end on the streamed text, and leaves text without metadata a string', async () => {
    const chunks = (meta: boolean): LanguageModelV3StreamPart[] => [
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Hel' },
      { type: 'text-delta', id: 't1', delta: 'lo.' },
      meta ? { type: 'text-end', id: 't1', providerMetadata: itemId } : { type: 'text-end', id: 't1' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
    ];
    for (const meta of [true, false]) {
      const model = new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks: chunks(meta) }) }) });
      const result = await createAgent({ model: aiSdk(model) }).stream('Hi').result;
      expect(result.messages.at(-1)?.content).toEqual(meta ? [{ type: 'text', text: 'Hello.', providerOptions: itemId }] : 'Hello.');
    }
  });
});
