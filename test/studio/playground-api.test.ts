// The playground's API without a browser: koagent/http's routes under /api/play, behind the
// studio's guards (token, Host, Origin), over the studio's store and agents; and what it says
// when it cannot serve (no agents, a store without an event log).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, memoryStore } from '../../src/index.js';
import { startStudio, type Studio } from '../../src/studio/server.js';
import { mockModel } from '../../src/testing/index.js';
import { overriding } from '../support/durable.js';

const store = memoryStore();
const greeter = createAgent({ name: 'greeter', model: mockModel(['Hello there.', 'Hello again.']) });
let studio: Studio;

const play = (path: string, init: RequestInit = {}, token: string | null = studio.token, base = studio) =>
  fetch(new URL(`/api/play/${path}`, base.url), { ...init, headers: { ...(token === null ? {} : { 'x-koagent-token': token }), 'content-type': 'application/json', ...init.headers } });

beforeAll(async () => {
  studio = await startStudio({ store, agents: [greeter] });
});
afterAll(async () => {
  await studio.close();
});

describe("the playground's API", () => {
  it('starts a run of the studio\'s agent in its store and streams its events from the log', async () => {
    const started = await play('runs', { method: 'POST', body: JSON.stringify({ agent: 'greeter', input: 'Hi' }) });
    expect(started.status).toBe(201);
    const { runId, sessionId } = (await started.json()) as { runId: string; sessionId: string };
    const events = await (await play(`runs/${runId}/events`)).text();
    expect(events).toMatch(/^id: 1\ndata: \{"type":"run.start"/m);
    expect(events).toMatch(/^event: end\ndata: \{"runId":"run_[^"]+","status":"completed"/m);
    expect((await store.loadRun(runId))?.sessionId).toBe(sessionId);
    // The session's next turn, with its history.
    const next = await play(`sessions/${sessionId}/messages`, { method: 'POST', body: JSON.stringify({ input: 'Again' }) });
    const turn = (await next.json()) as { runId: string };
    await (await play(`runs/${turn.runId}/events`)).text();
    expect((await store.loadRun(turn.runId))!.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Hi', 'Again']);
  });

  it("passes the studio's guards first: no token 401, another 403, another site's page 403, another Host 421", async () => {
    expect((await play('runs', { method: 'POST', body: '{"input":"Hi"}' }, null)).status).toBe(401);
    expect((await play('runs/x/events', {}, 'not-the-token-at-all')).status).toBe(403);
    expect((await play('runs', { method: 'POST', body: '{"input":"Hi"}', headers: { origin: 'http://evil.example' } })).status).toBe(403);
    const url = new URL('/api/play/runs', studio.url);
    // fetch sets Host itself; node:http lets the test name another.
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const sent = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: { host: 'rebound.example', 'x-koagent-token': studio.token } }, (response) => (response.resume(), resolve(response.statusCode!)));
      sent.on('error', reject);
      sent.end();
    });
    expect(status).toBe(421);
  });

  it('says what it needs: agents to talk to, and a store that keeps an event log', async () => {
    const bare = await startStudio({ store });
    const noLog = await startStudio({ store: overriding(memoryStore(), { appendEvents: undefined, readEvents: undefined, eventTail: undefined } as never), agents: [greeter] });
    try {
      const none = await play('runs', { method: 'POST', body: '{"input":"Hi"}' }, bare.token, bare);
      expect(none.status).toBe(409);
      expect(((await none.json()) as { error: string }).error).toContain('start it with --agents');
      const unlogged = await play('runs', { method: 'POST', body: '{"input":"Hi"}' }, noLog.token, noLog);
      expect(unlogged.status).toBe(501);
      expect(((await unlogged.json()) as { error: string }).error).toContain("the store's event log");
    } finally {
      await bare.close();
      await noLog.close();
    }
  });
});
