// Streaming through the model stack (src/model-stream.ts): a streamed call is assembled into
// the same reply as a plain one, so every layer and both dialects see no difference; text
// deltas are held while a `holdStream` layer is on the stack, and retracted when a layer
// discards or changes a reply that was already shown.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type AgentEvent, type GenerateOptions, type GenerateResult, type Middleware, type ModelProvider, type RunCallOptions, type RunResult } from '../../../src/index.js';
import type { AgentHook, Hook } from '../../../src/hooks.js';
import type { StreamPart } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';
import { add } from '../../support/core.js';
import { mapText, textOf } from '../../../src/core/vocabulary/content.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up',
  input: z.object({ word: z.string() }),
  execute: ({ word }) => `${word} means ten`,
});

/** Drain a stream, keeping every event, and return them with the run's result. */
async function drain(stream: AsyncIterable<AgentEvent> & { result: Promise<RunResult> }): Promise<{ events: AgentEvent[]; result: RunResult }> {
  const events: AgentEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, result: await stream.result };
}

/** What a stream consumer ends up showing for a step: its deltas with the retracted text taken out. */
function shownText(events: readonly AgentEvent[], step: number): string {
  let shown = '';
  for (const e of events) {
    if (e.type === 'text.delta' && e.step === step) shown += e.delta;
    if (e.type === 'text.retract' && e.step === step) {
      // A retraction always takes back the end of what was shown, exactly.
      expect(shown.endsWith(e.text)).toBe(true);
      shown = shown.slice(0, shown.length - e.text.length);
    }
  }
  return shown;
}

const textEvents = (events: readonly AgentEvent[]) =>
  events.filter((e) => e.type === 'text.delta' || e.type === 'text.retract').map((e) => (e.type === 'text.delta' ? `+${e.delta}` : `-${(e as { text: string }).text}`));

/** An agent with native middleware on all three stacks, an AgentHook and a criogen Hook, all logging. */
function loggingAgent(log: string[]) {
  const model = mockModel([
    { text: 'Let me add and look it up.', toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }, { name: 'lookup', args: { word: 'x' } }] },
    'The sum is 5, and x means ten.',
  ]);
  const native: Middleware = {
    name: 'native',
    async run(ctx, next) {
      log.push(`native run in (segment ${ctx.segment})`);
      const result = await next();
      log.push(`native run out: ${result.stopReason} ${result.text}`);
      return result;
    },
    async model(ctx, next) {
      log.push(`native model in: step ${ctx.step}, ${ctx.messages.length} messages`);
      const reply = await next();
      log.push(`native model out: ${JSON.stringify(reply)}`);
      return reply;
    },
    async tool(ctx, next) {
      log.push(`native tool in: ${ctx.toolName} ${JSON.stringify(ctx.args)}`);
      const outcome = await next();
      log.push(`native tool out: ${JSON.stringify(outcome)}`);
      return outcome;
    },
  };
  const agentHook: AgentHook = {
    name: 'agent-hook',
    preToolCall: (ctx) => void log.push(`preToolCall ${ctx.toolName} ${JSON.stringify(ctx.args)}`),
    postToolCall: (ctx, r) => void log.push(`postToolCall ${ctx.toolName} ${JSON.stringify(r)}`),
    preGenerate: (ctx) => void log.push(`preGenerate ${ctx.messages.length} messages`),
    postGenerate: (_ctx, r) => void log.push(`postGenerate ${JSON.stringify(r)}`),
  };
  const hook: Hook = {
    name: 'criogen',
    onStart: (ctx) => void log.push(`onStart ${ctx.messages.length}`),
    beforeModel: (ctx) => void log.push(`beforeModel ${ctx.modelCalls}`),
    afterModel: (ctx) => void log.push(`afterModel ${JSON.stringify(ctx.messages.at(-1))}`),
    beforeTool: (call) => void log.push(`beforeTool ${call.name} ${JSON.stringify(call.args)}`),
    afterTool: (call, result) => void log.push(`afterTool ${call.name} ${JSON.stringify(result)}`),
    onEnd: (_ctx, outcome) => void log.push(`onEnd ${outcome}`),
  };
  return createAgent({ name: 'parity', instructions: 'You add.', model, tools: [add, lookup], toolConcurrency: 1, middleware: [native], hooks: [agentHook, hook] });
}

/** Events without what differs between any two runs (ids, times) and without the stream's own text events. */
const comparable = (events: readonly AgentEvent[]) =>
  events.filter((e) => e.type !== 'text.delta' && e.type !== 'text.retract').map((e) => {
    const { runId: _run, at: _at, ...rest } = e as AgentEvent & { sessionId?: string };
    delete rest.sessionId;
    return rest;
  });

describe('a streamed run is the same run as a plain one', () => {
  it('produces the same transcript, the same hook calls (native, AgentHook, criogen Hook) and the same events', async () => {
    const plainLog: string[] = [];
    const plainEvents: AgentEvent[] = [];
    const plain = await loggingAgent(plainLog).run('Add 2 and 3, and look up x', { onEvent: (e) => plainEvents.push(e) });

    const streamedLog: string[] = [];
    const streamed = await drain(loggingAgent(streamedLog).stream('Add 2 and 3, and look up x'));

    expect(streamed.result.messages).toEqual(plain.messages);
    expect(streamed.result.usage).toEqual(plain.usage);
    expect(streamedLog).toEqual(plainLog);
    // Every hook point was reached, so the comparison covers all three stacks and both dialects.
    for (const seen of ['native run in', 'native model out', 'native tool out', 'preToolCall add', 'postGenerate', 'onStart', 'afterModel', 'beforeTool lookup', 'afterTool lookup', 'onEnd completed']) {
      expect(plainLog.some((line) => line.startsWith(seen))).toBe(true);
    }
    expect(comparable(streamed.events)).toEqual(comparable(plainEvents));
  });

  it('streams each reply as word deltas that spell the reply the transcript keeps', async () => {
    const { events, result } = await drain(loggingAgent([]).stream('Add 2 and 3, and look up x'));
    const deltas = events.filter((e) => e.type === 'text.delta');
    expect(deltas.filter((e) => e.step === 1).map((e) => e.delta)).toEqual(['Let ', 'me ', 'add ', 'and ', 'look ', 'it ', 'up.']);
    expect(shownText(events, 1)).toBe('Let me add and look it up.');
    expect(shownText(events, 2)).toBe(result.text);
    expect(events.some((e) => e.type === 'text.retract')).toBe(false);
  });

  it('gives a model layer the assembled reply: text, tool calls, usage and finish reason as generate gives them', async () => {
    const script = [{ text: 'Two calls.', toolCalls: [{ name: 'add', args: { a: 1, b: 1 }, id: 'c1' }, { name: 'add', args: { a: 2, b: 2 }, id: 'c2' }], usage: { inputTokens: 11, outputTokens: 7 } }, 'Done.'];
    const replies = (streaming: boolean) => {
      const seen: GenerateResult[] = [];
      const agent = createAgent({ model: mockModel(script, { streamChunk: 3 }), tools: [add] }).use({ name: 'spy', model: async (_ctx, next) => { const r = await next(); seen.push(structuredClone(r)); return r; } });
      return { seen, agent, streaming };
    };
    const plain = replies(false);
    await plain.agent.run('Go');
    const streamed = replies(true);
    await drain(streamed.agent.stream('Go'));
    expect(streamed.seen).toEqual(plain.seen);
    expect(streamed.seen[0]).toEqual({
      message: { role: 'assistant', content: 'Two calls.', toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 1 } }, { id: 'c2', name: 'add', args: { a: 2, b: 2 } }] },
      usage: { inputTokens: 11, outputTokens: 7 },
      finishReason: 'tool_calls',
    });
  });

  it('shows a provider without stream() as one delta per reply, once the reply is final', async () => {
    const onlyGenerate: ModelProvider = { name: 'plain', generate: (request) => mockModel(['All in one piece.']).generate(request) };
    const { events, result } = await drain(createAgent({ model: onlyGenerate }).stream('Hi'));
    expect(textEvents(events)).toEqual(['+All in one piece.']);
    expect(events.findIndex((e) => e.type === 'text.delta')).toBeLessThan(events.findIndex((e) => e.type === 'model.done'));
    expect(result.text).toBe('All in one piece.');
  });

  it('uses generate, not stream, when the run is not streamed', async () => {
    const counting = () => {
      const model = mockModel(['Hello there.']);
      const provider = { name: 'counting', streamed: 0, generate: model.generate, stream: (request: GenerateOptions) => { provider.streamed++; return model.stream!(request); } };
      return provider;
    };
    const plain = counting();
    expect((await createAgent({ model: plain }).run('Hi')).text).toBe('Hello there.');
    expect(plain.streamed).toBe(0);
    const streamed = counting();
    expect((await drain(createAgent({ model: streamed }).stream('Hi'))).result.text).toBe('Hello there.');
    expect(streamed.streamed).toBe(1);
  });
});

const SECRET = 'sk-live-4242-ABCD';

/** Replaces the secret in every reply; `holdStream` decides whether text may flow before it ran. */
function redaction(holdStream: boolean, log?: (note: string) => void): Middleware {
  return {
    name: 'redact',
    holdStream,
    async model(_ctx, next) {
      const reply = await next();
      log?.('redact got the reply');
      return { ...reply, message: { ...reply.message, content: mapText(reply.message.content, (t) => t.replaceAll(SECRET, '[redacted]')) } };
    },
  };
}

const secretScript = () => [
  { text: `Your key is ${SECRET}; checking it.`, toolCalls: [{ name: 'lookup', args: { word: 'key' } }] },
  `Confirmed: ${SECRET} is valid.`,
];

describe('holdStream: a layer that must see the reply before anyone else', () => {
  it('lets no secret reach a stream consumer: not in a delta, a retraction or any other event', async () => {
    const agent = createAgent({ model: mockModel(secretScript(), { streamChunk: 4 }), tools: [lookup], middleware: [redaction(true)] });
    const { events, result } = await drain(agent.stream('What is my key?'));
    for (const event of events) expect(JSON.stringify(event)).not.toContain(SECRET);
    // Not even split across deltas: what was shown, joined, has no secret either.
    const everything = events.map((e) => (e.type === 'text.delta' ? e.delta : e.type === 'text.retract' ? e.text : '')).join('');
    expect(everything).not.toContain(SECRET);
    expect(shownText(events, 1)).toBe('Your key is [redacted]; checking it.');
    expect(shownText(events, 2)).toBe('Confirmed: [redacted] is valid.');
    expect(result.text).toBe('Confirmed: [redacted] is valid.');
    expect(events.some((e) => e.type === 'text.retract')).toBe(false);
  });

  it('releases held text as one delta, after the holding layer returned', async () => {
    const order: string[] = [];
    const agent = createAgent({ model: mockModel(['One two three.']), middleware: [redaction(true, (note) => order.push(note))] });
    const stream = agent.stream('Count');
    for await (const event of stream) if (event.type === 'text.delta') order.push(`delta ${event.delta}`);
    expect(order).toEqual(['redact got the reply', 'delta One two three.']);
  });

  it('without holdStream, deltas flow before the reply is final (so the raw text is shown, then retracted)', async () => {
    const order: string[] = [];
    const agent = createAgent({ model: mockModel([`Key: ${SECRET} ok.`]), middleware: [redaction(false, (note) => order.push(note))] });
    const stream = agent.stream('What is my key?');
    const events: AgentEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'text.delta') order.push(`delta ${event.delta}`);
      if (event.type === 'text.retract') order.push(`retract ${event.text}`);
    }
    // The deltas reached the consumer before the layer had the reply in hand.
    expect(order).toEqual(['delta Key: ', `delta ${SECRET} `, 'delta ok.', 'redact got the reply', `retract Key: ${SECRET} ok.`, 'delta Key: [redacted] ok.']);
    expect(shownText(events, 1)).toBe((await stream.result).text);
  });

  it('holds only for a layer of the model stack (holdStream on a tool-only middleware changes nothing)', async () => {
    const agent = createAgent({ model: mockModel(['One two.']), middleware: [{ name: 'tools-only', holdStream: true, tool: (_ctx, next) => next() }] });
    const { events } = await drain(agent.stream('Hi'));
    expect(textEvents(events)).toEqual(['+One ', '+two.']);
  });
});

/** A provider whose streamed attempts are scripted: each attempt yields its deltas, then finishes or breaks off. */
function attempts(...scripts: { deltas: string[]; breaksOff?: boolean }[]): ModelProvider & { started: number } {
  const provider = {
    name: 'attempts',
    started: 0,
    async generate(): Promise<GenerateResult> {
      throw new Error('this provider only streams');
    },
    async *stream(_request: GenerateOptions): AsyncIterable<StreamPart> {
      const script = scripts[provider.started++];
      for (const delta of script.deltas) yield { type: 'text', delta };
      if (script.breaksOff) throw new Error('connection reset mid-stream');
      yield { type: 'finish', usage: { inputTokens: 3, outputTokens: script.deltas.length }, finishReason: 'stop' };
    },
  };
  return provider;
}

const retryOnce: Middleware = {
  name: 'retry-once',
  async model(_ctx, next) {
    try {
      return await next();
    } catch {
      return next();
    }
  },
};

describe('retracting text a layer discarded', () => {
  it('retracts what a failed attempt streamed before the retry streams anew', async () => {
    const provider = attempts({ deltas: ['Draft ', 'ans'], breaksOff: true }, { deltas: ['Final ', 'answer.'] });
    const { events, result } = await drain(createAgent({ model: provider, middleware: [retryOnce] }).stream('Hi', {}));
    expect(provider.started).toBe(2);
    expect(textEvents(events)).toEqual(['+Draft ', '+ans', '-Draft ans', '+Final ', '+answer.']);
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'Final answer.' }]);
  });

  it('retracts a complete reply that a layer rejected and asked for again', async () => {
    const rejectFirst: Middleware = {
      name: 'reject-bad',
      async model(_ctx, next) {
        const first = await next();
        return textOf(first.message.content).startsWith('Bad') ? next() : first;
      },
    };
    const { events, result } = await drain(createAgent({ model: mockModel(['Bad answer.', 'Good answer.']), middleware: [rejectFirst] }).stream('Hi'));
    expect(textEvents(events)).toEqual(['+Bad ', '+answer.', '-Bad answer.', '+Good ', '+answer.']);
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'Good answer.' }]);
    const done = events.filter((e) => e.type === 'model.done');
    expect(done.map((e) => e.message.content)).toEqual(['Good answer.']);
  });

  it('shows nothing of a discarded attempt when a holdStream layer is on the stack', async () => {
    const provider = attempts({ deltas: ['Draft ', 'ans'], breaksOff: true }, { deltas: ['Final ', 'answer.'] });
    const { events } = await drain(createAgent({ model: provider, middleware: [retryOnce, redaction(true)] }).stream('Hi'));
    expect(textEvents(events)).toEqual(['+Final answer.']);
  });

  it('retracts every delta of a call whose failure ends the run, so the consumer shows no reply the transcript lacks', async () => {
    const provider = attempts({ deltas: ['Half ', 'a '], breaksOff: true });
    const stream = createAgent({ model: provider }).stream('Hi');
    const events: AgentEvent[] = [];
    const failure = await (async () => {
      try {
        for await (const event of stream) events.push(event);
      } catch (error) {
        return error as Error;
      }
      return undefined;
    })();
    expect(failure?.message).toMatch(/connection reset mid-stream/);
    await expect(stream.result).rejects.toBe(failure);
    expect(shownText(events, 1)).toBe('');
    expect(events.at(-1)?.type).toBe('run.end');
  });

  it('keeps deltas minus retractions equal to the transcript over many steps and retries', async () => {
    const flaky: Middleware = {
      name: 'flaky',
      async model(ctx, next) {
        const first = await next();
        // Every other step is asked again, and the second answer is also edited afterwards.
        if (ctx.step % 2 === 0) {
          const again = await next();
          return { ...again, message: { ...again.message, content: `${again.message.content} (checked)` } };
        }
        return first;
      },
    };
    const script = Array.from({ length: 6 }, (_, i) => ({ text: `Step reply ${i} goes here.`, toolCalls: [{ name: 'add', args: { a: i, b: 1 } }] }));
    const replies = [script[0], script[1], script[2], script[3], script[4], script[5], 'All done.'];
    const { events, result } = await drain(createAgent({ model: mockModel(replies), tools: [add], middleware: [flaky], maxSteps: 5 }).stream('Go', {} satisfies RunCallOptions));
    const assistant = result.messages.filter((m) => m.role === 'assistant');
    expect(assistant).toHaveLength(5);
    assistant.forEach((m, i) => expect(shownText(events, i + 1)).toBe(m.content));
    expect(events.filter((e) => e.type === 'text.retract').length).toBeGreaterThanOrEqual(4);
  });
});

describe('reasoning in a stream', () => {
  const thinking = () => mockModel([{ reasoning: { text: 'The user wants a word looked up.', providerOptions: { anthropic: { signature: 'sig-1' } } }, text: 'Ten.' }], { streamChunk: 8 });

  it('arrives as reasoning.delta events of its own, ahead of the text, and the reply keeps its provider data', async () => {
    const { events, result } = await drain(createAgent({ model: thinking() }).stream('What is ten?'));
    const reasoning = events.filter((e) => e.type === 'reasoning.delta').map((e) => (e as { delta: string }).delta);
    expect(reasoning.join('')).toBe('The user wants a word looked up.');
    expect(reasoning.length).toBeGreaterThan(1);
    expect(events.findIndex((e) => e.type === 'reasoning.delta')).toBeLessThan(events.findIndex((e) => e.type === 'text.delta'));
    expect(result.messages.at(-1)?.content).toEqual([
      { type: 'reasoning', text: 'The user wants a word looked up.', providerOptions: { anthropic: { signature: 'sig-1' } } },
      { type: 'text', text: 'Ten.' },
    ]);
  });

  it('is held by a holdStream layer, and a layer that drops it has it retracted when it had streamed', async () => {
    const dropReasoning: Middleware = {
      name: 'drop-reasoning',
      async model(_ctx, next) {
        const reply = await next();
        const content = reply.message.content;
        return { ...reply, message: { ...reply.message, content: typeof content === 'string' ? content : content.filter((p) => p.type !== 'reasoning') } };
      },
    };
    const held = await drain(createAgent({ model: thinking() }).use({ ...dropReasoning, holdStream: true }).stream('x'));
    expect(held.events.some((e) => e.type === 'reasoning.delta' || e.type === 'reasoning.retract')).toBe(false);
    expect(shownText(held.events, 1)).toBe('Ten.');
    const open = await drain(createAgent({ model: thinking() }).use(dropReasoning).stream('x'));
    const retracted = open.events.filter((e) => e.type === 'reasoning.retract');
    expect(retracted).toEqual([expect.objectContaining({ text: 'The user wants a word looked up.', step: 1 })]);
    expect(shownText(open.events, 1)).toBe('Ten.');
  });

  it('of a failed attempt is retracted before a retry streams anew', async () => {
    const model = mockModel([{ reasoning: 'first try', text: 'A' }, { reasoning: 'second try', text: 'B' }]);
    let attempts = 0;
    const retryOnce: Middleware = { name: 'retry-once', async model(_ctx, next) { const reply = await next(); return attempts++ === 0 ? next() : reply; } };
    const { events } = await drain(createAgent({ model }).use(retryOnce).stream('x'));
    const kinds = events.filter((e) => e.type.startsWith('reasoning.')).map((e) => `${e.type}:${(e as { delta?: string; text?: string }).delta ?? (e as { text: string }).text}`);
    expect(kinds).toEqual(['reasoning.delta:first ', 'reasoning.delta:try', 'reasoning.retract:first try', 'reasoning.delta:second ', 'reasoning.delta:try']);
    expect(shownText(events, 1)).toBe('B');
  });
});
