// responseCacheMiddleware: a request answered before is answered from the cache, without the
// model, and placed in the transcript once; what makes two requests the same (the normalised
// request, not its signal, headers or key order); which replies are kept; the time to live;
// and a cache shared through a SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createAgent, defineTool, type AgentEvent, type GenerateOptions, type GenerateResult, type ModelProvider } from '../../src/index.js';
import { memoryKeyValues, responseCacheMiddleware } from '../../src/middleware.js';
import { requestKey } from '../../src/middleware/response-cache-middleware.js';
import { RequestKeys } from '../../src/middleware/response-cache-middleware.js';
import { sqliteStore } from '../../src/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A provider answering from `script` in turn (then failing), counting its calls. */
function scripted(script: Partial<GenerateResult>[]): ModelProvider & { calls: number } {
  const model = {
    name: 'p',
    modelId: 'm',
    calls: 0,
    async generate(_request: GenerateOptions): Promise<GenerateResult> {
      const next = script[model.calls++];
      if (next === undefined) throw new Error('the model was called once more than the test allows');
      return { message: { role: 'assistant', content: 'ok' }, usage: { inputTokens: 30, outputTokens: 12 }, finishReason: next.message?.toolCalls ? 'tool_calls' : 'stop', ...next };
    },
  };
  return model;
}

const say = (content: string): Partial<GenerateResult> => ({ message: { role: 'assistant', content } });

describe('responseCacheMiddleware: a hit', () => {
  it('answers a request seen before without calling the model, its reply in the transcript once, marked in usage and events', async () => {
    const model = scripted([say('Hello there')]);
    const events: AgentEvent[] = [];
    const agent = createAgent({ model, instructions: 'Be brief.', middleware: [responseCacheMiddleware()], onEvent: (e) => void events.push(e) });
    const first = await agent.run('Hi');
    const second = await agent.run('Hi');
    expect(model.calls).toBe(1);
    expect(second.text).toBe('Hello there');
    expect(second.messages).toEqual(first.messages);
    expect(second.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'Hello there' }]);
    // A hit is no model call and spends no tokens; it is counted as a hit, with what it saved.
    expect(first.usage).toMatchObject({ modelCalls: 1, inputTokens: 30, outputTokens: 12 });
    expect(second.usage).toMatchObject({ modelCalls: 0, inputTokens: 0, outputTokens: 0, cacheHits: 1, cacheSavedTokens: 42 });
    expect(first.usage.cacheHits).toBeUndefined();
    const hits = events.filter((e) => e.type === 'cache.hit');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ runId: second.runId, step: 1, savedTokens: 42 });
    expect(events.filter((e) => e.type === 'model.done' && e.runId === second.runId)).toHaveLength(1);
  });

  it('serves every turn of a conversation with tools again, while the tools still run', async () => {
    let ran = 0;
    const look = defineTool({ name: 'look', description: 'Look', execute: () => `seen ${++ran}`.slice(0, 4) });
    const model = scripted([{ message: { role: 'assistant', content: '', toolCalls: [{ id: 'call_abc', name: 'look', args: {} }] } }, say('done')]);
    const agent = createAgent({ model, tools: [look], middleware: [responseCacheMiddleware()] });
    await agent.run('Look around');
    const again = await agent.run('Look around');
    expect(model.calls).toBe(2);
    expect(ran).toBe(2);
    expect(again.text).toBe('done');
    expect(again.usage.cacheHits).toBe(2);
    expect(again.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('streams a hit as one text delta of the stored reply', async () => {
    const model = scripted([say('Hello there')]);
    const agent = createAgent({ model, middleware: [responseCacheMiddleware()] });
    await agent.run('Hi');
    const seen: AgentEvent[] = [];
    const stream = agent.stream('Hi');
    for await (const event of stream) seen.push(event);
    expect(seen.filter((e) => e.type === 'text.delta').map((e) => (e as { delta: string }).delta)).toEqual(['Hello there']);
    expect((await stream.result).text).toBe('Hello there');
    expect(model.calls).toBe(1);
  });

  it('keeps a hit apart by scope: another scope asks the model', async () => {
    const model = scripted([say('for alice'), say('for bob')]);
    const cache = responseCacheMiddleware({ scope: (ctx) => String(ctx.metadata.user) });
    const agent = createAgent({ model, middleware: [cache] });
    expect((await agent.run('Hi', { metadata: { user: 'alice' } })).text).toBe('for alice');
    expect((await agent.run('Hi', { metadata: { user: 'bob' } })).text).toBe('for bob');
    expect((await agent.run('Hi', { metadata: { user: 'alice' } })).text).toBe('for alice');
    expect(model.calls).toBe(2);
  });
});

describe('responseCacheMiddleware: what is kept', () => {
  it('keeps no reply cut off by length, filtered or failed: the next request asks the model again', async () => {
    const model = scripted([{ ...say('cut'), finishReason: 'length' }, { ...say('filtered'), finishReason: 'content_filter' }, say('whole')]);
    const agent = createAgent({ model, middleware: [responseCacheMiddleware()] });
    for (let i = 0; i < 4; i++) await agent.run('Hi');
    expect(model.calls).toBe(3);
  });

  it('forgets a reply once its time to live has passed', async () => {
    let now = 0;
    const model = scripted([say('old'), say('new')]);
    const agent = createAgent({ model, middleware: [responseCacheMiddleware({ ttlMs: 1000, store: memoryKeyValues({ now: () => now }) })] });
    await agent.run('Hi');
    now = 999;
    expect((await agent.run('Hi')).text).toBe('old');
    now = 1000;
    expect((await agent.run('Hi')).text).toBe('new');
  });

  it('is shared through a SQLite file by stores opened apart (as two processes do)', async () => {
    const path = join(dir, 'cache.db');
    const [a, b] = [sqliteStore({ path }), sqliteStore({ path })];
    const model = scripted([say('from the first process')]);
    await createAgent({ model, middleware: [responseCacheMiddleware({ store: a })] }).run('Hi');
    const other = await createAgent({ model, middleware: [responseCacheMiddleware({ store: b })] }).run('Hi');
    expect(other.text).toBe('from the first process');
    expect(model.calls).toBe(1);
    await a.close();
    await b.close();
  });
});

describe('responseCacheMiddleware: the key', () => {
  const provider = { name: 'p', modelId: 'm' };
  const base = (): GenerateOptions => ({
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'weather', args: { city: 'Oslo', units: 'C' } }] },
      { role: 'tool', toolCallId: 'call_1', name: 'weather', content: 'snow' },
    ],
    tools: [{ name: 'weather', description: 'Forecast', parameters: { type: 'object' } }],
    temperature: 0,
    maxTokens: 100,
  });

  it('is the same whatever the signal, the headers, the key order, the tool-call ids and the metadata', () => {
    const key = requestKey(base(), provider);
    const other = base();
    other.signal = new AbortController().signal;
    other.headers = { 'x-trace': 'abc' };
    const reordered: GenerateOptions = { maxTokens: 100, temperature: 0, tools: other.tools, messages: other.messages, signal: other.signal };
    expect(requestKey(other, provider)).toBe(key);
    expect(requestKey(reordered, provider)).toBe(key);
    const renamed = base();
    (renamed.messages[1] as { toolCalls: { id: string }[] }).toolCalls[0].id = 'call_zz9';
    (renamed.messages[2] as { toolCallId: string }).toolCallId = 'call_zz9';
    renamed.messages[0] = { role: 'user', content: 'Weather?', metadata: { at: 1_800_000_000_000 } } as never;
    expect(requestKey(renamed, provider)).toBe(key);
    const args = base();
    (args.messages[1] as { toolCalls: { args: unknown }[] }).toolCalls[0].args = { units: 'C', city: 'Oslo' };
    expect(requestKey(args, provider)).toBe(key);
  });

  it('differs with the messages, the tools, a setting, the model and the scope', () => {
    const key = requestKey(base(), provider);
    const variants: GenerateOptions[] = [
      { ...base(), temperature: 0.5 },
      { ...base(), topP: 0.9 },
      { ...base(), tools: [] },
      { ...base(), messages: base().messages.slice(0, 1) },
      { ...base(), responseFormat: { type: 'json' } },
    ];
    const keys = new Set([key, ...variants.map((request) => requestKey(request, provider)), requestKey(base(), { name: 'p', modelId: 'm2' }), requestKey(base(), provider, 'tenant-2')]);
    expect(keys.size).toBe(variants.length + 3);
  });
});

describe('responseCacheMiddleware: the key over a growing transcript', () => {
  const provider = { name: 'p', modelId: 'm' };
  const call = (id: string, city: string) => ({ role: 'assistant' as const, content: '', toolCalls: [{ id, name: 'weather', args: { city } }] });
  const result = (id: string, content: string) => ({ role: 'tool' as const, toolCallId: id, name: 'weather', content });
  const request = (messages: GenerateOptions['messages']): GenerateOptions => ({ messages, tools: [], temperature: 0 });

  it('is the key requestKey gives, at every call of an instance that saw the calls before', () => {
    const keys = new RequestKeys();
    const messages: GenerateOptions['messages'] = [{ role: 'user', content: 'Weather in three cities?' }];
    for (const [i, city] of ['Oslo', 'Bergen', 'Oslo'].entries()) {
      expect(keys.keyOf(request(messages), provider)).toBe(requestKey(request(messages), provider));
      // The third call repeats the first city under another id: renumbered, its text is the first's.
      messages.push(call(`call_${i}`, city), result(`call_${i}`, `snow in ${city}`));
    }
    expect(keys.keyOf(request(messages), provider, 'tenant')).toBe(requestKey(request(messages), provider, 'tenant'));
  });

  it('changes when an older message is edited in place, at any depth, as a layer may through ctx.messages', () => {
    const keys = new RequestKeys();
    const messages: GenerateOptions['messages'] = [{ role: 'user', content: [{ type: 'text', text: 'Weather?' }] }, call('call_1', 'Oslo'), result('call_1', 'snow')];
    const before = keys.keyOf(request(messages), provider);
    (messages[1] as ReturnType<typeof call>).toolCalls[0].args.city = 'Bergen';
    const edited = keys.keyOf(request(messages), provider);
    expect(edited).not.toBe(before);
    expect(edited).toBe(requestKey(request(messages), provider));
    (messages[0].content as { text: string }[])[0].text = 'Weather tomorrow?';
    expect(keys.keyOf(request(messages), provider)).not.toBe(edited);
    expect(keys.keyOf(request(messages), provider)).toBe(requestKey(request(messages), provider));
  });

  it('reads each message it saw unchanged in the last request from its JSON alone: only new or changed messages are parsed again', () => {
    const keys = new RequestKeys();
    const messages: GenerateOptions['messages'] = [{ role: 'user', content: 'Weather?' }, call('call_1', 'Oslo'), result('call_1', 'snow')];
    const parse = vi.spyOn(JSON, 'parse');
    try {
      keys.keyOf(request(messages), provider);
      expect(parse).toHaveBeenCalledTimes(3);
      parse.mockClear();
      messages.push(call('call_2', 'Bergen'), result('call_2', 'rain'));
      keys.keyOf(request(messages), provider);
      expect(parse).toHaveBeenCalledTimes(2);
      parse.mockClear();
      (messages[2] as { content: string }).content = 'sleet';
      keys.keyOf(request(messages), provider);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('asks the model again in a run where a layer edited an older message in place before the call', async () => {
    const weather = defineTool({ name: 'weather', description: 'Forecast', execute: () => 'snow' });
    const asks = (city: string): Partial<GenerateResult> => ({ message: call(`call_${city}`, city) });
    const model = scripted([asks('Oslo'), asks('Bergen'), say('Snow in both.'), say('Snow in Oslo and Tromsø.')]);
    let edit = false;
    // Outside the cache: the edit is made before the key is. Deep in a message the call before sent unchanged.
    const editor = { name: 'editor', model: (ctx: { step: number; messages: GenerateOptions['messages'] }, next: () => Promise<GenerateResult>) => {
      if (edit && ctx.step === 3) (ctx.messages[1] as ReturnType<typeof call>).toolCalls[0].args.city = 'Tromsø';
      return next();
    } };
    const agent = createAgent({ model, tools: [weather], middleware: [editor, responseCacheMiddleware()] });
    expect((await agent.run('Weather in two cities?')).text).toBe('Snow in both.');
    edit = true;
    const again = await agent.run('Weather in two cities?');
    expect(model.calls).toBe(4);
    expect(again.usage.cacheHits).toBe(2);
    expect(again.text).toBe('Snow in Oslo and Tromsø.');
  });
});

describe('responseCacheMiddleware: options', () => {
  it('refuses what is not an option, naming the closest, and bad values with the fix', () => {
    expect(() => responseCacheMiddleware({ ttl: 5 } as never)).toThrow('responseCacheMiddleware: ttl is not a response-cache option; did you mean `ttlMs`?');
    expect(() => responseCacheMiddleware({ stor: memoryKeyValues() } as never)).toThrow('did you mean `store`?');
    expect(() => responseCacheMiddleware({ ttlMs: -1 })).toThrow('responseCacheMiddleware: ttlMs must be a positive number of milliseconds (got -1)');
    expect(() => responseCacheMiddleware({ store: {} as never })).toThrow(/store must be a key-value store/);
    expect(responseCacheMiddleware().name).toBe('response-cache');
    expect(responseCacheMiddleware().model!.name).toBe('responseCache');
  });
});
