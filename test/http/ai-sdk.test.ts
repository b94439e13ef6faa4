// Spec of the AI SDK's UI message stream protocol, driven by the `ai` package's own client code
// (`AbstractChat` with `DefaultChatTransport`, `readUIMessageStream`) against the handler on a
// loopback server and a SQLite file: text, reasoning and tool parts; approval requests answered
// with `addToolApprovalResponse`; errors; and a reconnect (`resumeStream`) that shows the text as
// the transcript has it, what was retracted left out.
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, textOf, type Agent } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { createHandler } from '../../src/http.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { served, tempDb, type Served } from '../support/http.js';
import { heldModel } from '../support/held-model.js';
import { until } from '../support/waits.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The state a UI framework would keep (plain arrays here: the chat runs in Node). */
class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  constructor(public messages: UIMessage[]) {}
  pushMessage = (message: UIMessage) => void (this.messages = [...this.messages, message]);
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: UIMessage) => void (this.messages = this.messages.map((m, i) => (i === index ? message : m)));
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class Chat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    super({ ...init, state: new MemoryState(init.messages ?? []) });
  }
}

const authorize = (request: Request) => (request.headers.get('authorization') === 'Bearer ada' ? { actor: { id: 'ada' }, tenant: 'acme' } : null);

async function setUp(agent: Agent<any, any>): Promise<{ server: Served; store: RunStore; chat: (init?: ChatInit<UIMessage>) => Chat }> {
  const db = tempDb();
  const store = sqliteStore({ path: db.path });
  const server = await served(createHandler({ agents: [agent], store, authorize }));
  closers.push(() => db.remove(), () => store.close(), () => server.close());
  const transport = new DefaultChatTransport<UIMessage>({ api: `${server.url}/chat`, headers: { authorization: 'Bearer ada' } });
  return { server, store, chat: (init = {}) => new Chat({ transport, ...init }) };
}

const texts = (message: UIMessage | undefined) => (message?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
const lookup = defineTool({ name: 'lookup', description: 'Look up', input: z.object({ q: z.string() }), execute: ({ q }) => `found ${q}` });

describe('useChat against the handler', () => {
  it('streams text, reasoning and tool parts into one assistant message, whose texts are the transcript\'s', async () => {
    const model = mockModel([{ reasoning: 'Let me look.', text: 'Looking it up.', toolCalls: [{ id: 'l1', name: 'lookup', args: { q: 'tea' } }] }, 'Tea is found.'], { resumable: true });
    const { chat, store } = await setUp(createAgent({ name: 'assistant', model, tools: [lookup] }));
    const c = chat({ id: 'chat-1' });
    await c.sendMessage({ text: 'Find tea' });
    expect(c.status).toBe('ready');
    const reply = c.messages.at(-1)!;
    expect(reply.role).toBe('assistant');
    expect(reply.parts.map((p) => p.type)).toEqual(['step-start', 'reasoning', 'text', 'tool-lookup', 'step-start', 'text']);
    expect(reply.parts.find((p) => p.type === 'reasoning')).toMatchObject({ text: 'Let me look.' });
    expect(reply.parts.find((p) => p.type === 'tool-lookup')).toMatchObject({ toolCallId: 'l1', state: 'output-available', input: { q: 'tea' }, output: 'found tea' });
    const [run] = await store.listRuns({ sessionId: 'acme/chat-1' });
    expect(reply.id).toBe(run.runId);
    const state = (await store.loadRun(run.runId))!;
    expect(texts(reply)).toEqual(state.messages.filter((m) => m.role === 'assistant').map((m) => textOf(m.content)).filter((t) => t !== ''));
    // The next message continues the session: the store's history, not the client's.
    await c.sendMessage({ text: 'Thanks' });
    expect(c.messages).toHaveLength(4);
  });

  it('readUIMessageStream reads the transport\'s chunks into the same message', async () => {
    const { server } = await setUp(createAgent({ name: 'assistant', model: mockModel(['Plain answer here.']) }));
    const transport = new DefaultChatTransport<UIMessage>({ api: `${server.url}/chat`, headers: { authorization: 'Bearer ada' } });
    const stream = await transport.sendMessages({ chatId: 'raw', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream })) last = message;
    expect(texts(last)).toEqual(['Plain answer here.']);
  });

  it('a run that fails reaches the chat as its error', async () => {
    const { chat } = await setUp(createAgent({ name: 'assistant', model: mockModel([{ error: 'the model is down' }]) }));
    const c = chat({ id: 'failing' });
    await c.sendMessage({ text: 'Hi' });
    expect(c.status).toBe('error');
    expect(c.error?.message).toMatch(/the model is down/);
  });
});

describe('approvals through useChat', () => {
  const pay = defineTool({ name: 'pay', description: 'Pay', input: z.object({ to: z.string() }), needsApproval: true, execute: ({ to }) => `paid ${to}` });
  const payer = () => createAgent({ name: 'payer', model: mockModel([{ toolCalls: [{ id: 'p1', name: 'pay', args: { to: 'Alice' } }] }, 'Alice is paid.'], { resumable: true }), tools: [pay] });

  it('asks with tool-approval-request; addToolApprovalResponse resumes the run, recorded as ada through the API', async () => {
    const { chat, store } = await setUp(payer());
    const c = chat({ id: 'pay-1', sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await c.sendMessage({ text: 'Pay Alice' });
    const part = c.messages.at(-1)!.parts.find((p) => p.type === 'tool-pay') as { state: string; approval: { id: string }; input: unknown };
    expect(part).toMatchObject({ state: 'approval-requested', input: { to: 'Alice' }, approval: { id: expect.any(String) } });
    await c.addToolApprovalResponse({ id: part.approval.id, approved: true });
    await until(() => c.status === 'ready' && texts(c.messages.at(-1)).includes('Alice is paid.'), 'the reply after the approval');
    expect(c.messages).toHaveLength(2);
    expect(c.messages[1].parts.find((p) => p.type === 'tool-pay')).toMatchObject({ state: 'output-available', output: 'paid Alice' });
    const [run] = await store.listRuns({ sessionId: 'acme/pay-1' });
    const state = (await store.loadRun(run.runId))!;
    expect(state.status).toBe('completed');
    expect(state.decisionLog).toEqual([expect.objectContaining({ toolCallId: 'p1', decision: 'approved', actor: { id: 'ada' }, surface: 'api' })]);
  });

  it('a denial ends the call denied', async () => {
    const { chat } = await setUp(createAgent({ name: 'payer', model: mockModel([{ toolCalls: [{ id: 'p1', name: 'pay', args: { to: 'Alice' } }] }, 'Understood, not paying.'], { resumable: true }), tools: [pay] }));
    const c = chat({ id: 'pay-2', sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await c.sendMessage({ text: 'Pay Alice' });
    const part = c.messages.at(-1)!.parts.find((p) => p.type === 'tool-pay') as { approval: { id: string } };
    await c.addToolApprovalResponse({ id: part.approval.id, approved: false, reason: 'No' });
    await until(() => c.status === 'ready' && texts(c.messages.at(-1)).includes('Understood, not paying.'), 'the reply after the denial');
    expect(c.messages[1].parts.find((p) => p.type === 'tool-pay')).toMatchObject({ state: 'output-denied' });
  });

  it('an approval whose id the client changed is refused: the chat shows the error, the run still waits, the refusal is kept', async () => {
    const { chat, server, store } = await setUp(payer());
    const c = chat({ id: 'pay-3', sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await c.sendMessage({ text: 'Pay Alice' });
    // A client that rewrites its history before answering.
    c.messages = c.messages.map((m) => ({ ...m, parts: m.parts.map((p) => (p.type === 'tool-pay' ? { ...p, approval: { id: 'forged' } } : p)) })) as UIMessage[];
    await c.addToolApprovalResponse({ id: 'forged', approved: true });
    await until(() => c.status === 'error', 'the refusal');
    expect(c.error?.message).toMatch(/digest does not match/);
    const [run] = await store.listRuns({ sessionId: 'acme/pay-3' });
    expect(run.status).toBe('suspended');
    const read = (await (await fetch(`${server.url}/runs/${run.runId}`, { headers: { authorization: 'Bearer ada' } })).json()) as { refusedDecisions: unknown[] };
    expect(read.refusedDecisions).toEqual([expect.objectContaining({ toolCallId: 'p1', reason: 'digest', actor: { id: 'ada' } })]);
  });
});

describe('reconnecting (resumeStream)', () => {
  it('a second chat with the same id resumes the reply under way and ends with the transcript\'s text; with none under way it has nothing to do', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    // Held after six words, until the second chat has joined.
    const hold = heldModel(mockModel([`Long: ${words}.`]), 6);
    const { chat, store } = await setUp(createAgent({ name: 'talker', model: hold.model }));
    closers.push(() => hold.release());
    const first = chat({ id: 'long' });
    const sending = first.sendMessage({ text: 'Talk' });
    await hold.held;
    await until(() => (texts(first.messages.at(-1))[0] ?? '').split(' ').length > 5, 'some words');
    // Another page with the chat's messages so far (the user's), as a reload would have them.
    const second = chat({ id: 'long', messages: [first.messages[0]] });
    const resuming = second.resumeStream();
    await until(() => second.messages.length > 1 && texts(second.messages.at(-1)).join('') !== '', 'the second chat showing the reply under way');
    hold.release();
    await resuming;
    await sending;
    const [run] = await store.listRuns({ sessionId: 'acme/long' });
    const final = textOf((await store.loadRun(run.runId))!.messages.at(-1)!.content);
    expect(texts(second.messages.at(-1))).toEqual([final]);
    expect(second.messages.at(-1)!.id).toBe(run.runId);
    expect(texts(first.messages.at(-1))).toEqual([final]);
    const third = chat({ id: 'long', messages: second.messages });
    await third.resumeStream();
    expect(third.status).toBe('ready');
    expect(third.messages).toEqual(second.messages);
  });

  it('a reply a layer took back and redid: live, the retraction comes as a transient data part; a reconnect shows only the final text', async () => {
    let calls = 0;
    // Held once the redone reply reached f3 (four deltas of the draft, six of the final text).
    const hold = heldModel(mockModel(['A draft to drop.', `Final text ${Array.from({ length: 30 }, (_, i) => `f${i}`).join(' ')}.`]), 10);
    closers.push(() => hold.release());
    const agent = createAgent({ name: 'redo', model: hold.model }).use({
      name: 'redo-once',
      async model(_ctx, next) {
        // The first attempt streams, then is discarded: its text is retracted.
        if (calls++ === 0) await next();
        return next();
      },
    });
    const { chat, store } = await setUp(agent);
    const retracted: unknown[] = [];
    const first = chat({ id: 'redo', onData: (part) => void retracted.push(part) });
    const sending = first.sendMessage({ text: 'Write' });
    await until(() => retracted.length > 0 && (texts(first.messages.at(-1)).join('').includes('f3')), 'the retraction, then new text');
    expect(retracted[0]).toMatchObject({ type: 'data-koagent-retract', data: { kind: 'text', text: 'A draft to drop.' } });
    const second = chat({ id: 'redo', messages: [first.messages[0]] });
    const resuming = second.resumeStream();
    await until(() => second.messages.length > 1 && texts(second.messages.at(-1)).join('').includes('f3'), 'the second chat showing the redone reply');
    hold.release();
    await resuming;
    await sending;
    const [run] = await store.listRuns({ sessionId: 'acme/redo' });
    const final = textOf((await store.loadRun(run.runId))!.messages.at(-1)!.content);
    expect(texts(second.messages.at(-1)).join('')).toBe(final);
  });
});
