// Spec of who may ask what: `authorize` on every route (refusing with 401 or a response of its
// own), the explicit opt-out for local use, the tenant scoping of runs and sessions, and requests
// from other sites (CSRF, CORS) — over a loopback server and a SQLite file.
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { createHandler, type HandlerOptions } from '../../src/http.js';

type Authorize = Exclude<HandlerOptions['authorize'], 'local'>;
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { api, readSse, served, tempDb, type Served } from '../support/http.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const TOKENS: Record<string, { actor: string; tenant?: string }> = { ada: { actor: 'ada', tenant: 'acme' }, eve: { actor: 'eve', tenant: 'globex' }, root: { actor: 'root' } };
const byToken: Authorize = (request) => TOKENS[request.headers.get('authorization')?.replace(/^Bearer /, '') ?? ''] ?? null;

/** A GET with a Host header of its own (fetch sets the URL's). */
function rawGet(base: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { headers: { host } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

async function setUp(authorize: Authorize | 'local' = byToken, origins?: string[]): Promise<{ server: Served; store: RunStore }> {
  const db = tempDb();
  const store = sqliteStore({ path: db.path });
  const agent = createAgent({ name: 'teller', model: mockModel(['Hello there.', 'Again.', 'Once more.'], { resumable: true }) });
  const server = await served(createHandler({ agents: [agent], store, authorize, ...(origins ? { origins } : {}) }));
  closers.push(() => db.remove(), () => store.close(), () => server.close());
  return { server, store };
}

describe('authorize', () => {
  it('refuses a request it does not recognise with 401, on every route, before anything runs', async () => {
    const { server, store } = await setUp();
    const stranger = api(server.url, 'nobody');
    expect((await stranger.json('POST', '/runs', { input: 'Hi' })).status).toBe(401);
    expect((await stranger.json('GET', '/runs/run_x')).status).toBe(401);
    expect((await stranger.json('GET', '/runs/run_x/events')).status).toBe(401);
    expect((await stranger.json('POST', '/chat', { id: 'c', messages: [] })).status).toBe(401);
    expect(await store.listRuns()).toEqual([]);
  });

  it('answers with the Response authorize returns, as it is', async () => {
    const { server } = await setUp(() => new Response('come back with a token', { status: 403, headers: { 'x-why': 'token' } }));
    const response = await fetch(`${server.url}/runs/run_x`);
    expect(response.status).toBe(403);
    expect(response.headers.get('x-why')).toBe('token');
    expect(await response.text()).toBe('come back with a token');
  });

  it('refuses what authorize returns when it is not an identity, naming the field (500): an actor missing, a surface that is not a short lower-case name', async () => {
    for (const [given, named] of [[{ tenant: 'acme' }, /no actor/], [{ actor: 'ada', surface: 'Help Desk' }, /the surface "Help Desk"/]] as const) {
      const { server } = await setUp(() => given as never);
      const answer = await fetch(`${server.url}/runs/r1`, { headers: { authorization: 'Bearer x' } });
      expect(answer.status).toBe(500);
      expect(((await answer.json()) as { error: string }).error).toMatch(named);
    }
  });

  it("authorize: 'local' answers requests for localhost as the actor local, and refuses other hosts (421)", async () => {
    const { server } = await setUp('local');
    const local = await fetch(`${server.url.replace('127.0.0.1', 'localhost')}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'Hi' }) });
    expect(local.status).toBe(201);
    // A page of another name reaching this port (DNS rebinding) names its own host.
    const elsewhere = await rawGet(server.url, '/runs/run_x', 'agents.example.com');
    expect(elsewhere.status).toBe(421);
    expect(JSON.parse(elsewhere.body).error).toMatch(/authorize: 'local'.*localhost only/);
  });

  it('is required: createHandler without it is refused, saying how to opt out; a misspelt option is named', () => {
    const agent = createAgent({ model: mockModel(['Hi']) });
    const db = tempDb();
    closers.push(() => db.remove());
    const store = sqliteStore({ path: db.path });
    closers.push(() => store.close());
    expect(() => createHandler({ agents: [agent], store } as never)).toThrow(/authorize is missing: .*authorize: 'local'/);
    expect(() => createHandler({ agents: [agent], store, authorize: 'local', basepath: '/x' } as never)).toThrow(/basepath is not an option of createHandler; did you mean `basePath`\?/);
    expect(() => createHandler({ agents: [agent], authorize: 'local' } as never)).toThrow(/store is missing/);
  });
});

describe('tenants', () => {
  it("a tenant's runs and sessions are invisible to another: 404 on reading, following, answering and cancelling", async () => {
    const { server } = await setUp();
    const ada = api(server.url, 'ada');
    const eve = api(server.url, 'eve');
    const { body } = await ada.json('POST', '/sessions/shared-name/messages', { input: 'Hi' });
    await readSse(await ada.call('GET', `/runs/${body.runId}/events`));
    expect((await ada.json('GET', `/runs/${body.runId}`)).status).toBe(200);
    expect((await eve.json('GET', `/runs/${body.runId}`)).status).toBe(404);
    expect((await eve.call('GET', `/runs/${body.runId}/events`)).status).toBe(404);
    expect((await eve.json('POST', `/runs/${body.runId}/decisions`, { decisions: {} })).status).toBe(404);
    expect((await eve.json('POST', `/runs/${body.runId}/cancel`, {})).status).toBe(404);
    expect((await eve.json('GET', '/sessions/shared-name')).status).toBe(404);
    // The same session name in another tenant is another session.
    const theirs = await eve.json('POST', '/sessions/shared-name/messages', { input: 'Hi' });
    await readSse(await eve.call('GET', `/runs/${theirs.body.runId}/events`));
    expect((await eve.json('GET', '/sessions/shared-name')).body.runs).toHaveLength(1);
    expect((await ada.json('GET', '/sessions/shared-name')).body.runs).toHaveLength(1);
  });

  it('stores a tenant\'s sessions under its name, and an identity without a tenant sees only the runs of none', async () => {
    const { server, store } = await setUp();
    const { body } = await api(server.url, 'ada').json('POST', '/sessions/s1/messages', { input: 'Hi' });
    expect((await store.loadRun(body.runId))!.sessionId).toBe('acme/s1');
    expect((await api(server.url, 'root').json('GET', `/runs/${body.runId}`)).status).toBe(404);
  });
});

describe('requests from other sites', () => {
  it('refuses a form post (CSRF), a body that is not JSON (415) and a foreign Origin (403)', async () => {
    const { server, store } = await setUp();
    const form = await fetch(`${server.url}/runs`, { method: 'POST', headers: { authorization: 'Bearer ada', 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' }, body: 'input=Hi' });
    expect(form.status).toBe(403);
    const text = await fetch(`${server.url}/runs`, { method: 'POST', headers: { authorization: 'Bearer ada', 'content-type': 'application/xml' }, body: '{"input":"Hi"}' });
    expect(text.status).toBe(415);
    const foreign = await fetch(`${server.url}/runs`, { method: 'POST', headers: { authorization: 'Bearer ada', 'content-type': 'application/json', origin: 'https://evil.example' }, body: '{"input":"Hi"}' });
    expect(foreign.status).toBe(403);
    expect(await store.listRuns()).toEqual([]);
  });

  it('lets the origins it was given call it: CORS preflight and the request itself', async () => {
    const { server } = await setUp(byToken, ['https://app.example']);
    const preflight = await fetch(`${server.url}/runs`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const started = await fetch(`${server.url}/runs`, { method: 'POST', headers: { authorization: 'Bearer ada', 'content-type': 'application/json', origin: 'https://app.example' }, body: '{"input":"Hi"}' });
    expect(started.status).toBe(201);
    expect(started.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('refuses a body over maxBodyBytes (413)', async () => {
    const { server } = await setUp();
    const big = await api(server.url, 'ada').json('POST', '/runs', { input: 'x'.repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
  });
});
