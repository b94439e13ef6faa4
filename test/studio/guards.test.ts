// What the studio refuses before it answers, whatever a request carries: a path that does not
// decode (the server keeps answering), a Host it does not listen as (DNS rebinding), and a
// state-changing request shaped like another site's form (token in the query, a text body, a
// foreign Origin). Raw HTTP where fetch would tidy the request up.
import { connect } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudio, type Studio } from '../../src/studio/server.js';
import { paymentsAgent, tempStore } from './fixtures.js';

const temp = tempStore();
const executions = { refunds: [] as { orderId: string; amount: number }[] };
const payments = paymentsAgent(temp.store, executions);
let studio: Studio;
let port: number;

beforeAll(async () => {
  studio = await startStudio({ store: temp.store, agents: [payments], pollMs: 50 });
  port = Number(new URL(studio.url).port);
});
afterAll(async () => {
  await studio.close();
  await temp.dispose();
});

/** One request as written, on its own connection: the status line's code and the body. */
function raw(head: string, body = '', to = port): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), body: text.slice(text.indexOf('\r\n\r\n') + 4) }));
    socket.end(`${head}\r\nConnection: close\r\n${body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`}\r\n${body}`);
  });
}

const host = () => `127.0.0.1:${port}`;
const stillAnswers = async () => expect((await fetch(new URL('/api/runs', studio.url), { headers: { 'x-koagent-token': studio.token } })).status).toBe(200);

describe('paths that do not decode', () => {
  it('are answered 400, on the page\'s files and the API alike, and the studio keeps answering', async () => {
    for (const path of ['/%c0%af', '/assets/%E0%A4%A', `/api/runs/%c0%af?token=${studio.token}`, '/api/%ff']) {
      const answer = await raw(`GET ${path} HTTP/1.1\r\nHost: ${host()}`);
      expect(answer.status, path).toBe(400);
      expect(answer.body, path).toContain('not valid percent-encoded UTF-8');
    }
    await stillAnswers();
  });
});

describe('the Host header', () => {
  it('is answered for the loopback names with the studio\'s port', async () => {
    for (const name of ['127.0.0.1', 'localhost', '[::1]']) {
      expect((await raw(`GET /api/runs HTTP/1.1\r\nHost: ${name}:${port}\r\nx-koagent-token: ${studio.token}`)).status, name).toBe(200);
    }
  });

  it('is refused for any other name, with the token: a rebound DNS name reads no run and answers no approval', async () => {
    const { state } = await payments.run('Refund order A-17');
    const rebound = `Host: rebind.attacker.example:${port}\r\nx-koagent-token: ${studio.token}`;
    const read = await raw(`GET /api/runs HTTP/1.1\r\n${rebound}`);
    expect(read.status).toBe(421);
    expect(read.body).toContain('not for rebind.attacker.example');
    expect(read.body).not.toContain(state.runId);
    expect((await raw(`GET / HTTP/1.1\r\n${rebound}`)).status).toBe(421);
    const approve = await raw(`POST /api/runs/${state.runId}/approvals/call_refund HTTP/1.1\r\n${rebound}\r\nContent-Type: application/json`, '{"approved":true}');
    expect(approve.status).toBe(421);
    expect((await temp.store.loadRun(state.runId))!.status).toBe('suspended');
    // The right name on another port, and no Host at all, are refused too.
    expect((await raw(`GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:${port + 1}\r\nx-koagent-token: ${studio.token}`)).status).toBe(421);
    expect((await raw(`GET /api/runs HTTP/1.0\r\nx-koagent-token: ${studio.token}`)).status).toBe(421);
  });

  it('is answered for a name given in allowedHosts', async () => {
    const named = await startStudio({ store: temp.store, allowedHosts: ['studio.internal'] });
    try {
      const namedPort = Number(new URL(named.url).port);
      expect((await raw(`GET /api/runs HTTP/1.1\r\nHost: studio.internal:${namedPort}\r\nx-koagent-token: ${named.token}`, '', namedPort)).status).toBe(200);
      expect((await raw(`GET /api/runs HTTP/1.1\r\nHost: other.internal:${namedPort}\r\nx-koagent-token: ${named.token}`, '', namedPort)).status).toBe(421);
    } finally {
      await named.close();
    }
  });

  it('listening on every address (0.0.0.0), is answered for the URL it prints, loopback and this machine\'s name, and refused for others', async () => {
    const wide = await startStudio({ store: temp.store, host: '0.0.0.0' });
    try {
      const widePort = Number(new URL(wide.url).port);
      const status = async (name: string) => (await raw(`GET /api/runs HTTP/1.1\r\nHost: ${name}:${widePort}\r\nx-koagent-token: ${wide.token}`, '', widePort)).status;
      expect(new URL(wide.url).hostname).toBe('0.0.0.0');
      for (const name of ['0.0.0.0', '127.0.0.1', 'localhost', hostname()]) expect(await status(name), name).toBe(200);
      expect(await status('rebind.attacker.example')).toBe(421);
    } finally {
      await wide.close();
    }
  });

  it('refuses a misspelt option of startStudio, naming the one meant', async () => {
    await expect(startStudio({ store: temp.store, allowedHost: ['x'] } as never)).rejects.toThrow(/allowedHost is not an option of startStudio; did you mean `allowedHosts`/);
  });
});

describe('requests that change something', () => {
  const answer = (runId: string, head: string, body = '{"approved":true}') => raw(`POST /api/runs/${runId}/approvals/call_refund HTTP/1.1\r\nHost: ${host()}\r\n${head}`, body);

  it('refuse the token in the query with a text body: the shape of another site\'s form', async () => {
    const { state } = await payments.run('Refund order A-17');
    const form = await raw(`POST /api/runs/${state.runId}/approvals/call_refund?token=${studio.token} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: text/plain`, '{"approved":true}');
    expect(form.status).toBe(401);
    expect(form.body).toContain('x-koagent-token header, not in the query');
    // The token in the query with a JSON body is refused the same.
    expect((await raw(`POST /api/runs/${state.runId}/approvals/call_refund?token=${studio.token} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/json`, '{"approved":true}')).status).toBe(401);
    expect((await temp.store.loadRun(state.runId))!.status).toBe('suspended');
  });

  it('refuse a body that is not declared JSON, even with the token in the header', async () => {
    const { state } = await payments.run('Refund order A-17');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const refused = await answer(state.runId, `x-koagent-token: ${studio.token}\r\nContent-Type: ${type}`);
      expect(refused.status, type).toBe(415);
    }
    expect((await answer(state.runId, `x-koagent-token: ${studio.token}`)).status).toBe(415);
    expect((await temp.store.loadRun(state.runId))!.status).toBe('suspended');
  });

  it('refuse a foreign Origin, and take the studio\'s own', async () => {
    const { state } = await payments.run('Refund order A-17');
    for (const origin of ['http://rebind.attacker.example', `http://evil.example:${port}`, 'null', `https://127.0.0.1:${port}`]) {
      const refused = await answer(state.runId, `x-koagent-token: ${studio.token}\r\nContent-Type: application/json\r\nOrigin: ${origin}`);
      expect(refused.status, origin).toBe(403);
    }
    expect((await temp.store.loadRun(state.runId))!.status).toBe('suspended');
    const own = await answer(state.runId, `x-koagent-token: ${studio.token}\r\nContent-Type: application/json; charset=utf-8\r\nOrigin: http://localhost:${port}`);
    expect(own.status).toBe(202);
  });
});
