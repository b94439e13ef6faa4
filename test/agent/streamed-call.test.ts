// Every kind of segment streams: a resumed run, a session turn, a recovered run — `{ stream: true }`
// on run, send, resume and recover returns the same AgentStream as agent.stream(), asks the model
// with stream=true (checked on a loopback Chat Completions server) and keeps the same text rules.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, mapText, memoryStore, openai, type AgentEvent, type Message, type ModelProvider, type RunResult } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import type { OpenAICompatibleServer as ChatServer } from '../../src/testing/index.js';
import { chatServerPerTest } from '../support/chat-server.js';
import { mortal } from '../support/durable.js';
import { manualClock } from '../support/clock.js';
import { heldStream } from '../support/core.js';

const server = chatServerPerTest();
const model = (s: ChatServer) => openai({ model: 'gpt-5-mini', baseURL: s.baseURL, apiKey: 'sk-test' });
const pay = defineTool({ name: 'pay', description: 'Pay someone', input: z.object({ to: z.string() }), needsApproval: true, execute: ({ to }) => `paid ${to}` });
const payCall = { reply: { toolCalls: [{ id: 'call_pay', name: 'pay', arguments: '{"to":"Alice"}' }] } };

/** Every event of a stream, and its result. */
async function drain<R>(stream: AsyncIterable<AgentEvent> & { result: Promise<R> }): Promise<{ events: AgentEvent[]; result: R }> {
  const events: AgentEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, result: await stream.result };
}

const deltas = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'text.delta' ? [e.delta] : [])).join('');
const userTexts = (messages: Array<{ role: string; content: unknown }>) => messages.filter((m) => m.role === 'user').map((m) => m.content);

describe('{ stream: true }: every kind of segment asks the model with stream=true and streams its text', () => {
  it('a resume after approval streams, with one tool.start for the call, when it runs', async () => {
    const s = await server(payCall, { reply: { text: 'Paid Alice.' } });
    const agent = createAgent({ model: model(s), tools: [pay] });
    const first = await drain(agent.stream('Pay Alice'));
    expect(first.result.status).toBe('suspended');
    expect(first.events.map((e) => e.type)).toContain('approval.requested');
    expect(first.events.map((e) => e.type)).not.toContain('tool.start');
    const resumed = await drain(agent.resume(first.result.state, { call_pay: true }, { stream: true }));
    expect(s.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(resumed.result).toMatchObject({ status: 'completed', text: 'Paid Alice.' });
    expect(deltas(resumed.events)).toBe('Paid Alice.');
    expect(resumed.events.filter((e) => e.type === 'tool.start').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual(['call_pay']);
    expect(resumed.events[0]).toMatchObject({ type: 'run.start', resumed: true, segment: 2 });
  });

  it('a resume by run id through a store streams too', async () => {
    const s = await server(payCall, { reply: { text: 'Paid.' } });
    const agent = createAgent({ model: model(s), tools: [pay], store: memoryStore() });
    const first = await agent.run('Pay Alice');
    const resumed = await drain(agent.resume(first.runId, { call_pay: true }, { stream: true }));
    expect(s.requests.map((r) => r.body.stream === true)).toEqual([false, true]);
    expect(deltas(resumed.events)).toBe('Paid.');
  });

  it("a send streams the agent's own session's next turn: the model gets the history", async () => {
    const s = await server({ reply: { text: 'Hello Ada.' } }, { reply: { text: 'You are Ada.' } });
    const agent = createAgent({ model: model(s) });
    await agent.send('I am Ada');
    const turn = await drain(agent.send('Who am I?', { stream: true }));
    expect(s.requests.map((r) => r.body.stream === true)).toEqual([false, true]);
    expect(userTexts(s.requests[1].body.messages)).toEqual(['I am Ada', 'Who am I?']);
    expect(deltas(turn.events)).toBe('You are Ada.');
    expect(turn.result.messages.map((m: Message) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('a recovered run streams: recover({ stream: true }) gives the events of each run it continues, and the list as its result', async () => {
    const s = await server({ reply: { text: 'Recovered, and paid.' } });
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    const dying = mortal(store);
    const add = defineTool({ name: 'add', description: 'Add', execute: () => 3 });
    // The first worker asks for a tool, then dies while its model is asked again.
    const dies: ModelProvider = {
      async generate(request) {
        if (request.messages.some((m) => m.role === 'tool')) return (dying.die(), new Promise(() => undefined));
        return { message: { role: 'assistant', content: '', toolCalls: [{ id: 'a1', name: 'add', args: {} }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' };
      },
    };
    void createAgent({ name: 'teller', model: dies, tools: [add], store: dying.store }).run('Add');
    await dying.died;
    await clock.advance(1001);
    const { events, result } = await drain(createAgent({ name: 'teller', model: model(s), tools: [add], store }).runs.recover({ stream: true }));
    expect(s.requests.map((r) => r.body.stream)).toEqual([true]);
    expect(result).toHaveLength(1);
    expect(result[0].result).toMatchObject({ status: 'completed', text: 'Recovered, and paid.' });
    expect(deltas(events)).toBe('Recovered, and paid.');
    expect(events[0]).toMatchObject({ type: 'run.start', resumed: true, runId: result[0].runId });
    expect(events.at(-1)).toMatchObject({ type: 'run.end', status: 'completed' });
  });

  it('run({ stream: true }) is agent.stream(); stream: false keeps the promise; a bad value is refused at once', async () => {
    const agent = createAgent({ model: mockModel(['One.', 'Two.']) });
    expect(deltas((await drain(agent.run('Hi', { stream: true }))).events)).toBe('One.');
    expect((await agent.run('Hi', { stream: false })).text).toBe('Two.');
    await expect(agent.resume('run_x', {}, { stream: 'yes' } as never)).rejects.toThrow('agent.resume(state, decisions, options): stream must be true or false (got the string "yes")');
    expect(() => agent.stream('Hi', { stream: false } as never)).toThrow(/agent\.stream\(\) always streams/);
  });
});

describe('a streamed session turn continues the session, as send does', () => {
  it('agent.stream(input, { sessionId }) gives the model the stored session, and the next send has every turn', async () => {
    const s = await server({ reply: { text: 'Hello Ada.' } }, { reply: { text: 'You are Ada.' } }, { reply: { text: 'Still Ada.' } });
    const agent = createAgent({ model: model(s), store: memoryStore() });
    await agent.send('I am Ada', { sessionId: 'user-1' });
    const streamed = await drain(agent.stream('Who am I?', { sessionId: 'user-1' }));
    expect(s.requests[1].body.stream).toBe(true);
    expect(userTexts(s.requests[1].body.messages)).toEqual(['I am Ada', 'Who am I?']);
    expect(deltas(streamed.events)).toBe('You are Ada.');
    await agent.send('And now?', { sessionId: 'user-1' });
    expect(userTexts(s.requests[2].body.messages)).toEqual(['I am Ada', 'Who am I?', 'And now?']);
  });

  it('agent.stream(input, { sessionId }) without a store is refused at once, saying what to use', () => {
    const agent = createAgent({ model: mockModel(['x']) });
    expect(() => agent.stream('Hi', { sessionId: 'user-1' })).toThrow(/agent\.stream\(input, \{ sessionId \}\): a stored session needs a run store.*agent\.run\(input, \{ sessionId, stream: true \}\) streams a run with a fresh transcript/);
  });
});

describe('a streamed resume keeps the stream rules of agent.stream()', () => {
  const CARD = /\b\d{4}(?: \d{4}){3}\b/g;
  const redactCards = {
    name: 'redact-cards',
    holdStream: true,
    async model(_ctx: unknown, next: () => Promise<{ message: { content: string } }>) {
      const reply = await next();
      return { ...reply, message: { ...reply.message, content: mapText(reply.message.content as never, (text) => text.replace(CARD, '[card]')) } };
    },
  };

  it('a holdStream layer holds the resumed segment\'s text: only the reply it returned is shown', async () => {
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: { to: 'Alice' } }] }, 'Paid with 4111 1111 1111 1111.']), tools: [pay] }).use(redactCards as never);
    const first = await agent.run('Pay Alice');
    const { events } = await drain(agent.resume(first.state, { p: true }, { stream: true }));
    expect(events.filter((e) => e.type === 'text.delta').map((e) => (e as { delta: string }).delta)).toEqual(['Paid with [card].']);
    expect(JSON.stringify(events)).not.toContain('4111');
  });

  it('text a layer rejected after it streamed is retracted: deltas minus retractions spell the reply kept', async () => {
    let calls = 0;
    const rejectFirst = { name: 'reject-first', async model(_ctx: unknown, next: () => Promise<unknown>) { const first = await next(); return ++calls === 2 ? next() : first; } };
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: { to: 'Alice' } }] }, 'Bad answer.', 'Good answer.']), tools: [pay] }).use(rejectFirst as never);
    const first = await agent.run('Pay Alice');
    const { events, result } = await drain(agent.resume(first.state, { p: true }, { stream: true }));
    let shown = '';
    for (const e of events) {
      if (e.type === 'text.delta') shown += e.delta;
      if (e.type === 'text.retract') shown = shown.slice(0, shown.length - e.text.length);
    }
    expect(events.some((e) => e.type === 'text.retract')).toBe(true);
    expect(shown).toBe('Good answer.');
    expect((result as RunResult).text).toBe('Good answer.');
  });

  it('breaking out of a streamed resume cancels it: the segment ends aborted, once', async () => {
    const agent = createAgent({ model: heldStream(mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: { to: 'Alice' } }] }, 'a b c d e f g h'])), tools: [pay] });
    const first = await agent.run('Pay Alice');
    const ends: AgentEvent[] = [];
    const stream = agent.resume(first.state, { p: true }, { stream: true, onEvent: (e) => void (e.type === 'run.end' && ends.push(e)) });
    for await (const event of stream) if (event.type === 'text.delta') break;
    expect((await stream.result).stopReason).toBe('aborted');
    expect(ends).toHaveLength(1);
  });
});
