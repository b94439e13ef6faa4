// mockModel: a scripted provider, used on its own and inside an agent.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type GenerateOptions } from '../../src/index.js';
import type { ToolMessage } from '../../src/types.js';
import { MEDIA_TOKENS } from '../../src/core/vocabulary/content.js';
import { mockModel } from '../../src/testing/index.js';
import { add, runFailure } from '../support/core.js';
import { mortal } from '../support/durable.js';
import { manualClock } from '../support/clock.js';

const request = (content = 'Hi'): GenerateOptions => ({ messages: [{ role: 'user', content }], tools: [] });

describe('script entries', () => {
  it('a string is a text reply', async () => {
    const { message, finishReason } = await mockModel(['Hello.']).generate(request());
    expect(message).toEqual({ role: 'assistant', content: 'Hello.' });
    expect(finishReason).toBe('stop');
  });

  it('{ text } is a text reply', async () => {
    expect((await mockModel([{ text: 'Hi there.' }]).generate(request())).message).toEqual({ role: 'assistant', content: 'Hi there.' });
  });

  it('{ toolCalls } is a reply with tool calls and empty text', async () => {
    const { message, finishReason } = await mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }]).generate(request());
    expect(message).toEqual({ role: 'assistant', content: '', toolCalls: [{ id: expect.any(String), name: 'add', args: { a: 1, b: 2 } }] });
    expect(finishReason).toBe('tool_calls');
  });

  it('{ text, toolCalls } is a reply with both', async () => {
    const { message } = await mockModel([{ text: 'Let me check.', toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }]).generate(request());
    expect(message).toMatchObject({ content: 'Let me check.', toolCalls: [{ name: 'add' }] });
  });

  it('{ error: string } throws an Error with that message', async () => {
    await expect(mockModel([{ error: 'rate limited' }]).generate(request())).rejects.toThrow(new Error('rate limited'));
  });

  it('{ error: Error } throws that very error', async () => {
    const error = new TypeError('bad request');
    await expect(mockModel([{ error }]).generate(request())).rejects.toBe(error);
  });

  it('keeps tool-call args exactly as scripted, including null and raw text, to test malformed calls', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'a', args: null }, { name: 'b', args: '{oops' }, { name: 'c' }] }]);
    const { message } = await model.generate(request());
    expect(message.toolCalls!.map((c) => c.args)).toEqual([null, '{oops', {}]);
  });

  it('uses scripted usage, else estimates it from the text so it is never zero', async () => {
    const model = mockModel([{ text: 'x', usage: { inputTokens: 100, outputTokens: 7 } }, 'A longer answer of some length.']);
    expect((await model.generate(request())).usage).toEqual({ inputTokens: 100, outputTokens: 7 });
    const { usage } = await model.generate(request('A question'));
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
  });

  it('rejects a script that is not an array', () => {
    expect(() => mockModel('Hello' as never)).toThrow(new TypeError('mockModel(script): script must be an array of replies'));
  });
});

describe('running past the script', () => {
  it('is an error naming the script length and the call number', async () => {
    const model = mockModel(['only one']);
    await model.generate(request());
    await expect(model.generate(request())).rejects.toThrow('mockModel: the model was called 2 times, but the script has only 1 entry; add a reply for call 2');
    expect(model.remaining).toBe(0);
  });

  it('fails an agent run with model_error carrying that message', async () => {
    const error = await runFailure(createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }]), tools: [add] }).run('Hi'), 'model_error');
    expect(error.message).toMatch(/the script has only 1 entry/);
  });
});

describe('what it records', () => {
  it('counts down remaining as entries are used', async () => {
    const model = mockModel(['a', 'b', 'c']);
    expect(model.remaining).toBe(3);
    await model.generate(request());
    expect(model.remaining).toBe(2);
  });

  it('records each call\'s messages as a snapshot: calls[1].messages.at(-1) is the first turn\'s tool message', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] }, { toolCalls: [{ name: 'add', args: { a: 5, b: 5 } }] }, 'Ten.']);
    const result = await createAgent({ model, tools: [add] }).run('Add');
    const first = model.calls[1].messages.at(-1) as ToolMessage;
    expect(first).toMatchObject({ role: 'tool', name: 'add', content: '5' });
    expect(model.calls[1].messages).toHaveLength(3);
    expect(model.calls[2].messages).toHaveLength(5);
    expect(model.calls[0].messages).toEqual([{ role: 'user', content: 'Add' }]);
    expect(model.calls[1].messages).not.toBe(result.messages);
  });

  it('records the other request fields, without messages or the signal', async () => {
    const model = mockModel(['ok']);
    await model.generate({ ...request(), temperature: 0.5, headers: { a: 'b' }, signal: new AbortController().signal });
    expect(model.calls[0].request).toEqual({ tools: [], temperature: 0.5, headers: { a: 'b' } });
  });

  it('gives every tool call a unique id across calls, and keeps ids the script gives', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'a' }, { name: 'b' }] }, { toolCalls: [{ name: 'c' }, { name: 'd', id: 'mine' }] }]);
    const ids = [...(await model.generate(request())).message.toolCalls!, ...(await model.generate(request())).message.toolCalls!].map((c) => c.id);
    expect(new Set(ids).size).toBe(4);
    expect(ids[3]).toBe('mine');
  });

  it('does not share scripted args with the transcript, so a run cannot change the script', async () => {
    const args = { a: 1, b: 2 };
    const model = mockModel([{ toolCalls: [{ name: 'add', args }] }, 'ok']);
    const result = await createAgent({ model, tools: [add] }).run('Hi');
    const call = result.messages[1];
    expect(call.role === 'assistant' && call.toolCalls![0].args).not.toBe(args);
  });
});

describe('mockModel: reasoning and content parts', () => {
  it('replies with reasoning before the text, with provider data when given, and with parts as scripted', async () => {
    const model = mockModel([
      { reasoning: 'Plain thought.', text: 'A' },
      { reasoning: { text: 'Signed thought.', providerOptions: { anthropic: { signature: 's' } } }, toolCalls: [{ name: 'noop', args: {}, providerOptions: { google: { thoughtSignature: 't' } } }] },
      { content: [{ type: 'text', text: 'Here is a file: ' }, { type: 'file', data: 'aGk=', mediaType: 'text/plain', filename: 'hi.txt' }] },
    ]);
    const request: GenerateOptions = { messages: [{ role: "user", content: "x" }], tools: [] };
    expect((await model.generate(request)).message.content).toEqual([{ type: 'reasoning', text: 'Plain thought.' }, { type: 'text', text: 'A' }]);
    const second = (await model.generate(request)).message;
    expect(second.content).toEqual([{ type: 'reasoning', text: 'Signed thought.', providerOptions: { anthropic: { signature: 's' } } }]);
    expect(second.toolCalls?.[0]).toMatchObject({ name: 'noop', providerOptions: { google: { thoughtSignature: 't' } } });
    expect((await model.generate(request)).message.content).toEqual([{ type: 'text', text: 'Here is a file: ' }, { type: 'file', data: 'aGk=', mediaType: 'text/plain', filename: 'hi.txt' }]);
  });

  it('refuses a scripted part an assistant message cannot hold, at once', () => {
    expect(() => mockModel([{ content: [{ type: 'image', image: 'x' }] } as never])).toThrow(/mockModel\(script\): .*"image" part, which a assistant message cannot hold/);
    expect(() => mockModel([{ thinking: 'x' } as never])).toThrow(/did you mean `reasoning`\?/);
  });

  it('says whether it holds replies to a JSON schema (structuredOutputs), true unless told otherwise', () => {
    expect(mockModel([]).structuredOutputs).toBe(true);
    expect(mockModel([], { structuredOutputs: false }).structuredOutputs).toBe(false);
  });

  it('counts an image in its usage as MEDIA_TOKENS, not as its base64 length', async () => {
    const model = mockModel(['ok']);
    const { usage } = await model.generate({ messages: [{ role: 'user', content: [{ type: 'image', image: 'A'.repeat(40_000), mediaType: 'image/png' }] }], tools: [] });
    expect(usage.inputTokens).toBe(MEDIA_TOKENS);
  });
});

describe('resumable: replies picked by the transcript', () => {
  const script = () => [{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }] }, 'The sum is 3.'];

  it('gives script[k] to a request that holds k assistant messages, however many calls came before', async () => {
    const model = mockModel(script(), { resumable: true });
    const after = { messages: [{ role: 'user' as const, content: 'Add' }, { role: 'assistant' as const, content: '', toolCalls: [{ id: 'c1', name: 'add', args: {} }] }, { role: 'tool' as const, toolCallId: 'c1', name: 'add', content: '3' }], tools: [] };
    expect((await model.generate(after)).message).toEqual({ role: 'assistant', content: 'The sum is 3.' });
    expect(model.remaining).toBe(0);
    expect((await model.generate(request())).message.toolCalls).toEqual([{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }]);
    await expect(model.generate({ ...after, messages: [...after.messages, { role: 'assistant', content: 'The sum is 3.' }] })).rejects.toThrow('mockModel: the request holds 2 assistant messages, but the script has only 2 entries; add reply 3');
  });

  it('picks a recovered run up where its transcript stands: a fresh mock in the new worker does not start again', async () => {
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const dying = mortal(store);
    const sums: number[] = [];
    // The first worker dies as the tool returns: its call stays `running`, and is run again (idempotent).
    const dyingAdd = defineTool({ name: 'add', description: 'Add', idempotent: true, input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => (sums.push(a + b), dying.die(), a + b) });
    void createAgent({ name: 'adder', model: mockModel(script(), { resumable: true }), tools: [dyingAdd], store: dying.store }).run('Add 1 and 2');
    await dying.died;
    await clock.advance(1001);
    const fresh = mockModel(script(), { resumable: true });
    const [recovered] = await createAgent({ name: 'adder', model: fresh, tools: [dyingAdd], store }).runs.recover();
    expect(recovered.result!.output).toBe('The sum is 3.');
    expect(sums).toEqual([3, 3]);
    // The new worker's model was asked once, with the run's transcript so far; a plain mock would have asked for the tool again.
    expect(fresh.calls).toHaveLength(1);
    expect(fresh.calls[0].messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });
});
