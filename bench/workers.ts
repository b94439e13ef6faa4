// npm run bench:workers: koagent/worker on an embedded PostgreSQL. Runs per second of a
// five-step agent (a 1 ms tool per step) with one worker process and with two, and the time the
// queue adds to a run: from client.start() to the run's first model call, and from
// client.answer() to the first step of the resumed segment, measured one run at a time on an
// idle queue. The workers are real processes (bench/worker-process.ts), the client is this one.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient, type WorkerClient } from '../src/worker.js';
import { startPostgres } from '../test/support/postgres-server.js';
import type { WorkerMessage } from './worker-process.js';

const RUNS = Number(process.env.BENCH_WORKER_RUNS ?? 200);
const ROUNDS = Number(process.env.BENCH_WORKER_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 8);
const SAMPLES = Number(process.env.BENCH_LATENCY_RUNS ?? 50);
const WARM_UP = 20;
const AGENT = 'bench';
const script = fileURLToPath(new URL('./worker-process.js', import.meta.url));

/** When each segment's first step started, by run, then segment (told by the worker processes). */
const firstSteps = new Map<string, Map<number, number>>();
const stepWaiters = new Map<string, () => void>();

function onStep(message: Extract<WorkerMessage, { type: 'step' }>): void {
  let segments = firstSteps.get(message.runId);
  if (segments === undefined) firstSteps.set(message.runId, (segments = new Map()));
  segments.set(message.segment, message.at);
  stepWaiters.get(`${message.runId}:${message.segment}`)?.();
}

/** When segment `segment` of `runId` took its first step: told already, or as soon as it is. */
async function firstStep(runId: string, segment: number): Promise<number> {
  const key = `${runId}:${segment}`;
  while (firstSteps.get(runId)?.get(segment) === undefined) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bench: no first step of segment ${segment} of run ${runId} was told`)), 10_000);
      stepWaiters.set(key, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  stepWaiters.delete(key);
  return firstSteps.get(runId)!.get(segment)!;
}

/** A worker process: forked, ready once its worker takes jobs, stopped gracefully. */
class WorkerProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  counts: Record<string, number> | undefined;

  constructor(url: string) {
    this.child = fork(script, [url, String(CONCURRENCY)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.ready = new Promise((resolve, reject) => {
      this.child.once('exit', (code) => reject(new Error(`bench: a worker process exited (code ${code}) before it was ready`)));
      this.child.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'step') onStep(message);
        else if (message.type === 'stopped') this.counts = message.counts;
      });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.connected) this.child.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}

async function withWorkers<T>(url: string, count: number, work: (workers: WorkerProcess[]) => Promise<T>): Promise<T> {
  const workers = Array.from({ length: count }, () => new WorkerProcess(url));
  try {
    await Promise.all(workers.map((w) => w.ready));
    return await work(workers);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

/** CPU milliseconds `pids` have used so far, from /proc (Linux; undefined elsewhere, or when one is gone). */
function cpuMs(pids: number[]): number | undefined {
  let ticks = 0;
  for (const pid of pids) {
    const path = `/proc/${pid}/stat`;
    if (!existsSync(path)) return undefined;
    // The fields after the command (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(path, 'utf8').slice(readFileSync(path, 'utf8').lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10; // 100 ticks a second on Linux
}

/** Where the machine's time went in a timed part: CPU of each side, and the write transactions PostgreSQL committed. */
interface Usage {
  workers: number | undefined;
  postgres: number | undefined;
  client: number;
  xids: number;
}

async function usage(stats: pg.Client, workers: WorkerProcess[]): Promise<Usage> {
  const { rows } = await stats.query('SELECT pid FROM pg_stat_activity');
  const xid = await stats.query('SELECT pg_current_xact_id()::text::bigint AS xid');
  const { user, system } = process.cpuUsage();
  return { workers: cpuMs(workers.map((w) => w.child.pid!)), postgres: cpuMs(rows.map((r) => Number(r.pid))), client: (user + system) / 1000, xids: Number(xid.rows[0].xid) };
}

/** Per run: CPU ms of the workers, of PostgreSQL, of the client, and write transactions (xids, less the probe's own). */
function perRun(before: Usage, after: Usage, runs: number) {
  const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : (b - a) / runs);
  return { workers: diff(before.workers, after.workers), postgres: diff(before.postgres, after.postgres), client: (after.client - before.client) / runs, writes: (after.xids - before.xids - 1) / runs };
}

/** Start `n` runs at once and wait for all of them; every one must complete. */
async function runMany(client: WorkerClient, n: number): Promise<void> {
  const ids = await Promise.all(Array.from({ length: n }, (_, i) => client.start(AGENT, `go ${i}`)));
  const reports = await Promise.all(ids.map((id) => client.wait(id, { timeoutMs: 120_000 })));
  const unfinished = reports.filter((r) => r.status !== 'completed');
  if (unfinished.length > 0) throw new Error(`bench: ${unfinished.length} run(s) did not complete (e.g. ${unfinished[0]!.runId}: ${unfinished[0]!.status})`);
}

/** Runs per second with `count` worker processes, after a warm-up their timing leaves out; and how the segments spread over the workers. */
async function throughput(url: string, client: WorkerClient, stats: pg.Client, count: number): Promise<Throughput> {
  let seconds = 0;
  let cost: Throughput['cost'] | undefined;
  const workers = await withWorkers(url, count, async (workers) => {
    await runMany(client, WARM_UP);
    const before = await usage(stats, workers);
    const t0 = performance.now();
    await runMany(client, RUNS);
    seconds = (performance.now() - t0) / 1000;
    cost = perRun(before, await usage(stats, workers), RUNS);
    return workers;
  });
  return { perSecond: RUNS / seconds, spread: workers.map((w) => w.counts?.segments ?? 0), cost: cost! };
}

interface Throughput {
  perSecond: number;
  spread: number[];
  cost: ReturnType<typeof perRun>;
}

interface Latencies {
  start: number[];
  firstModel: number[];
  answer: number[];
  resumed: number[];
}

/** One run at a time on an idle queue: start → first model call, and answer → the resumed segment's first step. */
async function latencies(url: string, client: WorkerClient): Promise<Latencies> {
  const out: Latencies = { start: [], firstModel: [], answer: [], resumed: [] };
  await withWorkers(url, 1, async () => {
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      const t0 = Date.now();
      const runId = await client.start(AGENT, `go ${i}`);
      const started = Date.now();
      const modelAt = await firstStep(runId, 1);
      if ((await client.wait(runId, { timeoutMs: 30_000 })).status !== 'completed') throw new Error(`bench: run ${runId} did not complete`);

      const refund = await client.start(AGENT, 'please refund');
      if ((await client.wait(refund, { timeoutMs: 30_000 })).status !== 'suspended') throw new Error(`bench: run ${refund} did not suspend for approval`);
      const t1 = Date.now();
      await client.answer(refund, { call_refund: true });
      const answered = Date.now();
      const resumedAt = await firstStep(refund, 2);
      if ((await client.wait(refund, { timeoutMs: 30_000 })).status !== 'completed') throw new Error(`bench: run ${refund} did not complete after its approval`);
      if (i < WARM_UP) continue;
      out.start.push(started - t0);
      out.firstModel.push(modelAt - t0);
      out.answer.push(answered - t1);
      out.resumed.push(resumedAt - t1);
    }
  });
  return out;
}

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * q)]!;

async function main(): Promise<void> {
  console.log(`\nworkers: ${RUNS} runs of a 5-step agent (1 ms tool), worker processes of concurrency ${CONCURRENCY}, best of ${ROUNDS} interleaved rounds (Node ${process.version})`);
  if (process.env.BENCH_POSTGRES === '0') return console.log('workers: skipped, BENCH_POSTGRES=0');
  let server: Awaited<ReturnType<typeof startPostgres>>;
  try {
    server = await startPostgres();
  } catch (error) {
    return console.log(`workers: skipped, the embedded PostgreSQL server did not start: ${(error as Error).message ?? String(error)}`);
  }
  let client: WorkerClient | undefined;
  let stats: pg.Client | undefined;
  try {
    const url = await server.database();
    client = await createClient({ connectionString: url });
    stats = new pg.Client({ connectionString: url });
    await stats.connect();
    const best = new Map<number, Throughput>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const count of [1, 2]) {
        const got = await throughput(url, client, stats, count);
        if (got.perSecond > (best.get(count)?.perSecond ?? 0)) best.set(count, got);
      }
    }
    const lat = await latencies(url, client);
    const one = best.get(1)!;
    const two = best.get(2)!;
    console.log(`${'1 worker process'.padEnd(48)} ${one.perSecond.toFixed(1).padStart(8)} runs/s`);
    console.log(`${'2 worker processes'.padEnd(48)} ${two.perSecond.toFixed(1).padStart(8)} runs/s   (segments per worker: ${two.spread.join(' / ')})`);
    const cpu = (v: number | undefined) => (v === undefined ? 'n/a' : `${v.toFixed(1)} ms`);
    for (const [label, t] of [['1 worker', one], ['2 workers', two]] as const) {
      const busy = t.cost.workers === undefined || t.cost.postgres === undefined ? undefined : ((t.cost.workers + t.cost.postgres + t.cost.client) * t.perSecond) / 1000;
      console.log(`${`  per run, ${label}`.padEnd(48)} CPU: workers ${cpu(t.cost.workers)}, PostgreSQL ${cpu(t.cost.postgres)}, client ${cpu(t.cost.client)}; ${t.cost.writes.toFixed(1)} write transactions${busy === undefined ? '' : `; ${busy.toFixed(2)} cores busy`}`);
    }
    // Workers, PostgreSQL and the client share the machine's cores: at the 1-worker CPU per run,
    // this is the most runs a second the machine could do, whatever the number of workers.
    if (one.cost.workers !== undefined && one.cost.postgres !== undefined) {
      const ceiling = (availableParallelism() * 1000) / (one.cost.workers + one.cost.postgres + one.cost.client);
      console.log(`${'  ceiling of the machine at the 1-worker CPU/run'.padEnd(48)} ${ceiling.toFixed(1).padStart(8)} runs/s on ${availableParallelism()} cores, ${(ceiling / one.perSecond).toFixed(2)}× the 1-worker figure (the most the ratio below can be)`);
    }
    const ms = (values: number[]) => `p50 ${quantile(values, 0.5).toFixed(0).padStart(3)} ms, p95 ${quantile(values, 0.95).toFixed(0).padStart(3)} ms`;
    console.log(`\nqueue latency: ${SAMPLES} runs one at a time on an idle queue, one worker process (Date.now() in the client and the worker)`);
    console.log(`${'client.start() → first model call'.padEnd(48)} ${ms(lat.firstModel)}   (client.start() itself: ${ms(lat.start)})`);
    console.log(`${'client.answer() → resumed first step'.padEnd(48)} ${ms(lat.resumed)}   (client.answer() itself: ${ms(lat.answer)})`);
    console.log('');
    const ratio = two.perSecond / one.perSecond;
    const rows: [string, number, string, boolean][] = [
      ['runs/s, 2 workers / 1 worker', ratio, '≥ 1.6', ratio >= 1.6],
      ['client.start() → first model call, p50 ms', quantile(lat.firstModel, 0.5), '≤ 50', quantile(lat.firstModel, 0.5) <= 50],
      ['client.answer() → resumed first step, p50 ms', quantile(lat.resumed, 0.5), '≤ 50', quantile(lat.resumed, 0.5) <= 50],
    ];
    for (const [what, value, target, ok] of rows) console.log(`${what.padEnd(50)} ${value.toFixed(2).padStart(6)}  target ${target.padEnd(6)} ${ok ? 'met' : 'NOT MET'}`);
  } finally {
    await client?.close();
    await stats?.end().catch(() => undefined);
    await server.stop();
  }
}

await main();
