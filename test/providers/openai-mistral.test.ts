// Mistral's reasoning models (Magistral, and others with reasoning_effort) through openai(),
// against the loopback server sending the bodies Mistral sends: `content` (whole, and in stream
// deltas) is an array of `thinking` and `text` parts, and a stream may switch between that and
// plain strings from one delta to the next. Text is read as text, thinking as reasoning; a shape
// that cannot be read fails the call, so no text is lost in silence.
import { describe, expect, it } from 'vitest';
import { createAgent, openai } from '../../src/index.js';
import type { OpenAICompatibleServer } from '../../src/testing/index.js';
import { rejection } from '../support/core.js';
import { chatServerPerTest, collectParts } from '../support/chat-server.js';

const serve = chatServerPerTest();
const model = (s: OpenAICompatibleServer) => openai({ name: 'mistral', model: 'magistral-medium-2509', baseURL: s.baseURL, apiKey: 'test-key', maxTokensField: 'max_tokens' });
const ask = { tools: [], messages: [{ role: 'user' as const, content: 'What is 17 × 23? Answer with the number only.' }] };

const THOUGHT = 'The user asks for 17 × 23. 17 × 20 = 340 and 17 × 3 = 51, so 340 + 51 = 391.';
const usage = { prompt_tokens: 21, total_tokens: 96, completion_tokens: 75 };

/** A whole `chat.completion` as Mistral sends it, with this `content`. */
const completion = (content: unknown) => JSON.stringify({
  id: '3e8f0a1c5b7d4e2f9a6c8b1d0e3f5a7c', object: 'chat.completion', created: 1762355135, model: 'magistral-medium-2509',
  choices: [{ index: 0, message: { role: 'assistant', tool_calls: null, content }, finish_reason: 'stop' }], usage,
});

/** An SSE body of `chat.completion.chunk` events as Mistral streams them: one per delta, usage on the last, then [DONE]. */
function sse(deltas: Array<Record<string, unknown>>): string {
  const chunk = (delta: Record<string, unknown>, last: boolean) => ({
    id: 'c3c77283055240cbbaf6f01d384cfccb', object: 'chat.completion.chunk', created: 1762355135, model: 'magistral-medium-2509',
    choices: [{ index: 0, delta, finish_reason: last ? 'stop' : null }], ...(last ? { usage } : {}),
  });
  return deltas.map((d, i) => `data: ${JSON.stringify(chunk(d, i === deltas.length - 1))}\n\n`).join('') + 'data: [DONE]\n\n';
}
const thinking = (text: string) => ({ type: 'thinking', thinking: [{ type: 'text', text }] });

/** The stream of the issue: thinking in pieces, then "391" as a text part "3" and a plain string "91". */
const mixedStream = sse([
  { role: 'assistant', content: '' },
  { content: [thinking('The user asks for 17 × 23. ')] },
  { content: [thinking('17 × 20 = 340 and 17 × 3 = 51, ')] },
  { content: [thinking('so 340 + 51 = 391.')] },
  { content: [{ type: 'text', text: '3' }] },
  { content: '91' },
  { content: '' },
]);

describe('openai provider: content as an array of thinking and text parts (Mistral)', () => {
  it('reads a whole reply: the thinking part as reasoning, the text part as the text', async () => {
    const s = await serve({ rawBody: completion([thinking(THOUGHT), { type: 'text', text: '391' }]) });
    expect(await model(s).generate(ask)).toEqual({
      message: { role: 'assistant', content: [{ type: 'reasoning', text: THOUGHT }, { type: 'text', text: '391' }] },
      usage: { inputTokens: 21, outputTokens: 75 },
      finishReason: 'stop',
    });
  });

  it('reads a reply of text parts only as its plain string, joined', async () => {
    const s = await serve({ rawBody: completion([{ type: 'text', text: 'Three hundred ' }, { type: 'text', text: 'ninety-one.' }]) });
    expect((await model(s).generate(ask)).message).toEqual({ role: 'assistant', content: 'Three hundred ninety-one.' });
  });

  it('streams thinking deltas as reasoning and keeps every piece of text, whichever shape each delta has', async () => {
    const s = await serve({ rawBody: mixedStream, contentType: 'text/event-stream' });
    const parts = await collectParts(model(s).stream(ask));
    expect(parts).toEqual([
      { type: 'reasoning', delta: 'The user asks for 17 × 23. ' },
      { type: 'reasoning', delta: '17 × 20 = 340 and 17 × 3 = 51, ' },
      { type: 'reasoning', delta: 'so 340 + 51 = 391.' },
      { type: 'text', delta: '3' },
      { type: 'text', delta: '91' },
      { type: 'finish', usage: { inputTokens: 21, outputTokens: 75 }, finishReason: 'stop' },
    ]);
  });

  it('an agent run gets the whole answer and keeps the thinking in the transcript, streamed or not', async () => {
    const s = await serve(
      { rawBody: mixedStream, contentType: 'text/event-stream' },
      { rawBody: completion([thinking(THOUGHT), { type: 'text', text: '391' }]) },
    );
    const agent = createAgent({ model: model(s) });
    const stream = agent.stream('What is 17 × 23?');
    let streamed = '';
    for await (const event of stream) if (event.type === 'text.delta') streamed += event.delta;
    const result = await stream.result;
    expect(streamed).toBe('391');
    expect(result.text).toBe('391');
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'reasoning', text: THOUGHT }, { type: 'text', text: '391' }] });

    const whole = await agent.run('What is 17 × 23?', { stream: false });
    expect(whole.text).toBe('391');
    expect(s.requests.map((r) => r.body.stream)).toEqual([true, undefined]);
  });
});

describe('openai provider: content it cannot read fails the call as malformed', () => {
  it('a whole reply whose content is neither a string nor an array names the field and what it got', async () => {
    const s = await serve({ rawBody: completion({ text: '391' }) });
    const error = await rejection(model(s).generate(ask));
    expect(error).toMatchObject({ name: 'ProviderError', kind: 'malformed', status: 200, retryable: false, provider: 'mistral' });
    expect(error.message).toContain('choices[0].message.content is an object {"text":"391"}; expected a string or an array of text and thinking parts');
  });

  it('a part of a type it does not know names the part by its path and its type', async () => {
    const s = await serve({ rawBody: completion([thinking(THOUGHT), { type: 'reference', reference_ids: [0] }, { type: 'text', text: '391' }]) });
    const error = await rejection(model(s).generate(ask));
    expect(error).toMatchObject({ kind: 'malformed', retryable: false });
    expect(error.message).toContain(`choices[0].message.content[1] is a part of type "reference", which cannot be read; expected { type: 'text', text } or { type: 'thinking', thinking: [{ type: 'text', text }] }`);
  });

  it('a thinking part whose thinking is not a list of text parts says so', async () => {
    const s = await serve({ rawBody: completion([{ type: 'thinking', thinking: [{ type: 'image_url', image_url: 'https://example.com/a.png' }] }]) });
    expect((await rejection(model(s).generate(ask))).message).toContain('choices[0].message.content[0].thinking[0] is a part of type "image_url", which cannot be read');
  });

  it('a streamed delta with a part it cannot read fails the stream, after the text before it', async () => {
    const s = await serve({ rawBody: sse([{ content: [{ type: 'text', text: '3' }] }, { content: [{ type: 'text', txt: '91' }] }, { content: '' }]), contentType: 'text/event-stream' });
    const seen: string[] = [];
    const error = await rejection((async () => {
      for await (const part of model(s).stream(ask)) if (part.type === 'text') seen.push(part.delta);
    })());
    expect(seen).toEqual(['3']);
    expect(error).toMatchObject({ kind: 'malformed', retryable: false });
    expect(error.message).toContain('choices[0].delta.content[0] is a part of type "text" without a string text, which cannot be read');
  });
});
