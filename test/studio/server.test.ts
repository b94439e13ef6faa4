// The studio's server without a browser: what its API answers, to whom, and that an approval
// answered twice at once resumes its run once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/index.js';
import { startStudio, type Studio } from '../../src/studio/server.js';
import type { LayerTraceRecord } from '../../src/trace.js';
import { editorAgent, MOCK_PRICE, paymentsAgent, supportAgent, tempStore } from './fixtures.js';

const temp = tempStore();
const executions = { refunds: [] as { orderId: string; amount: number }[] };
const payments = paymentsAgent(temp.store, executions);
let studio: Studio;
let traced: string;

const api = (path: string, init: RequestInit = {}, token: string | null = studio.token) =>
  fetch(new URL(`/api/${path}`, studio.url), { ...init, headers: { ...(token === null ? {} : { 'x-koagent-token': token }), 'content-type': 'application/json', ...init.headers } });

beforeAll(async () => {
  traced = (await supportAgent(temp.store).run('How do refunds work?')).state.runId;
  studio = await startStudio({ store: temp.store, agents: [payments], pollMs: 50 });
});
afterAll(async () => {
  await studio.close();
  await temp.dispose();
});

describe('the token', () => {
  it('is in the URL the studio prints, which is on 127.0.0.1', () => {
    expect(studio.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    expect(new URL(studio.url).searchParams.get('token')).toBe(studio.token);
  });

  it('is needed for every API request: none is refused with 401, a wrong one with 403', async () => {
    for (const path of ['runs', `runs/${traced}`, 'approvals', `runs/${traced}/export`, 'events']) {
      expect((await api(path, {}, null)).status, path).toBe(401);
      expect((await api(path, {}, 'not-the-token-at-all')).status, path).toBe(403);
    }
    expect((await api('runs/x/approvals/y', { method: 'POST', body: '{"approved":true}' }, null)).status).toBe(401);
  });

  it('is taken from the query too for reads (links the browser follows itself), and the page is served without it', async () => {
    expect((await fetch(new URL(`/api/runs?token=${studio.token}`, studio.url))).status).toBe(200);
    const page = await fetch(new URL('/', studio.url));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="app">');
  });
});

describe('the runs API', () => {
  it('lists runs with agent, status, stop reason, tokens and steps, filtered by agent, status and text', async () => {
    const rows = (await (await api('runs')).json()) as { runId: string; agentName: string; status: string; stopReason?: string; tokens: { total: number }; steps: number }[];
    expect(rows.find((row) => row.runId === traced)).toMatchObject({ agentName: 'support', status: 'completed', stopReason: 'final', steps: 2 });
    expect(rows.find((row) => row.runId === traced)!.tokens.total).toBeGreaterThan(0);
    // The model comes from the traced model calls, the cost from what the cost budget counted.
    const row = rows.find((r) => r.runId === traced) as unknown as { models: string[]; cost?: number; tokens: { input: number; output: number } };
    expect(row.models).toEqual(['mock']);
    expect(row.cost).toBeCloseTo((row.tokens.input * MOCK_PRICE.input + row.tokens.output * MOCK_PRICE.output) / 1e6, 10);
    // A run without the cost budget has no cost to show.
    const { state: unpricedRun } = await payments.run('Refund order A-17');
    const unpriced = ((await (await api('runs?agent=payments')).json()) as { runId: string; cost?: number }[]).find((r) => r.runId === unpricedRun.runId);
    expect(unpriced).toBeDefined();
    expect(unpriced!.cost).toBeUndefined();
    expect((await (await api('runs?agent=nobody')).json()) as unknown[]).toEqual([]);
    expect(((await (await api('runs?status=failed')).json()) as unknown[]).length).toBe(0);
    expect(((await (await api('runs?text=REFUNDS%20TAKE')).json()) as { runId: string }[]).map((row) => row.runId)).toEqual([traced]);
  });

  it('gives one run with its transcript, its ledger with idempotency keys, and its layer trace', async () => {
    const detail = (await (await api(`runs/${traced}`)).json()) as { state: { messages: unknown[] }; ledger: unknown[]; trace: { calls: { id: string; layers: { name: string; source: string; depth: number }[] }[] } };
    expect(detail.state.messages.length).toBeGreaterThan(2);
    expect(detail.ledger).toEqual([{ id: 'call_search', entry: 'done', toolName: 'search', idempotencyKey: `${traced}:call_search` }]);
    // The runtime's record: koagent's own steps around and inside the middleware and both dialects' hooks, each a level deeper.
    expect(detail.trace.calls.find((call) => call.id === 'call_search')!.layers.map((layer) => [layer.name, layer.source, layer.depth])).toEqual([
      ['koagent:validate', 'builtin', 0], ['audit', 'middleware', 1], ['tidy-query', 'middleware', 2], ['log-calls', 'agent-hook', 3], ['CheckScope', 'criogen', 4], ['koagent:resolve', 'builtin', 5],
    ]);
  });

  it('gives a sub-agent\'s calls in the trace under the lead\'s call that ran them', async () => {
    const { state } = await editorAgent(temp.store).run('Check a fact about otters');
    const detail = (await (await api(`runs/${state.runId}`)).json()) as { trace: { calls: { id: string; parentCallId?: string }[] } };
    expect(detail.trace.calls.filter((call) => call.parentCallId === 'call_researcher').map((call) => call.id)).toContain('call_sub_search');
  });

  it('exports the run as JSON and its trace as OTLP JSON, as downloads', async () => {
    const run = await api(`runs/${traced}/export`);
    expect(run.headers.get('content-disposition')).toContain(`${traced}.json`);
    expect(((await run.json()) as { runId: string }).runId).toBe(traced);
    const otlp = (await (await api(`runs/${traced}/otlp`)).json()) as { resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[] };
    expect(otlp.resourceSpans[0]!.scopeSpans[0]!.spans.map((span) => span.name)).toEqual(expect.arrayContaining(['invoke_agent support', 'execute_tool search', 'layer tidy-query', 'layer log-calls', 'layer CheckScope']));
  });

  it('answers 404 for a run the store does not hold', async () => {
    expect((await api('runs/run_missing')).status).toBe(404);
  });
});

describe('approvals', () => {
  it('lists a pending call with the arguments the layers produced and the tool\'s schema', async () => {
    const { state } = await payments.run('Refund order A-17');
    const pending = (await (await api('approvals')).json()) as { runId: string; toolName: string; args: unknown; schema?: { properties?: object }; canResume: boolean }[];
    expect(pending.find((p) => p.runId === state.runId)).toMatchObject({ toolName: 'refund', args: { orderId: 'A-17', amount: 40 }, canResume: true, schema: { properties: { orderId: {}, amount: {} } } });
  });

  it('refuses edited arguments that fail the tool\'s schema, with the schema\'s error, and runs nothing', async () => {
    const { state } = await payments.run('Refund order A-17');
    const refused = await api(`runs/${state.runId}/approvals/call_refund`, { method: 'POST', body: JSON.stringify({ approved: true, args: { orderId: 'A-17', amount: -5 } }) });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error: string }).error).toMatch(/refund's schema: amount: .*0/);
    expect((await temp.store.loadRun(state.runId))!.status).toBe('suspended');
  });

  it('resumes a run once when the same approval is answered twice at once: the tool runs once', async () => {
    const { state } = await payments.run('Refund order A-17');
    const before = executions.refunds.length;
    const answer = () => api(`runs/${state.runId}/approvals/call_refund`, { method: 'POST', body: JSON.stringify({ approved: true }) });
    const statuses = (await Promise.all([answer(), answer()])).map((response) => response.status).sort();
    expect(statuses).toEqual([202, 409]);
    await temp.stored(state.runId, 'completed');
    expect(executions.refunds.length - before).toBe(1);
    expect((await answer()).status).toBe(409);
  });

  it('runs an approval with edited arguments with those arguments', async () => {
    const { state } = await payments.run('Refund order A-17');
    const answered = await api(`runs/${state.runId}/approvals/call_refund`, { method: 'POST', body: JSON.stringify({ approved: true, args: { orderId: 'A-17', amount: 25 } }) });
    expect(answered.status).toBe(202);
    await temp.stored(state.runId, 'completed');
    expect(executions.refunds.at(-1)).toEqual({ orderId: 'A-17', amount: 25 });
  });

  it('puts an approval with edited arguments (42.5 → 40) on the record as given through the studio, by the actor named', async () => {
    const { state } = await paymentsAgent(temp.store, executions, ['A-17'], 42.5).run('Refund order A-17');
    const answer = (body: object) => api(`runs/${state.runId}/approvals/call_refund`, { method: 'POST', body: JSON.stringify(body) });
    const misspelt = await answer({ approved: true, actor: { id: 'u_17', nmae: 'Grace' } });
    expect(misspelt.status).toBe(400);
    expect(((await misspelt.json()) as { error: string }).error).toMatch(/actor\.nmae is not a field of a decision's actor; did you mean `name`\?/);
    expect((await answer({ approved: true, args: { orderId: 'A-17', amount: 40 }, reason: 'Round it down', actor: { id: 'u_17', name: 'Grace' } })).status).toBe(202);
    await temp.stored(state.runId, 'completed');
    const detail = (await (await api(`runs/${state.runId}`)).json()) as { state: RunState; trace: LayerTraceRecord };
    expect(detail.state.decisionLog).toEqual([{
      toolCallId: 'call_refund', toolName: 'refund', decision: 'approved', args: { orderId: 'A-17', amount: 42.5 }, editedArgs: { orderId: 'A-17', amount: 40 },
      reason: 'Round it down', actor: { id: 'u_17', name: 'Grace' }, surface: 'studio', at: expect.stringMatching(/^\d{4}-/), segment: 2,
    }]);
    const ran = detail.trace.calls.filter((call) => call.id === 'call_refund').at(-1)!;
    expect(ran.layers.find((l) => l.name === 'koagent:approval')!.effects).toEqual([expect.objectContaining({ type: 'human-decision', decision: 'approved', surface: 'studio', changes: [{ path: '/args/amount', before: 42.5, after: 40 }] })]);
    // The export carries it, since it is in the state.
    expect(((await (await api(`runs/${state.runId}/export`)).json()) as RunState).decisionLog).toEqual(detail.state.decisionLog);
  });

  it('keeps a denial\'s reason: the model reads it and the tool does not run', async () => {
    const { state } = await payments.run('Refund order A-17');
    const before = executions.refunds.length;
    expect((await api(`runs/${state.runId}/approvals/call_refund`, { method: 'POST', body: JSON.stringify({ approved: false, reason: 'Order already refunded' }) })).status).toBe(202);
    await temp.stored(state.runId, 'completed');
    expect(executions.refunds.length).toBe(before);
    const tool = (await temp.store.loadRun(state.runId))!.messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(tool)).toContain('Order already refunded');
  });

  it('resumes a run with several pending calls once each has an answer, not before', async () => {
    const both = paymentsAgent(temp.store, executions, ['B-1', 'B-2']);
    const studioOfBoth = await startStudio({ store: temp.store, agents: [both] });
    try {
      const { state } = await both.run('Refund B-1 and B-2');
      const answer = (id: string, decision: object) => fetch(new URL(`/api/runs/${state.runId}/approvals/${id}`, studioOfBoth.url), { method: 'POST', headers: { 'x-koagent-token': studioOfBoth.token, 'content-type': 'application/json' }, body: JSON.stringify(decision) });
      const first = await answer('call_refund', { approved: true });
      expect(first.status).toBe(202);
      expect(await first.json()).toMatchObject({ resumed: false, waitingFor: ['call_refund_2'] });
      expect((await temp.store.loadRun(state.runId))!.status).toBe('suspended');
      expect(((await answer('call_refund_2', { approved: false, reason: 'Not B-2' })).status)).toBe(202);
      await temp.stored(state.runId, 'completed');
      expect(executions.refunds.filter((refund) => refund.orderId.startsWith('B-'))).toEqual([{ orderId: 'B-1', amount: 40 }]);
    } finally {
      await studioOfBoth.close();
    }
  });

  it('resumes through its own store the run of an agent made without one (as an --agents module exports it)', async () => {
    const storeless = paymentsAgent(undefined, executions);
    const { state } = await storeless.run('Refund order A-17', { store: temp.store });
    const ofStoreless = await startStudio({ store: temp.store, agents: [storeless] });
    try {
      const before = executions.refunds.length;
      const answered = await fetch(new URL(`/api/runs/${state.runId}/approvals/call_refund`, ofStoreless.url), { method: 'POST', headers: { 'x-koagent-token': ofStoreless.token, 'content-type': 'application/json' }, body: '{"approved":true}' });
      expect(answered.status, await answered.clone().text()).toBe(202);
      await temp.stored(state.runId, 'completed');
      expect(executions.refunds.length - before).toBe(1);
    } finally {
      await ofStoreless.close();
    }
  });

  it('answers 409, saying to start the studio with --agents, when it has no agent to resume with', async () => {
    const { state } = await payments.run('Refund order A-17');
    const bare = await startStudio({ store: temp.store });
    try {
      const response = await fetch(new URL(`/api/runs/${state.runId}/approvals/call_refund`, bare.url), { method: 'POST', headers: { 'x-koagent-token': bare.token, 'content-type': 'application/json' }, body: '{"approved":true}' });
      expect(response.status).toBe(409);
      expect(((await response.json()) as { error: string }).error).toContain('--agents');
    } finally {
      await bare.close();
    }
  });
});

describe('live updates', () => {
  it('push the runs that changed as server-sent events', async () => {
    const controller = new AbortController();
    // The stream takes the store as it is (its first listing) before the run starts.
    const taken = temp.listed();
    const response = await api('events', { signal: controller.signal });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    await taken;
    const { state } = await supportAgent(temp.store).run('Where is my parcel?');
    let text = '';
    while (!text.includes(state.runId)) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text).toMatch(/event: runs\ndata: \{"changed":\[/);
  });
});
