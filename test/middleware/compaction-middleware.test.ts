// Context compaction: a model layer that keeps the transcript under a budget by folding older
// messages into one summary, written by a side call with purpose 'compaction'. It must never
// part a tool result from the call that asked for it.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { compactionMiddleware } from '../../src/middleware.js';
import { createAgent, defineTool, type AgentEvent, type Message, type Middleware } from '../../src/index.js';
import { transcriptTokens, SUMMARY_PREFIX } from '../../src/middleware/compaction-middleware.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { estimateTokens, MEDIA_TOKENS, textOf } from '../../src/core/vocabulary/content.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => `value of ${key} is ${key.length * 7}`,
});

/** Turns that call `lookup` 1, 2 or 3 times at once (so cuts can fall inside a turn's results), then a final answer. */
function toolHeavyScript(turns: number): MockReply[] {
  const script: MockReply[] = [];
  for (let t = 0; t < turns; t++) {
    const width = (t % 3) + 1;
    script.push({ text: t % 2 ? `Turn ${t}.` : '', toolCalls: Array.from({ length: width }, (_, i) => ({ name: 'lookup', args: { key: `k${t}_${i}` } })) });
  }
  script.push('All looked up.');
  return script;
}

/** A summariser that always answers, with a fixed usage. */
const summariser = (usage = { inputTokens: 40, outputTokens: 8 }) => mockModel(Array.from({ length: 100 }, (_, i) => ({ text: `summary #${i + 1}`, usage })));

const isSummary = (m: Message | undefined) => m?.role === 'user' && textOf(m.content).startsWith(SUMMARY_PREFIX);

/** What the kept transcript must satisfy: each tool result follows the call that asked for it, and none follows the summary. */
function checkNoOrphans(messages: readonly Message[]): void {
  const asked = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) asked.add(c.id);
    if (m.role === 'tool') {
      expect(asked.has(m.toolCallId), `tool result ${m.toolCallId} at ${i} has no call before it`).toBe(true);
      expect(isSummary(messages[i - 1]), `tool result ${m.toolCallId} directly follows the summary`).toBe(false);
    }
  });
}

/** The documented estimate: four characters of text a token, an image or file MEDIA_TOKENS, tool calls counted as their JSON. */
const tokensOf = (messages: readonly Message[]) =>
  messages.reduce((sum, m) => sum + estimateTokens(m.content) + (m.role === 'assistant' && m.toolCalls ? Math.ceil(JSON.stringify(m.toolCalls).length / 4) : 0), 0);

describe('compaction never orphans a tool result', () => {
  it.each([1, 2, 3, 4, 5, 6])('with keepRecent %i, every transcript the model gets keeps each result with its call', async (keepRecent) => {
    const model = mockModel(toolHeavyScript(12));
    const events: AgentEvent[] = [];
    const agent = createAgent({ instructions: 'You look things up.', model, tools: [lookup], maxSteps: 20, compaction: { maxMessages: 8, keepRecent, model: summariser() } });
    const result = await agent.run('Look up everything', { onEvent: (e) => events.push(e) });
    expect(result.text).toBe('All looked up.');
    const compactions = events.filter((e) => e.type === 'compaction.done');
    expect(compactions.length).toBeGreaterThan(2);
    for (const call of model.calls) {
      checkNoOrphans(call.messages);
      expect(call.messages[0]).toEqual({ role: 'system', content: 'You look things up.' });
      // At most one summary, always right after the leading system message.
      expect(call.messages.filter(isSummary).length).toBeLessThanOrEqual(1);
      if (call.messages.some(isSummary)) expect(isSummary(call.messages[1])).toBe(true);
    }
    checkNoOrphans(result.messages);
  });

  it('keeps a whole turn when keepRecent would cut between its calls\' results', async () => {
    const script: MockReply[] = [
      { toolCalls: [{ name: 'lookup', args: { key: 'a' } }] },
      { toolCalls: [{ name: 'lookup', args: { key: 'b' } }, { name: 'lookup', args: { key: 'c' } }, { name: 'lookup', args: { key: 'd' } }] },
      'Done.',
    ];
    const model = mockModel(script);
    await createAgent({ model, tools: [lookup], compaction: { maxMessages: 6, keepRecent: 2, model: summariser() } }).run('Go');
    // Before the last call: user, a1, t1, a2, t2, t3, t4 (7 > 6). Keeping 2 would start on t3; the turn a2…t4 is kept whole.
    expect(model.calls[2].messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool']);
    expect(isSummary(model.calls[2].messages[0])).toBe(true);
  });
});

describe('compaction: what it does and reports', () => {
  it('replaces the older messages in place with one summary message, keeping system messages and the recent tail', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { key: 'x' } }] }, 'Done.']);
    const history: Message[] = [
      { role: 'system', content: 'Be brief.' },
      ...Array.from({ length: 6 }, (_, i): Message => ({ role: i % 2 ? 'assistant' : 'user', content: `old message ${i}` })),
      { role: 'user', content: 'Now look up x' },
    ];
    const result = await createAgent({ model, tools: [lookup], compaction: { maxMessages: 5, keepRecent: 1, model: summariser() } }).run(history);
    expect(model.calls[0].messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: `${SUMMARY_PREFIX}summary #1` },
      { role: 'user', content: 'Now look up x' },
    ]);
    // In place: the run's own transcript is the compacted one.
    expect(result.messages.slice(0, 3)).toEqual(model.calls[0].messages);
  });

  it('reports counts before and after in compaction.start / compaction.done', async () => {
    const before: { messages: number; tokens: number }[] = [];
    // Compaction is innermost: this layer sees the transcript as compaction is about to get it.
    const measure: Middleware = { name: 'measure', model: (ctx, next) => { before.push({ messages: ctx.messages.length, tokens: tokensOf(ctx.messages) }); return next(); } };
    const model = mockModel(toolHeavyScript(8));
    const events: AgentEvent[] = [];
    await createAgent({ model, tools: [lookup], middleware: [measure], compaction: { maxMessages: 7, keepRecent: 3, model: summariser() } }).run('Go', { onEvent: (e) => events.push(e) });
    const starts = events.filter((e) => e.type === 'compaction.start');
    const dones = events.filter((e) => e.type === 'compaction.done');
    expect(dones.length).toBeGreaterThan(1);
    expect(starts).toHaveLength(dones.length);
    let checked = 0;
    model.calls.forEach((call, i) => {
      if (before[i].messages === call.messages.length) return; // no compaction before this call
      const start = starts[checked];
      const done = dones[checked++];
      expect(start).toMatchObject({ messages: before[i].messages, tokens: before[i].tokens });
      expect(done).toMatchObject({ before: before[i].messages, after: call.messages.length, tokensBefore: before[i].tokens, tokensAfter: tokensOf(call.messages) });
      expect(done.after).toBeLessThanOrEqual(7);
    });
    expect(checked).toBe(dones.length);
  });

  it('writes the summary through a side call with purpose compaction, counted in the run\'s usage', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { key: 'a' } }], usage: { inputTokens: 1, outputTokens: 1 } }, { toolCalls: [{ name: 'lookup', args: { key: 'b' } }], usage: { inputTokens: 1, outputTokens: 1 } }, { text: 'Done.', usage: { inputTokens: 1, outputTokens: 1 } }]);
    const events: AgentEvent[] = [];
    const result = await createAgent({ model, tools: [lookup], compaction: { maxMessages: 4, keepRecent: 1, model: summariser({ inputTokens: 500, outputTokens: 50 }) } }).run('Go', { onEvent: (e) => events.push(e) });
    const compactions = events.filter((e) => e.type === 'compaction.done').length;
    expect(compactions).toBe(1);
    expect(result.usage).toMatchObject({ modelCalls: 4, inputTokens: 503, outputTokens: 53, totalTokens: 556 });
    const side = events.filter((e) => (e.type === 'model.start' || e.type === 'model.done') && e.purpose === 'compaction');
    expect(side.map((e) => e.type)).toEqual(['model.start', 'model.done']);
    expect(side[1]).toMatchObject({ usage: { inputTokens: 500, outputTokens: 50 }, message: { content: 'summary #1' } });
    // Between compaction.start and compaction.done.
    const types = events.map((e) => (e.type.startsWith('model.') ? `${e.type}:${(e as { purpose: string }).purpose}` : e.type));
    const at = types.indexOf('compaction.start');
    expect(types.slice(at, at + 4)).toEqual(['compaction.start', 'model.start:compaction', 'model.done:compaction', 'compaction.done']);
  });

  it('sends the summariser the folded messages, tool calls and results included, under its prompt', async () => {
    const writer = summariser();
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { key: 'alpha' } }] }, { toolCalls: [{ name: 'lookup', args: { key: 'beta' } }] }, 'Done.']);
    await createAgent({ model, tools: [lookup], compaction: { maxMessages: 4, keepRecent: 1, model: writer, prompt: 'Summarise in one line.' } }).run('Find alpha');
    expect(writer.calls).toHaveLength(1);
    const [system, user] = writer.calls[0].messages;
    expect(system).toEqual({ role: 'system', content: 'Summarise in one line.' });
    expect(user.content).toBe([
      'user: Find alpha',
      'assistant: [called lookup({"key":"alpha"})]',
      'tool result (lookup, call call_1): value of alpha is 35',
    ].join('\n'));
    expect(writer.calls[0].request.tools).toEqual([]);
  });

  it('uses the agent\'s own model for the summary when no model is given', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { key: 'a' } }] }, { toolCalls: [{ name: 'lookup', args: { key: 'b' } }] }, 'the summary', 'Done.']);
    const result = await createAgent({ model, tools: [lookup], compaction: { maxMessages: 4, keepRecent: 1 } }).run('Go');
    expect(result.text).toBe('Done.');
    expect(model.calls[3].messages.find(isSummary)?.content).toBe(`${SUMMARY_PREFIX}the summary`);
  });

  it('compacts on an estimated-token budget too', async () => {
    const long = 'x'.repeat(400); // 100 tokens
    const model = mockModel(['Short answer.']);
    const events: AgentEvent[] = [];
    const history: Message[] = [{ role: 'user', content: long }, { role: 'assistant', content: long }, { role: 'user', content: long }, { role: 'assistant', content: long }, { role: 'user', content: 'And now?' }];
    await createAgent({ model, compaction: { maxTokens: 300, keepRecent: 1, model: summariser() } }).run(history, { onEvent: (e) => events.push(e) });
    expect(events.find((e) => e.type === 'compaction.done')).toMatchObject({ before: 5, after: 2, tokensBefore: 402, tokensAfter: tokensOf(model.calls[0].messages) });
    expect(model.calls[0].messages).toHaveLength(2);
  });

  it('leaves the transcript alone under budget, or when fewer than two messages could be folded', async () => {
    const writer = summariser();
    const model = mockModel(['One.', 'Two.']);
    const agent = createAgent({ model, compaction: { maxMessages: 2, keepRecent: 2, model: writer } });
    await agent.send('First');
    // 3 messages > 2, but keeping 2 leaves only 1 older message to fold: no summary for that.
    await agent.send('Second');
    expect(writer.calls).toHaveLength(0);
    expect(model.calls[1].messages).toHaveLength(3);
  });
});

describe('compaction: where it sits', () => {
  it('is innermost: the user\'s hooks and middleware (even ones added later) see the full transcript, and what they add is compacted too', async () => {
    const seenByLayer: number[] = [];
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { key: 'a' } }] }, { toolCalls: [{ name: 'lookup', args: { key: 'b' } }] }, 'Done.']);
    const agent = createAgent({
      model, tools: [lookup], compaction: { maxMessages: 5, keepRecent: 1, model: summariser() },
      hooks: [{ name: 'add-note', preGenerate: (ctx) => void ctx.messages.push({ role: 'user', content: `note ${ctx.step}` }) }],
    });
    agent.use({ name: 'late-layer', model: (ctx, next) => { seenByLayer.push(ctx.messages.length); return next(); } });
    await agent.run('Go');
    // The last model call: the layer saw 8 messages (note 3 included); the model got them compacted.
    expect(seenByLayer).toEqual([2, 5, 8]);
    expect(model.calls[2].messages.map((m) => m.content)).toEqual([`${SUMMARY_PREFIX}summary #1`, 'note 3']);
  });

  it('belongs to its own agent: a sub-agent does not inherit the lead\'s compaction', async () => {
    const helperModel = mockModel([...Array.from({ length: 4 }, (_, i) => ({ toolCalls: [{ name: 'lookup', args: { key: `h${i}` } }] })), 'Helped.']);
    const helper = createAgent({ name: 'helper', model: helperModel, tools: [lookup] });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'helper', args: { task: 'Help' } }] }, 'Done.']), tools: [helper.asTool({ description: 'Helps' })], compaction: { maxMessages: 3, keepRecent: 1, model: summariser() } });
    await lead.run('Go');
    expect(helperModel.calls.at(-1)!.messages).toHaveLength(9);
    expect(helperModel.calls.some((c) => c.messages.some(isSummary))).toBe(false);
  });
});

describe('the token estimate', () => {
  it('matches a full count as the transcript grows and after it is spliced', () => {
    const messages: Message[] = [];
    for (let i = 0; i < 30; i++) {
      messages.push(i % 3 === 2 ? { role: 'assistant', content: `reply ${i}`, toolCalls: [{ id: `c${i}`, name: 'lookup', args: { key: 'k'.repeat(i) } }] } : { role: 'user', content: 'u'.repeat(i * 5) });
      expect(transcriptTokens(messages)).toBe(tokensOf(messages));
    }
    messages.splice(1, 20, { role: 'user', content: 'summary' });
    expect(transcriptTokens(messages)).toBe(tokensOf(messages));
    messages.push({ role: 'user', content: 'more' });
    expect(transcriptTokens(messages)).toBe(tokensOf(messages));
  });

  it('reads each message once as the transcript grows (it is incremental, not a recount)', () => {
    let reads = 0;
    const counted = (text: string): Message => ({ role: 'user', get content() { reads++; return text; } });
    const messages: Message[] = [];
    for (let i = 0; i < 200; i++) {
      messages.push(counted(`message ${i}`));
      transcriptTokens(messages);
    }
    expect(reads).toBe(200);
  });
});

describe('compaction with content parts', () => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

  it('counts an image as MEDIA_TOKENS, not as the length of its base64 data', () => {
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'abcd'.repeat(10) }, { type: 'image', image: png.repeat(100), mediaType: 'image/png' }] }];
    expect(transcriptTokens(messages)).toBe(10 + MEDIA_TOKENS);
  });

  it('names images and files to the summariser instead of sending them, and leaves reasoning out', async () => {
    const writer = summariser();
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'What is on this chart?' }, { type: 'image', image: png, mediaType: 'image/png' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'The bars rise.' }, { type: 'text', text: 'Sales rise.' }] },
      { role: 'user', content: [{ type: 'file', data: 'JVBERi0xLjQ=', mediaType: 'application/pdf', filename: 'q3.pdf' }, { type: 'text', text: 'And this?' }] },
      { role: 'assistant', content: 'It is the Q3 report.' },
      { role: 'user', content: 'Thanks. Next?' },
    ];
    const model = mockModel(['Done.']);
    await createAgent({ model, compaction: { maxMessages: 4, keepRecent: 1, model: writer } }).run(history);
    expect(writer.calls[0].messages[1].content).toBe([
      'user: What is on this chart? [image]',
      'assistant: Sales rise.',
      'user: [file q3.pdf, application/pdf] And this?',
      'assistant: It is the Q3 report.',
    ].join('\n'));
    expect(model.calls[0].messages.map((m) => m.content)).toEqual([`${SUMMARY_PREFIX}summary #1`, 'Thanks. Next?']);
  });
});

describe('compaction: options', () => {
  it('needs a budget', () => {
    expect(() => compactionMiddleware({})).toThrow(new TypeError('compaction: give maxMessages, maxTokens or both'));
    expect(() => createAgent({ model: mockModel([]), compaction: { keepRecent: 3 } })).toThrow(/compaction: give maxMessages, maxTokens or both/);
  });

  it.each([
    [{ maxMessages: 0 }, 'compaction: maxMessages must be a whole number ≥ 1 (got 0)'],
    [{ maxTokens: 1.5 }, 'compaction: maxTokens must be a whole number ≥ 1 (got 1.5)'],
    [{ maxMessages: 10, keepRecent: -1 }, 'compaction: keepRecent must be a whole number ≥ 1 (got -1)'],
    [{ maxMessages: '10' }, 'compaction: maxMessages must be a whole number ≥ 1 (got the string "10")'],
    [{ maxMessages: 10, keepLast: 2 }, 'compaction: keepLast is not a compaction option; did you mean `keepRecent`?'],
  ])('rejects %o, naming the field', (options, message) => {
    expect(() => compactionMiddleware(options as never)).toThrow(new TypeError(message));
  });
});
