// modelFallbackMiddleware: which failures move on to the next model, what it records of the model
// that answered (event, spans, hook state, usage), how it composes with retryMiddleware, and that
// a streamed attempt that failed leaves nothing of its text behind. Over a loopback server too.
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, openai, ProviderError, type AgentEvent, type GenerateOptions, type ModelProvider } from '../../src/index.js';
import type { StreamPart } from '../../src/types.js';
import { modelFallbackMiddleware, retryMiddleware } from '../../src/middleware.js';
import type { FallbackRecord } from '../../src/middleware/model-fallback-middleware.js';
import { mockModel, openaiCompatibleServer } from '../../src/testing/index.js';
import { chatServerPerTest } from '../support/chat-server.js';
import { provider, reply, runFailure } from '../support/core.js';

const unavailable = () => new ProviderError({ provider: 'test', kind: 'http', status: 503, providerMessage: 'overloaded', retryable: true });
const badRequest = () => new ProviderError({ provider: 'test', kind: 'http', status: 400, providerMessage: 'bad', retryable: false });

/** A model named `id` that throws `failures` in order, then answers with its name. */
function named(id: string, failures: unknown[] = [], usage = { inputTokens: 1, outputTokens: 1 }): ModelProvider & { requests: GenerateOptions[] } {
  const model = provider((_request, call) => {
    if (call <= failures.length) throw failures[call - 1];
    return { ...reply(`answer from ${id}`), usage };
  });
  return Object.assign(model, { modelId: id });
}

const down = (id: string) => named(id, Array.from({ length: 10 }, unavailable));
const fallbacksOf = (events: AgentEvent[]) => events.filter((e) => e.type === 'model.fallback');

describe('modelFallbackMiddleware: when it moves on', () => {
  it('asks the next model when the agent\'s model fails with a retryable error, and the run goes on with its answer', async () => {
    const primary = down('primary');
    const backup = named('backup');
    const result = await createAgent({ model: primary, middleware: [modelFallbackMiddleware({ models: [backup] })] }).run('Hi');
    expect(result.text).toBe('answer from backup');
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(1);
    // The backup got the same transcript the primary did.
    expect(backup.requests[0].messages).toEqual(primary.requests[0].messages);
  });

  it('goes down the list in order until one answers', async () => {
    const second = down('second');
    const third = named('third');
    const result = await createAgent({ model: down('first'), middleware: [modelFallbackMiddleware({ models: [second, third] })] }).run('Hi');
    expect(result.text).toBe('answer from third');
    expect(second.requests).toHaveLength(1);
  });

  it('does not fall back on an error that is not retryable', async () => {
    const backup = named('backup');
    const error = await runFailure(createAgent({ model: named('primary', [badRequest()]), middleware: [modelFallbackMiddleware({ models: [backup] })] }).run('Hi'), 'model_error');
    expect(error.cause).toMatchObject({ status: 400 });
    expect(backup.requests).toHaveLength(0);
  });

  it('raises the last model\'s error when every model failed', async () => {
    const last = unavailable();
    const error = await runFailure(createAgent({ model: down('a'), middleware: [modelFallbackMiddleware({ models: [named('b', [last])] })] }).run('Hi'), 'model_error');
    expect(error.cause).toBe(last);
  });

  it('asks shouldFallback when given one, with the error and the model that failed', async () => {
    const asked: string[] = [];
    const backup = named('backup');
    const fallback = modelFallbackMiddleware({ models: [backup], shouldFallback: (error, model) => { asked.push(`${model.modelId}:${(error as ProviderError).status}`); return true; } });
    const result = await createAgent({ model: named('primary', [badRequest()]), middleware: [fallback] }).run('Hi');
    expect(asked).toEqual(['primary:400']);
    expect(result.text).toBe('answer from backup');
  });

  it('starts each model call from the agent\'s model again', async () => {
    const tool = defineTool({ name: 'noop', description: 'Nothing', input: z.object({}), execute: () => 'ok' });
    const model = Object.assign(provider((request, call) => {
      if (call === 1) throw unavailable();
      return request.messages.some((m) => m.role === 'tool') ? reply('done') : reply('', [{ id: 'c1', name: 'noop', args: {} }]);
    }), { modelId: 'primary' });
    const result = await createAgent({ model, tools: [tool], middleware: [modelFallbackMiddleware({ models: [Object.assign(provider(() => reply('', [{ id: 'c1', name: 'noop', args: {} }])), { modelId: 'backup' })] })] }).run('Hi');
    // Turn 1: primary failed, backup asked for the tool; turn 2: primary answered again.
    expect(result.text).toBe('done');
    expect(model.requests).toHaveLength(2);
  });
});

describe('modelFallbackMiddleware: what it records of the model that answered', () => {
  it('emits model.fallback with from, to and the error, and counts modelFallbacks in usage', async () => {
    const events: AgentEvent[] = [];
    const seen: string[] = [];
    const fallback = modelFallbackMiddleware({ models: [down('b'), named('c')], onFallback: ({ from, to, attempt }) => seen.push(`${attempt}:${from}→${to}`) });
    const result = await createAgent({ model: down('a'), middleware: [fallback], onEvent: (e) => events.push(e) }).run('Hi');
    expect(fallbacksOf(events).map(({ from, to, attempt, step }) => ({ from, to, attempt, step }))).toEqual([{ from: 'a', to: 'b', attempt: 1, step: 1 }, { from: 'b', to: 'c', attempt: 2, step: 1 }]);
    expect(fallbacksOf(events)[0].message).toContain('overloaded');
    expect(seen).toEqual(['1:a→b', '2:b→c']);
    expect(result.usage.modelFallbacks).toBe(2);
  });

  it('keeps usage per model in hook state', async () => {
    const model = named('primary', [unavailable()], { inputTokens: 7, outputTokens: 2 });
    const tool = defineTool({ name: 'noop', description: 'Nothing', input: z.object({}), execute: () => 'ok' });
    const backup = Object.assign(provider(() => ({ ...reply('', [{ id: 'c1', name: 'noop', args: {} }]), usage: { inputTokens: 10, outputTokens: 3 } })), { modelId: 'backup' });
    const result = await createAgent({ model, tools: [tool], middleware: [modelFallbackMiddleware({ models: [backup] })] }).run('Hi');
    const record = result.state.hookState['model-fallback'] as FallbackRecord;
    expect(record.byModel).toEqual({
      primary: { calls: 1, failures: 1, inputTokens: 7, outputTokens: 2 },
      backup: { calls: 1, failures: 0, inputTokens: 10, outputTokens: 3 },
    });
    expect(record.lastModel).toBe('primary');
  });

  it('gives each attempt a chat span named after the model asked, the failed one marked as an error', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    try {
      await createAgent({ model: down('primary'), middleware: [modelFallbackMiddleware({ models: [named('backup')] })] }).run('Hi');
      const chats = exporter.getFinishedSpans().filter((s) => s.name.startsWith('chat '));
      expect(chats.map((s) => [s.name, s.attributes['gen_ai.request.model'], s.status.code])).toEqual([['chat primary', 'primary', 2], ['chat backup', 'backup', 0]]);
    } finally {
      trace.disable();
    }
  });
});

describe('modelFallbackMiddleware: with retryMiddleware', () => {
  const noWait = { sleep: async () => undefined };

  it('outside it (retry first in the list): a failing model costs one attempt, then the retry repeats the whole list', async () => {
    const primary = named('primary', [unavailable(), unavailable()]);
    const backup = named('backup', [unavailable()]);
    const result = await createAgent({ model: primary, middleware: [retryMiddleware(noWait), modelFallbackMiddleware({ models: [backup] })] }).run('Hi');
    // Round 1: primary failed, backup failed → retry; round 2: primary failed, backup answered.
    expect(result.text).toBe('answer from backup');
    expect([primary.requests.length, backup.requests.length]).toEqual([2, 2]);
  });

  it('inside it (fallback first in the list): each model is retried before the next is asked', async () => {
    const primary = down('primary');
    const backup = named('backup');
    const result = await createAgent({ model: primary, middleware: [modelFallbackMiddleware({ models: [backup] }), retryMiddleware({ ...noWait, maxRetries: 2 })] }).run('Hi');
    expect(result.text).toBe('answer from backup');
    expect([primary.requests.length, backup.requests.length]).toEqual([3, 1]);
  });
});

describe('modelFallbackMiddleware: streaming', () => {
  /** A streaming model that sends `text`, then fails before it finishes. */
  function breaksMidStream(id: string, text: string): ModelProvider {
    return {
      modelId: id,
      generate: async () => { throw unavailable(); },
      async *stream(): AsyncIterable<StreamPart> {
        yield { type: 'text', delta: text };
        throw unavailable();
      },
    };
  }

  it('takes back the failed attempt\'s streamed text before the next model\'s flows', async () => {
    const backup = mockModel(['The real answer.'], { streamChunk: 5 });
    Object.assign(backup, { modelId: 'backup' });
    const stream = createAgent({ model: breaksMidStream('primary', 'Half an ans'), middleware: [modelFallbackMiddleware({ models: [backup] })] }).stream('Hi');
    const events: AgentEvent[] = [];
    for await (const event of stream) events.push(event);
    const result = await stream.result;
    let shown = '';
    for (const e of events) {
      if (e.type === 'text.delta') shown += e.delta;
      if (e.type === 'text.retract') {
        expect(shown.endsWith(e.text)).toBe(true);
        shown = shown.slice(0, shown.length - e.text.length);
      }
    }
    expect(events.some((e) => e.type === 'text.retract' && e.text === 'Half an ans')).toBe(true);
    expect(shown).toBe('The real answer.');
    expect(result.text).toBe('The real answer.');
  });
});

describe('modelFallbackMiddleware: over HTTP', () => {
  const serve = chatServerPerTest();

  it('falls back when the primary server answers 503, and the backup server gets the same conversation', async () => {
    const primary = await serve({ status: 503, body: { error: { message: 'The server is overloaded', type: 'server_error' } } });
    const primaryModel = openai({ model: 'gpt-primary', baseURL: primary.baseURL, apiKey: 'sk-test' });
    const backupServer = await openaiCompatibleServer({ responses: [{ reply: { text: 'Hello from the backup.' } }] });
    try {
      const events: AgentEvent[] = [];
      const backupModel = openai({ model: 'gpt-backup', baseURL: backupServer.baseURL, apiKey: 'sk-test' });
      const result = await createAgent({ model: primaryModel, instructions: 'Be brief.', middleware: [modelFallbackMiddleware({ models: [backupModel] })], onEvent: (e) => events.push(e) }).run('Hi');
      expect(result.text).toBe('Hello from the backup.');
      expect(backupServer.requests[0].body.model).toBe('gpt-backup');
      expect(backupServer.requests[0].body.messages).toEqual(primary.requests[0].body.messages);
      expect(fallbacksOf(events)[0]).toMatchObject({ from: 'gpt-primary', to: 'gpt-backup' });
      expect((result.state.hookState['model-fallback'] as FallbackRecord).lastModel).toBe('gpt-backup');
    } finally {
      await backupServer.close();
    }
  });
});

describe('modelFallbackMiddleware: options', () => {
  it('refuses unknown keys naming the closest one, and model strings naming resolveModel', () => {
    expect(() => modelFallbackMiddleware({ modles: [named('b')] } as never)).toThrow(/modles is not a model fallback option; did you mean `models`\?/);
    expect(() => modelFallbackMiddleware({ models: ['openai:gpt-5-mini'] } as never)).toThrow(/models\[0\].*resolveModel/);
    expect(() => modelFallbackMiddleware({ models: [] })).toThrow(/at least one model/);
  });

  it('is a named middleware whose model layer is a named function', () => {
    const mw = modelFallbackMiddleware({ models: [named('b')] });
    expect(mw.name).toBe('model-fallback');
    expect(mw.model?.name).toBe('modelFallback');
  });
});
