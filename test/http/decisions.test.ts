// Spec of approvals over HTTP: a decision is bound to the run, the call and the digest of the
// arguments the human saw; it is kept in the run's decision log with who gave it, when, through
// the API, and from which arguments to which. A forged, replayed or stale one is refused (409)
// and the refusal kept — over a loopback server and a SQLite file.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { createHandler } from '../../src/http.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { api, readSse, served, tempDb, type Served } from '../support/http.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const TOKENS: Record<string, { actor: { id: string; name?: string }; tenant: string; surface?: string }> = {
  ada: { actor: { id: 'ada', name: 'Ada' }, tenant: 'acme' },
  bob: { actor: { id: 'bob' }, tenant: 'acme' },
  // A support desk in front of the handler: its decisions say so.
  desk: { actor: { id: 'carol' }, tenant: 'acme', surface: 'support-desk' },
};
const authorize = (request: Request) => TOKENS[request.headers.get('authorization')?.replace(/^Bearer /, '') ?? ''] ?? null;

/** A teller whose first reply asks to pay (needs approval); a second reply asks to pay again. */
async function setUp(): Promise<{ server: Served; store: RunStore; paid: unknown[] }> {
  const db = tempDb();
  const store = sqliteStore({ path: db.path });
  const paid: unknown[] = [];
  const pay = defineTool({ name: 'pay', description: 'Pay', input: z.object({ to: z.string(), amount: z.number().max(100) }), needsApproval: true, execute: (args) => (paid.push(args), 'paid') });
  const model = mockModel([
    { toolCalls: [{ id: 'c1', name: 'pay', args: { to: 'Alice', amount: 30 } }] },
    { toolCalls: [{ id: 'c2', name: 'pay', args: { to: 'Bob', amount: 10 } }] },
    'All paid.',
  ], { resumable: true });
  const teller = createAgent({ name: 'teller', model, tools: [pay] });
  const server = await served(createHandler({ agents: [teller], store, authorize }));
  closers.push(() => db.remove(), () => store.close(), () => server.close());
  return { server, store, paid };
}

/** Start a run and follow it until it waits; the run as GET shows it. */
async function suspended(client: ReturnType<typeof api>, runId?: string): Promise<any> {
  let id = runId;
  if (id === undefined) id = (await client.json('POST', '/runs', { input: 'Pay them' })).body.runId as string;
  await readSse(await client.call('GET', `/runs/${id}/events`));
  return (await client.json('GET', `/runs/${id}`)).body;
}

describe('answering approvals', () => {
  it("records the surface authorize names for a request (a desk, the studio's playground) instead of 'api'", async () => {
    const { server } = await setUp();
    const desk = api(server.url, 'desk');
    const run = await suspended(desk);
    const [pending] = run.pendingApprovals;
    await desk.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true, digest: pending.digest } } });
    const next = await suspended(desk, run.runId);
    expect(next.decisionLog).toEqual([expect.objectContaining({ toolCallId: 'c1', decision: 'approved', actor: { id: 'carol' }, surface: 'support-desk' })]);
  });

  it('approves with the digest it was shown: the run goes on, and the decision log says who, when, through the API', async () => {
    const { server, paid } = await setUp();
    const ada = api(server.url, 'ada');
    const run = await suspended(ada);
    expect(run.status).toBe('suspended');
    const [pending] = run.pendingApprovals;
    expect(pending).toMatchObject({ toolCallId: 'c1', toolName: 'pay', args: { to: 'Alice', amount: 30 }, digest: expect.any(String) });
    const answered = await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true, digest: pending.digest } } });
    expect(answered).toMatchObject({ status: 202, body: { runId: run.runId, segment: 2 } });
    const next = await suspended(ada, run.runId);
    expect(paid).toEqual([{ to: 'Alice', amount: 30 }]);
    expect(next.decisionLog).toEqual([expect.objectContaining({ toolCallId: 'c1', decision: 'approved', args: { to: 'Alice', amount: 30 }, actor: { id: 'ada', name: 'Ada' }, surface: 'api', segment: 2, at: expect.any(String) })]);
  });

  it('an edit approves other arguments, checked against the tool; the log keeps both; a denial keeps its reason', async () => {
    const { server, paid } = await setUp();
    const ada = api(server.url, 'ada');
    const run = await suspended(ada);
    const digest = run.pendingApprovals[0].digest;
    const tooMuch = await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true, digest, args: { to: 'Alice', amount: 500 } } } });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error).toMatch(/do not fit pay's schema: amount/);
    await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true, digest, args: { to: 'Alice', amount: 25 } } } });
    const next = await suspended(ada, run.runId);
    expect(paid).toEqual([{ to: 'Alice', amount: 25 }]);
    expect(next.decisionLog[0]).toMatchObject({ args: { to: 'Alice', amount: 30 }, editedArgs: { to: 'Alice', amount: 25 } });
    await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c2: { approved: false, digest: next.pendingApprovals[0].digest, reason: 'Not Bob' } } });
    const done = await suspended(ada, run.runId);
    expect(done.status).toBe('completed');
    expect(done.decisionLog[1]).toMatchObject({ toolCallId: 'c2', decision: 'denied', reason: 'Not Bob', actor: { id: 'ada' } });
    expect(paid).toHaveLength(1);
  });

  it('refuses a decision without a digest, or with a misspelt field, naming it (400); one missing a pending call (422)', async () => {
    const { server } = await setUp();
    const ada = api(server.url, 'ada');
    const run = await suspended(ada);
    expect((await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true } } })).body.error).toMatch(/digest/);
    expect((await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true, digest: 'x', reasn: 'ok' } } })).body.error).toMatch(/reasn is not a field of a decision; did you mean `reason`\?/);
    expect((await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: {} })).status).toBe(422);
  });
});

describe('decisions that do not fit the run as it waits', () => {
  it('refuses a forged digest (other arguments) and a call that is not pending, and keeps each refusal with who sent it', async () => {
    const { server, store, paid } = await setUp();
    const ada = api(server.url, 'ada');
    const run = await suspended(ada);
    const forged = await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true, digest: 'made-up-for-other-arguments' } } });
    expect(forged).toMatchObject({ status: 409, body: { refused: 'digest', toolCallId: 'c1' } });
    const other = await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c9: { approved: true, digest: run.pendingApprovals[0].digest } } });
    expect(other).toMatchObject({ status: 409, body: { refused: 'not_pending' } });
    const after = (await ada.json('GET', `/runs/${run.runId}`)).body;
    expect(after.status).toBe('suspended');
    expect(after.refusedDecisions).toEqual([
      expect.objectContaining({ toolCallId: 'c1', approved: true, reason: 'digest', actor: { id: 'ada', name: 'Ada' }, surface: 'api', segment: 1, status: 'suspended' }),
      expect.objectContaining({ toolCallId: 'c9', reason: 'not_pending' }),
    ]);
    expect(paid).toEqual([]);
    expect((await store.loadRun(run.runId))!.decisionLog ?? []).toEqual([]);
  });

  it('refuses a replay: the same decision sent again after the run went on, and a digest of an earlier segment', async () => {
    const { server, paid } = await setUp();
    const ada = api(server.url, 'ada');
    const run = await suspended(ada);
    const first = { decisions: { c1: { approved: true, digest: run.pendingApprovals[0].digest } } };
    expect((await ada.json('POST', `/runs/${run.runId}/decisions`, first)).status).toBe(202);
    const next = await suspended(ada, run.runId);
    // Replayed as is: c1 is not pending any more.
    expect((await ada.json('POST', `/runs/${run.runId}/decisions`, first)).body).toMatchObject({ refused: 'not_pending' });
    // The old digest on the call that waits now: it was given for another state.
    expect((await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c2: { approved: true, digest: run.pendingApprovals[0].digest } } })).body).toMatchObject({ refused: 'digest' });
    expect(paid).toEqual([{ to: 'Alice', amount: 30 }]);
    const answeredOnce = (await ada.json('GET', `/runs/${run.runId}`)).body;
    expect(answeredOnce.segment).toBe(next.segment);
    expect(answeredOnce.refusedDecisions.map((r: { reason: string }) => r.reason)).toEqual(['not_pending', 'digest']);
  });

  it('of two answers sent at once, one resumes the run and the other is refused as answered already, and kept', async () => {
    const { server, paid } = await setUp();
    const ada = api(server.url, 'ada');
    const bob = api(server.url, 'bob');
    const run = await suspended(ada);
    const decisions = { decisions: { c1: { approved: true, digest: run.pendingApprovals[0].digest } } };
    const answers = await Promise.all([ada.json('POST', `/runs/${run.runId}/decisions`, decisions), bob.json('POST', `/runs/${run.runId}/decisions`, decisions)]);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    await suspended(ada, run.runId);
    expect(paid).toHaveLength(1);
    const refused = (await ada.json('GET', `/runs/${run.runId}`)).body.refusedDecisions;
    expect(refused).toHaveLength(1);
    expect(['not_suspended', 'not_pending', 'answered']).toContain(refused[0].reason);
  });

  it('refuses a decision on a run that was cancelled while it waited, and keeps the refusal', async () => {
    const { server, paid } = await setUp();
    const ada = api(server.url, 'ada');
    const run = await suspended(ada);
    expect((await ada.json('POST', `/runs/${run.runId}/cancel`, {})).status).toBe(202);
    const late = await ada.json('POST', `/runs/${run.runId}/decisions`, { decisions: { c1: { approved: true, digest: run.pendingApprovals[0].digest } } });
    expect(late.body).toMatchObject({ refused: 'cancelled' });
    expect(paid).toEqual([]);
    expect((await ada.json('GET', `/runs/${run.runId}`)).body).toMatchObject({ cancelled: true, refusedDecisions: [expect.objectContaining({ reason: 'cancelled' })] });
  });
});
