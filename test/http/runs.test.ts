// Spec of the handler's runs over a loopback server and a SQLite file: start a run and follow its
// events as SSE, resume the stream after an event (Last-Event-ID, ?from=), send to a session, read
// a run; a client going away does not stop a run, a cancel from another client does.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, textOf } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { createHandler } from '../../src/http.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { shownReplies } from '../support/event-log.js';
import { heldModel, type HeldModel } from '../support/held-model.js';
import { api, readSse, runEventsOf, served, tempDb, type Served } from '../support/http.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const TOKENS: Record<string, { actor: { id: string; name?: string }; tenant?: string }> = {
  ada: { actor: { id: 'ada', name: 'Ada' }, tenant: 'acme' },
  bob: { actor: { id: 'bob' }, tenant: 'acme' },
  eve: { actor: { id: 'eve' }, tenant: 'globex' },
};
const authorize = (request: Request) => TOKENS[request.headers.get('authorization')?.replace(/^Bearer /, '') ?? ''] ?? null;

/**
 * A handler over a SQLite file, serving `teller` with a long streamed answer; with `holdAfter`,
 * its stream holds after that many text deltas until the test releases it.
 */
async function setUp(options: { holdAfter?: number; words?: number } = {}): Promise<{ server: Served; store: RunStore; hold: HeldModel }> {
  const db = tempDb();
  const store = sqliteStore({ path: db.path });
  const lookup = defineTool({ name: 'lookup', description: 'Look up', input: z.object({ q: z.string() }), execute: ({ q }) => `found ${q}` });
  const words = Array.from({ length: options.words ?? 12 }, (_, i) => `word${i}`).join(' ');
  const hold = heldModel(mockModel([{ content: [{ type: 'text', text: 'Looking.' }], toolCalls: [{ name: 'lookup', args: { q: 'x' } }] }, `Answer: ${words}.`, 'Second turn.'], { resumable: true }), options.holdAfter ?? 0);
  const teller = createAgent({ name: 'teller', model: hold.model, tools: [lookup] });
  const server = await served(createHandler({ agents: [teller], store, authorize }));
  closers.push(() => db.remove(), () => store.close(), () => server.close(), () => hold.release());
  return { server, store, hold };
}

describe('starting a run and following its events', () => {
  it('POST /runs starts a run; GET /runs/:id/events streams its events with the log offsets as ids, then an end event', async () => {
    const { server, store } = await setUp();
    const ada = api(server.url, 'ada');
    const started = await ada.json('POST', '/runs', { input: 'Hi' });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ runId: expect.stringMatching(/^run_/), sessionId: expect.stringMatching(/^session_/), events: `runs/${started.body.runId}/events` });
    const read = await readSse(await ada.call('GET', `/runs/${started.body.runId}/events`));
    const events = read.filter((e) => e.event === undefined);
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    expect(read.at(-1)).toMatchObject({ event: 'end' });
    expect(JSON.parse(read.at(-1)!.data)).toMatchObject({ status: 'completed', last: events.length });
    const state = (await store.loadRun(started.body.runId))!;
    expect(shownReplies(runEventsOf(read))).toEqual(state.messages.filter((m) => m.role === 'assistant').map((m) => textOf(m.content)));
  });

  it('POST /runs with Accept: text/event-stream answers with the run\'s events at once', async () => {
    const { server } = await setUp();
    const read = await readSse(await api(server.url, 'ada').call('POST', '/runs', { input: 'Hi' }, { accept: 'text/event-stream' }));
    const events = runEventsOf(read);
    expect(events[0]).toMatchObject({ type: 'run.start' });
    expect(events.at(-1)).toMatchObject({ type: 'run.end', status: 'completed' });
  });

  it('resumes after the last event seen: Last-Event-ID and ?from= give the rest, each event once', async () => {
    // Held mid-answer: the first reader goes away while the run is under way.
    const { server, hold } = await setUp({ holdAfter: 3, words: 30 });
    const ada = api(server.url, 'ada');
    const { body } = await ada.json('POST', '/runs', { input: 'Hi' });
    await hold.held;
    const first = await readSse(await ada.call('GET', `/runs/${body.runId}/events`), (e) => e.event === undefined && JSON.parse(e.data).type === 'text.delta' && JSON.parse(e.data).step === 2);
    hold.release();
    const lastId = first.at(-1)!.id!;
    const byHeader = await readSse(await ada.call('GET', `/runs/${body.runId}/events`, undefined, { 'last-event-id': lastId }));
    const byQuery = await readSse(await ada.call('GET', `/runs/${body.runId}/events?from=${lastId}`));
    const whole = await readSse(await ada.call('GET', `/runs/${body.runId}/events`));
    const ids = (read: typeof first) => read.filter((e) => e.event === undefined).map((e) => e.id);
    expect([...ids(first), ...ids(byHeader)]).toEqual(ids(whole));
    expect(ids(byQuery)).toEqual(ids(byHeader));
    // The header wins over the query: an EventSource reconnects to its first URL with the header.
    const both = await readSse(await ada.call('GET', `/runs/${body.runId}/events?from=1`, undefined, { 'last-event-id': lastId }));
    expect(ids(both)).toEqual(ids(byHeader));
  });

  it('answers 204 to a reconnect after the last event of a run that is over, so an EventSource stops', async () => {
    const { server } = await setUp();
    const ada = api(server.url, 'ada');
    const { body } = await ada.json('POST', '/runs', { input: 'Hi' });
    const read = await readSse(await ada.call('GET', `/runs/${body.runId}/events`));
    const last = JSON.parse(read.at(-1)!.data).last;
    const again = await ada.call('GET', `/runs/${body.runId}/events`, undefined, { 'last-event-id': String(last) });
    expect(again.status).toBe(204);
    expect((await ada.call('GET', `/runs/${body.runId}/events?from=abc`)).status).toBe(400);
    expect((await ada.call('GET', `/runs/${body.runId}/events?from=${last + 5}`)).status).toBe(410);
  });

  it('GET /runs/:id reads the run: status, text, usage, its decisions and its last event', async () => {
    const { server } = await setUp();
    const ada = api(server.url, 'ada');
    const { body } = await ada.json('POST', '/runs', { input: 'Hi' });
    await readSse(await ada.call('GET', `/runs/${body.runId}/events`));
    const run = await ada.json('GET', `/runs/${body.runId}`);
    expect(run.body).toMatchObject({ runId: body.runId, sessionId: body.sessionId, agent: 'teller', status: 'completed', text: expect.stringMatching(/^Answer: word0/), pendingApprovals: [], decisionLog: [], refusedDecisions: [], cancelled: false });
    expect(run.body.lastEvent).toBeGreaterThan(5);
  });
});

describe('sessions', () => {
  it('POST /sessions/:id/messages continues the session with its history; GET /sessions/:id lists its runs', async () => {
    const { server, store } = await setUp();
    const ada = api(server.url, 'ada');
    const first = await ada.json('POST', '/sessions/chat-1/messages', { input: 'Hi' });
    expect(first.body.sessionId).toBe('chat-1');
    await readSse(await ada.call('GET', `/runs/${first.body.runId}/events`));
    const second = await ada.json('POST', '/sessions/chat-1/messages', { input: 'And then?' });
    await readSse(await ada.call('GET', `/runs/${second.body.runId}/events`));
    const state = (await store.loadRun(second.body.runId))!;
    expect(state.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Hi', 'And then?']);
    expect(textOf(state.messages.at(-1)!.content)).toBe('Second turn.');
    const session = await ada.json('GET', '/sessions/chat-1');
    expect(session.body.runs.map((r: { runId: string }) => r.runId).sort()).toEqual([first.body.runId, second.body.runId].sort());
  });

  it('refuses a turn while the session\'s last run still runs (409), and bad input with what is wrong (400)', async () => {
    const { server, hold } = await setUp({ holdAfter: 1 });
    const ada = api(server.url, 'ada');
    await ada.json('POST', '/sessions/busy/messages', { input: 'Hi' });
    await hold.held;
    const busy = await ada.json('POST', '/sessions/busy/messages', { input: 'Again' });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatch(/still running/);
    hold.release();
    expect((await ada.json('POST', '/runs', { inptu: 'Hi' })).body.error).toMatch(/inptu is not a field of a start; did you mean `input`\?/);
    expect((await ada.json('POST', '/runs', { input: { role: 'assistant', content: 'I said so' } })).body.error).toMatch(/must be 'user'/);
    expect((await ada.json('POST', '/runs', { input: 'Hi', agent: 'nobody' })).status).toBe(404);
    expect((await ada.json('POST', '/sessions/a%2Fb/messages', { input: 'Hi' })).status).toBe(400);
  });
});

describe('stop is not disconnect', () => {
  it('a client that goes away mid-stream does not stop the run: it completes, and its log has every event', async () => {
    const { server, store, hold } = await setUp({ holdAfter: 2, words: 20 });
    const ada = api(server.url, 'ada');
    const { body } = await ada.json('POST', '/runs', { input: 'Hi' });
    await hold.held;
    await readSse(await ada.call('GET', `/runs/${body.runId}/events`), (e) => e.event === undefined && JSON.parse(e.data).type === 'text.delta');
    // The client went away mid-answer; the run goes on.
    hold.release();
    const rest = await readSse(await ada.call('GET', `/runs/${body.runId}/events`));
    expect(runEventsOf(rest).at(-1)).toMatchObject({ type: 'run.end', status: 'completed', stopReason: 'final' });
    expect((await store.loadRun(body.runId))!.status).toBe('completed');
  });

  it('a cancel from a second client stops the run the first one follows: it ends aborted', async () => {
    const { server, hold } = await setUp({ holdAfter: 2, words: 200 });
    const ada = api(server.url, 'ada');
    const bob = api(server.url, 'bob');
    const { body } = await ada.json('POST', '/runs', { input: 'Hi' });
    await hold.held;
    const following = readSse(await ada.call('GET', `/runs/${body.runId}/events`));
    const cancelled = await bob.json('POST', `/runs/${body.runId}/cancel`, {});
    expect(cancelled).toMatchObject({ status: 202, body: { runId: body.runId, cancelled: true } });
    const read = await following;
    expect(runEventsOf(read).at(-1)).toMatchObject({ type: 'run.end', status: 'completed', stopReason: 'aborted' });
    const run = await ada.json('GET', `/runs/${body.runId}`);
    expect(run.body).toMatchObject({ status: 'completed', stopReason: 'aborted', cancelled: true });
    expect((await bob.json('POST', `/runs/${body.runId}/cancel`, {})).status).toBe(409);
  });

  it('a cancel sent to another process sharing the store stops the run where it runs', async () => {
    const db = tempDb();
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');
    const open = () => {
      const store = sqliteStore({ path: db.path });
      const hold = heldModel(mockModel([words]), 1);
      const agent = createAgent({ name: 'teller', model: hold.model });
      return { store, hold, handler: createHandler({ agents: [agent], store, authorize, cancelPollMs: 50 }) };
    };
    const one = open();
    const two = open();
    const [first, second] = [await served(one.handler), await served(two.handler)];
    closers.push(() => db.remove(), () => one.store.close(), () => two.store.close(), () => first.close(), () => second.close(), () => one.hold.release());
    const { body } = await api(first.url, 'ada').json('POST', '/runs', { input: 'Hi' });
    await one.hold.held;
    const following = readSse(await api(first.url, 'ada').call('GET', `/runs/${body.runId}/events`));
    expect((await api(second.url, 'bob').json('POST', `/runs/${body.runId}/cancel`, {})).status).toBe(202);
    expect(runEventsOf(await following).at(-1)).toMatchObject({ type: 'run.end', stopReason: 'aborted' });
  });
});
