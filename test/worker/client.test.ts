// The client of the workers, as its users see it: starting runs by agent name, waiting for
// them, following their events, answering approvals, cancelling, and the options it refuses.
// In-process workers and clients on one real PostgreSQL server (a fresh database per test).
import pg from 'pg';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool, type ModelProvider } from '../../src/index.js';
import { createClient, createWorker, type LoggedEvent, type WorkerClient, type Worker } from '../../src/worker.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';
import { prepareEffects, workerAgent } from '../fixtures/worker-agents.js';
import { until } from '../support/waits.js';

let server: TestPostgres;
beforeAll(async () => { server = await startPostgres(); }, 60_000);
afterAll(async () => { await server?.stop(); });

/** Short leases and polls, so a test's waits are short; no signal handlers in the test process. */
const FAST = { leaseMs: 1000, pollMs: 200, sweepMs: 200, maintenanceIntervalSeconds: 1, handleSignals: false, shutdownMs: 2000 } as const;
const WAIT = { timeoutMs: 20_000 };

/** What a test opened, closed after it (workers first, so no segment outlives its database). */
let closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
  closing = [];
});

/** A fresh database with the effects table, and a client on it. */
async function setup(): Promise<{ url: string; pool: pg.Pool; client: WorkerClient }> {
  const url = await server.database();
  const pool = new pg.Pool({ connectionString: url });
  closing.push(() => pool.end());
  await prepareEffects(pool as never);
  const client = await createClient({ connectionString: url });
  closing.push(() => client.close());
  return { url, pool, client };
}

async function startWorker(url: string, agents: Parameters<typeof createWorker>[0]['agents'], options: { concurrency?: number; recordEvents?: boolean } = {}): Promise<Worker> {
  const worker = await createWorker({ connectionString: url, agents, ...FAST, ...options });
  closing.push(() => worker.stop({ deadlineMs: 2000 }));
  return worker;
}

/** The times a tool of `runId` applied its effect, by tool name. */
async function effects(pool: pg.Pool, runId: string): Promise<Record<string, number>> {
  const { rows } = await pool.query('SELECT tool, sum(executions)::int AS n FROM test_effects WHERE run_id = $1 GROUP BY tool', [runId]);
  return Object.fromEntries(rows.map((row) => [row.tool, row.n]));
}

/** A model that answers at once with `reply(request)`: no tools. */
function answering(reply: (messages: Parameters<ModelProvider['generate']>[0]['messages']) => string, seen?: string[]): ModelProvider {
  return {
    name: 'answering',
    async generate(request) {
      const user = request.messages.filter((m) => m.role === 'user').at(-1);
      seen?.push(typeof user?.content === 'string' ? user.content : '');
      return { message: { role: 'assistant', content: reply(request.messages) }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
    },
  };
}

/** A model that calls `tool` once, then answers `Done.`. */
function callingOnce(tool: string): ModelProvider {
  return {
    name: 'calling',
    async generate(request) {
      if (request.messages.some((m) => m.role === 'tool')) return { message: { role: 'assistant', content: 'Done.' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
      return { message: { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: tool, args: {} }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' };
    },
  };
}

const quiet = { warn: () => undefined };

async function collect(events: AsyncIterable<LoggedEvent>): Promise<LoggedEvent[]> {
  const got: LoggedEvent[] = [];
  for await (const logged of events) got.push(logged);
  return got;
}

describe('client.start', () => {
  it('gives the run id at once; the run waits in the queue until a worker of its agent exists', async () => {
    const { url, pool, client } = await setup();
    const runId = await client.start('teller', 'hello');
    expect(runId).toMatch(/^run_/);
    expect(await client.status(runId)).toMatchObject({ runId, agentName: 'teller', status: 'queued', version: null, attempts: 0 });
    expect(await client.store.loadRun(runId)).toBeUndefined();
    await startWorker(url, [workerAgent(pool as never)]);
    expect(await client.wait(runId, WAIT)).toMatchObject({ runId, status: 'completed', version: '1', text: 'Done after 5 steps.' });
    expect(await effects(pool, runId)).toEqual({ record: 5 });
  }, 30_000);

  it('starts one run for one idempotency key: a retried start, and concurrent starts, get the first run id', async () => {
    const { url, pool, client } = await setup();
    const first = await client.start('teller', 'hello', { idempotencyKey: 'request-1' });
    expect(await client.start('teller', 'hello', { idempotencyKey: 'request-1' })).toBe(first);
    const other = await createClient({ connectionString: url });
    closing.push(() => other.close());
    const racing = await Promise.all([1, 2, 3, 4].map((i) => (i % 2 === 0 ? client : other).start('teller', 'hello', { idempotencyKey: 'request-2' })));
    expect(new Set(racing).size).toBe(1);
    expect(racing[0]).not.toBe(first);
    await startWorker(url, [workerAgent(pool as never)]);
    await client.wait(first, WAIT);
    await client.wait(racing[0], WAIT);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM koagent_dispatch');
    expect(rows[0].n).toBe(2);
    expect((await client.store.listRuns({ agentName: 'teller' })).map((run) => run.runId).sort()).toEqual([first, racing[0]].sort());
  }, 30_000);

  it('runs queued runs by priority, higher first, when one worker takes them one at a time', async () => {
    const { url, client } = await setup();
    const order: string[] = [];
    const ids: string[] = [];
    for (const [input, priority] of [['low', 1], ['high', 9], ['middle', 5], ['default', undefined]] as const) ids.push(await client.start('echo', input, priority === undefined ? {} : { priority }));
    const echo = createAgent({ name: 'echo', model: answering(() => 'ok', order), logger: quiet });
    await startWorker(url, [echo], { concurrency: 1 });
    for (const runId of ids) await client.wait(runId, WAIT);
    expect(order).toEqual(['high', 'middle', 'low', 'default']);
  }, 30_000);

  it("continues a stored session with sessionId: the second run's model sees the first run's history", async () => {
    const { url, client } = await setup();
    const memory = createAgent({ name: 'memory', model: answering((messages) => `I have read: ${messages.filter((m) => m.role === 'user').map((m) => m.content).join(' | ')}`), logger: quiet });
    await startWorker(url, [memory]);
    const first = await client.start('memory', 'My name is Ada.', { sessionId: 'session-ada' });
    expect(await client.wait(first, WAIT)).toMatchObject({ status: 'completed', text: 'I have read: My name is Ada.' });
    const second = await client.start('memory', 'What is my name?', { sessionId: 'session-ada' });
    expect(await client.wait(second, WAIT)).toMatchObject({ status: 'completed', text: 'I have read: My name is Ada. | What is my name?' });
    expect((await client.store.loadRun(second))!.sessionId).toBe('session-ada');
  }, 30_000);

  it("hands the run's context and metadata to its tools, with the worker's id and version", async () => {
    const { url, client } = await setup();
    const seen: { context: unknown; metadata: Record<string, unknown> }[] = [];
    const look = defineTool({ name: 'look', description: 'Look', input: z.object({}), execute: (_args, ctx) => (seen.push({ context: ctx.context, metadata: { ...ctx.metadata } }), 'seen') });
    const agent = createAgent({ name: 'looker', model: callingOnce('look'), tools: [look], logger: quiet });
    const worker = await startWorker(url, [{ agent, version: '3' }]);
    const runId = await client.start('looker', 'look', { context: { userId: 'u1', roles: ['admin'] }, metadata: { request: 'r-7' } });
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed', version: '3' });
    expect(seen).toEqual([{ context: { userId: 'u1', roles: ['admin'] }, metadata: { request: 'r-7', koagentWorker: { id: worker.id, version: '3' } } }]);
  }, 30_000);
});

describe('client.wait and client.status', () => {
  it('resolves when the run completes, and when it suspends for approval', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const done = await client.start('teller', 'hello');
    const asking = await client.start('teller', 'please refund');
    expect(await client.wait(done, WAIT)).toMatchObject({ status: 'completed', stopReason: 'final', output: 'Done after 1 steps.' });
    expect(await client.wait(asking, WAIT)).toMatchObject({
      status: 'suspended', stopReason: 'approval',
      pendingApprovals: [{ toolCallId: 'call_refund', toolName: 'refund', args: { amount: 5 } }],
    });
  }, 30_000);

  it('gives up after timeoutMs with an error that says what the run still is', async () => {
    const { client } = await setup();
    const runId = await client.start('teller', 'hello');
    await expect(client.wait(runId, { timeoutMs: 300 })).rejects.toThrow(`client.wait(${runId}): the run is still queued after 300 ms`);
  });

  it('rejects at once with the reason of a signal aborted already, without waiting for its next read of the run', async () => {
    const { client } = await setup();
    const runId = await client.start('teller', 'hello');
    const reason = new Error('the caller went away');
    let over = false;
    // Its outcome is taken at once, so the rejection is never left unhandled while the test looks.
    const outcome = client.wait(runId, { signal: AbortSignal.abort(reason) }).finally(() => (over = true)).then(() => 'resolved', (error: unknown) => error);
    // Over by the next turn of the event loop: nothing was read, nothing awaited.
    await new Promise((resolve) => setImmediate(resolve));
    expect(over).toBe(true);
    expect(await outcome).toBe(reason);
  });

  it('rejects as soon as its signal aborts while it waits, whatever it was doing', async () => {
    const { client } = await setup();
    const runId = await client.start('teller', 'hello');
    const controller = new AbortController();
    let over = false;
    const outcome = client.wait(runId, { signal: controller.signal }).finally(() => (over = true)).then(() => 'resolved', (error: unknown) => error);
    await client.status(runId);
    expect(over).toBe(false);
    const reason = new Error('the caller went away');
    controller.abort(reason);
    await new Promise((resolve) => setImmediate(resolve));
    expect(over).toBe(true);
    expect(await outcome).toBe(reason);
  });

  it('knows no run it never started: status is undefined, and wait says to start runs with client.start()', async () => {
    const { client } = await setup();
    expect(await client.status('run_nobody')).toBeUndefined();
    await expect(client.wait('run_nobody', WAIT)).rejects.toThrow('client.wait(runId): the queue has no run run_nobody; start runs with client.start()');
  });
});

describe('client.events', () => {
  it("follows a streamed run as a worker runs it: its text deltas in order, then the run's end", async () => {
    const { url, pool, client } = await setup();
    const runId = await client.start('teller', 'hello', { stream: true });
    const following = collect(client.events(runId));
    await startWorker(url, [workerAgent(pool as never, { steps: 2 })]);
    const events = await following;
    const seqs = events.map((logged) => logged.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // The deltas that came within one batch are one delta in the log: the same text, in order.
    const deltas = events.flatMap(({ event }) => (event.type === 'text.delta' ? [event.delta] : []));
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.join('')).toBe('Done after 2 steps.');
    expect(events[0].event.type).toBe('run.start');
    expect(events.at(-1)!.event).toMatchObject({ type: 'run.end', status: 'completed' });
  }, 30_000);

  it("gives a subscriber that joins after the run ended every event from the first, from the run store's log; `after` goes on from a position", async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 2 })]);
    const runId = await client.start('teller', 'hello', { stream: true });
    await client.wait(runId, WAIT);
    const late = await collect(client.events(runId));
    // The run's own offsets, 1, 2, 3 …: the store's log, the one every reader of the run reads.
    expect(late.map((logged) => logged.seq)).toEqual(late.map((_, i) => i + 1));
    expect(late).toEqual((await client.store.readEvents!(runId)).events);
    const { rows } = await pool.query('SELECT seq FROM koagent_run_events WHERE run_id = $1 ORDER BY seq', [runId]);
    expect(late.map((logged) => logged.seq)).toEqual(rows.map((row) => Number(row.seq)));
    expect(late[0].event.type).toBe('run.start');
    expect(late.at(-1)!.event).toMatchObject({ type: 'run.end', status: 'completed' });
    const rest = await collect(client.events(runId, { after: late[3].seq }));
    expect(rest).toEqual(late.slice(4));
  }, 30_000);

  it('gives nothing with a signal aborted already', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const runId = await client.start('teller', 'hello');
    await client.wait(runId, WAIT);
    expect((await collect(client.events(runId))).length).toBeGreaterThan(0);
    expect(await collect(client.events(runId, { signal: AbortSignal.abort() }))).toEqual([]);
  }, 10_000);

  it('tells a follower whose run was deleted that the events it asks for are gone', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const runId = await client.start('teller', 'hello');
    await client.wait(runId, WAIT);
    const all = await collect(client.events(runId));
    expect(await client.store.deleteRun(runId)).toBe(true);
    await expect(collect(client.events(runId, { after: all[1].seq }))).rejects.toMatchObject({ code: 'events_deleted', message: `client.events(${runId}): the run's events after 2 are gone: the run was deleted (or pruned) with them` });
  }, 10_000);

  it('ends when the run has settled and its events are read, also when the worker recorded none', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })], { recordEvents: false });
    const runId = await client.start('teller', 'hello');
    await client.wait(runId, WAIT);
    expect(await collect(client.events(runId))).toEqual([]);
  }, 10_000);
});

describe('client.approvals and client.answer', () => {
  it('lists a suspended run with its pending calls; the answer resumes it on a worker and it completes', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const runId = await client.start('teller', 'please refund', { tenant: 'acme' });
    await client.wait(runId, WAIT);
    expect(await client.approvals()).toEqual([expect.objectContaining({
      runId, agentName: 'teller', tenant: 'acme', status: 'suspended',
      pendingApprovals: [{ toolCallId: 'call_refund', toolName: 'refund', args: { amount: 5 } }],
    })]);
    expect(await client.approvals({ agent: 'someone-else' })).toEqual([]);
    await client.answer(runId, { call_refund: true });
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed', text: 'Done after 1 steps.' });
    expect(await effects(pool, runId)).toEqual({ refund: 1, record: 1 });
    expect(await client.approvals()).toEqual([]);
  }, 30_000);

  it('refuses a second answer of the same segment', async () => {
    const { url, pool, client } = await setup();
    const worker = await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const runId = await client.start('teller', 'please refund');
    await client.wait(runId, WAIT);
    await worker.stop({ deadlineMs: 2000 });
    await client.answer(runId, { call_refund: true });
    await expect(client.answer(runId, { call_refund: false })).rejects.toThrow(`client.answer('${runId}', decisions): the run is not waiting for approval (it is queued)`);
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed' });
    expect(await effects(pool, runId)).toEqual({ refund: 1, record: 1 });
  }, 30_000);

  it('refuses an unknown call id, and a run that is not suspended, saying what to answer', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const asking = await client.start('teller', 'please refund');
    const done = await client.start('teller', 'hello');
    await client.wait(asking, WAIT);
    await client.wait(done, WAIT);
    await expect(client.answer(asking, { call_nope: true })).rejects.toThrow(`client.answer('${asking}', decisions): call_nope is not a pending call of the run (pending: call_refund)`);
    await expect(client.answer(done, { call_refund: true })).rejects.toThrow(`client.answer('${done}', decisions): the run is not waiting for approval (it is completed); answer a run client.approvals() lists`);
    await expect(client.answer('run_nobody', {})).rejects.toThrow("client.answer('run_nobody', decisions): the queue has no run run_nobody");
    // Refused answers changed nothing: the run still waits for its answer.
    expect(await client.status(asking)).toMatchObject({ status: 'suspended' });
  }, 30_000);

  it('lets exactly one of two clients answering at once go ahead; the tool runs once', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const other = await createClient({ connectionString: url });
    closing.push(() => other.close());
    const runId = await client.start('teller', 'please refund');
    await client.wait(runId, WAIT);
    const answers = await Promise.allSettled([client.answer(runId, { call_refund: true }), other.answer(runId, { call_refund: true })]);
    expect(answers.filter((answer) => answer.status === 'fulfilled')).toHaveLength(1);
    const [refusal] = answers.filter((answer): answer is PromiseRejectedResult => answer.status === 'rejected');
    expect(String(refusal.reason)).toMatch(/answered meanwhile|not waiting for approval/);
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed' });
    expect(await effects(pool, runId)).toEqual({ refund: 1, record: 1 });
  }, 30_000);
});

describe('client.answer puts each decision on the record', () => {
  /** An agent asking to transfer 42.5 to Ada; `sent` lists the amounts that went out. */
  function bank(sent: number[]) {
    const transfer = defineTool({ name: 'transfer', description: 'Sends money', needsApproval: true, input: z.object({ to: z.string(), amount: z.number() }), execute: ({ amount }) => (sent.push(amount), `sent ${amount}`) });
    let turn = 0;
    const model: ModelProvider = {
      name: 'scripted',
      generate: async () => (turn++ % 2 === 0
        ? { message: { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'transfer', args: { to: 'Ada', amount: 42.5 } }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' }
        : { message: { role: 'assistant', content: 'Sent.' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' }),
    };
    return createAgent({ name: 'bank', tools: [transfer], model, logger: quiet });
  }

  it('as given through the worker client: an edit 42.5 → 40, who, and when, in the run the worker resumed', async () => {
    const { url, client } = await setup();
    const sent: number[] = [];
    await startWorker(url, [bank(sent)]);
    const runId = await client.start('bank', 'Pay Ada');
    await client.wait(runId, WAIT);
    await client.answer(runId, { t1: { approved: true, args: { to: 'Ada', amount: 40 }, actor: { id: 'u_17', name: 'Grace' } } });
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed' });
    expect(sent).toEqual([40]);
    expect((await client.store.loadRun(runId))!.decisionLog).toEqual([{
      toolCallId: 't1', toolName: 'transfer', decision: 'approved', args: { to: 'Ada', amount: 42.5 }, editedArgs: { to: 'Ada', amount: 40 },
      actor: { id: 'u_17', name: 'Grace' }, surface: 'worker-client', at: expect.stringMatching(/^\d{4}-/), segment: 2,
    }]);
  }, 30_000);

  it('refuses a misspelt field of a decision before anything is queued', async () => {
    const { url, client } = await setup();
    await startWorker(url, [bank([])]);
    const runId = await client.start('bank', 'Pay Ada');
    await client.wait(runId, WAIT);
    await expect(client.answer(runId, { t1: { approved: true, actr: 'grace' } as never })).rejects.toThrow(`client.answer('${runId}', decisions): the decision for "t1": actr is not a field of a decision; did you mean \`actor\`?`);
    expect(await client.status(runId)).toMatchObject({ status: 'suspended' });
  }, 30_000);
});

describe('client.cancel', () => {
  it('drops a queued run: it never starts', async () => {
    const { url, client } = await setup();
    const asked: string[] = [];
    const runId = await client.start('echo', 'hello');
    await client.cancel(runId);
    await startWorker(url, [createAgent({ name: 'echo', model: answering(() => 'ok', asked), logger: quiet })]);
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'cancelled' });
    expect(asked).toEqual([]);
    expect(await client.store.loadRun(runId)).toBeUndefined();
  }, 30_000);

  it('aborts a running run through its signal: the slow tool sees the abort, and the run ends aborted', async () => {
    const { url, client } = await setup();
    let entered!: () => void;
    const running = new Promise<void>((resolve) => (entered = resolve));
    let aborted = false;
    const slow = defineTool({
      name: 'slow', description: 'Slow', input: z.object({}),
      // Runs until the run is cancelled: only the abort ends it.
      execute: (_args, ctx) => new Promise((resolve) => {
        entered();
        ctx.signal.addEventListener('abort', () => (aborted = true, resolve('stopped')), { once: true });
      }),
    });
    await startWorker(url, [createAgent({ name: 'sloth', model: callingOnce('slow'), tools: [slow], logger: quiet })]);
    const runId = await client.start('sloth', 'go slowly');
    await running;
    // The worker marks the run active as its segment starts, in a write of its own that may land
    // just after the tool was entered (no event tells of it: its row is polled).
    await until(async () => (await client.status(runId))?.status === 'running', 'the run to be marked running');
    await client.cancel(runId);
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'cancelled', stopReason: 'aborted' });
    expect(aborted).toBe(true);
    expect((await client.store.loadRun(runId))!.stopReason).toBe('aborted');
  }, 30_000);

  it('cancels a suspended run: it is no longer listed, and cannot be answered', async () => {
    const { url, pool, client } = await setup();
    await startWorker(url, [workerAgent(pool as never, { steps: 1 })]);
    const runId = await client.start('teller', 'please refund');
    await client.wait(runId, WAIT);
    await client.cancel(runId);
    expect(await client.status(runId)).toMatchObject({ status: 'cancelled' });
    expect(await client.approvals()).toEqual([]);
    await expect(client.answer(runId, { call_refund: true })).rejects.toThrow(`client.answer('${runId}', decisions): the run is not waiting for approval (it is cancelled)`);
    expect(await effects(pool, runId)).toEqual({});
  }, 30_000);
});

describe('the options of createClient and createWorker', () => {
  const agent = createAgent({ name: 'echo', model: answering(() => 'ok'), logger: quiet });
  const url = 'postgres://nobody@127.0.0.1:1/none';

  it('say where the database is: neither a connection nor both is refused', async () => {
    await expect(createClient({})).rejects.toThrow("createClient(options): say where the PostgreSQL of the queue is: { connectionString: 'postgres://…' } or { pool }");
    await expect(createWorker({ agents: [agent] })).rejects.toThrow("createWorker(options): say where the PostgreSQL of the queue is: { connectionString: 'postgres://…' } or { pool }");
    const pool = new pg.Pool({ connectionString: url });
    await expect(createClient({ connectionString: url, pool: pool as never })).rejects.toThrow('createClient(options): give connectionString or pool, not both');
    await expect(createWorker({ connectionString: url, pool: pool as never, agents: [agent] })).rejects.toThrow('createWorker(options): give connectionString or pool, not both');
    await pool.end();
  });

  it('name an unknown key and suggest the one meant', async () => {
    await expect(createClient({ connectionStrin: url } as never)).rejects.toThrow('createClient(options): connectionStrin is not an option; did you mean `connectionString`?');
    await expect(createWorker({ connectionString: url, agents: [agent], concurency: 2 } as never)).rejects.toThrow('createWorker(options): concurency is not an option; did you mean `concurrency`?');
  });

  it('refuse an agents entry that is not an agent, saying what one is', async () => {
    await expect(createWorker({ connectionString: url, agents: ['echo'] } as never)).rejects.toThrow(/createWorker\(options\): agents\[0\] must be an agent made with createAgent, or \{ agent, version \}/);
    await expect(createWorker({ connectionString: url, agents: [{ agent: 'echo' }] } as never)).rejects.toThrow(/createWorker\(options\): agents\[0\].*must be an agent made with createAgent/);
    await expect(createWorker({ connectionString: url, agents: [] })).rejects.toThrow('createWorker(options): agents must name at least one agent');
    await expect(createWorker({ connectionString: url, agents: [agent, agent] })).rejects.toThrow('createWorker(options): two agents are named "echo"');
    await expect(createWorker({ connectionString: url, agents: [agent], eventRetentionMs: 1000 } as never)).rejects.toThrow("createWorker(options): eventRetentionMs is no longer an option: a run's events are kept in the run store's event log and deleted with the run (set the store's retention: postgresStore({ retention }), or store.prune())");
  });
});

describe("the options of the client's methods", () => {
  it('name a misspelt key and the one meant, instead of ignoring it: no run is started, nothing is scheduled', async () => {
    const { pool, client } = await setup();
    await expect(client.start('teller', 'hello', { idempotencykey: 'k' } as never)).rejects.toThrow('client.start(agent, input, options): idempotencykey is not an option; did you mean `idempotencyKey`?');
    await expect(client.wait('run_nobody', { timeout: 5000 } as never)).rejects.toThrow('client.wait(runId, options): timeout is not an option; did you mean `timeoutMs`?');
    await expect(collect(client.events('run_nobody', { aftr: 3 } as never))).rejects.toThrow('client.events(runId, options): aftr is not an option; did you mean `after`?');
    await expect(client.approvals({ agnet: 'teller' } as never)).rejects.toThrow('client.approvals(options): agnet is not an option; did you mean `agent`?');
    await expect(client.deadLetters({ limt: 5 } as never)).rejects.toThrow('client.deadLetters(options): limt is not an option; did you mean `limit`?');
    await expect(client.moveRuns({ agent: 'teller', from: '1', too: '2' } as never)).rejects.toThrow('client.moveRuns(options): too is not an option; did you mean `to`?');
    await expect(client.schedule('nightly', { agent: 'teller', cron: '0 3 * * *', input: 'hello', timezone: 'Europe/Paris' } as never)).rejects.toThrow('client.schedule(name, spec): timezone is not a field of a schedule; did you mean `tz`?');
    expect((await pool.query('SELECT count(*)::int AS n FROM koagent_dispatch')).rows[0].n).toBe(0);
    expect((await pool.query('SELECT count(*)::int AS n FROM pgboss.schedule')).rows[0].n).toBe(0);
  });

  it('refuse a value of the wrong type or a missing one, saying what it must be', async () => {
    const { client } = await setup();
    await expect(client.start('teller', 'hello', { priority: 'high' } as never)).rejects.toThrow('client.start(agent, input, options): priority must be an integer (higher first) (got the string "high")');
    await expect(client.wait('run_nobody', { signal: {} } as never)).rejects.toThrow('client.wait(runId, options): signal must be an AbortSignal');
    await expect(client.moveRuns({ agent: 'teller', from: '1' } as never)).rejects.toThrow('client.moveRuns(options): to must be the version to move them to, a non-empty string');
    await expect(client.schedule('nightly', { agent: 'teller', cron: '0 3 * * *' } as never)).rejects.toThrow('client.schedule(name, spec): input is missing: a string, a message, or an array of messages');
  });
});
