// npm run bench (and npm run bench:event-log): what the event log costs. Per step, a durable
// run with its log on against the same run with it off, on each store — time, commits,
// statements and bytes — and the commits a step adds when its model is slower than a batch;
// then how many events per second each store takes, appended in batches of 1 and of 50.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type GenerateResult, type ModelProvider } from '../src/index.js';
import { postgresStore } from '../src/postgres.js';
import { sqliteStore } from '../src/sqlite.js';
import type { Lease } from '../src/store.js';
import type { EventLogStore } from '../src/stores/run-store.js';
import { newState } from '../src/core/vocabulary/state.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres-server.js';

const S = Number(process.env.BENCH_STEPS ?? 200);
const ROUNDS = Number(process.env.BENCH_LOG_ROUNDS ?? 40);

const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

/** Asks for `add` `steps` times, then answers; each reply after `latencyMs` (0: at once). */
function scripted(steps: number, latencyMs = 0): ModelProvider {
  let n = 0;
  return {
    name: 'scripted',
    async generate(): Promise<GenerateResult> {
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
      n++;
      if (n > steps) return { message: { role: 'assistant', content: 'done' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
      return { message: { role: 'assistant', content: '', toolCalls: [{ id: `c${n}`, name: 'add', args: { a: n, b: 1 } }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' };
    },
  };
}

/** One run of `steps` steps of the bench's agent on `store`, its log on or off. */
async function run(store: EventLogStore, steps: number, eventLog: boolean, latencyMs = 0): Promise<string> {
  const agent = createAgent({ model: scripted(steps, latencyMs), maxSteps: steps + 1, tools: [add], store });
  const result = await agent.run('go', { eventLog });
  if (result.usage.toolCalls !== steps) throw new Error('bench: wrong number of tool calls');
  return result.runId;
}

/** Best µs/step of each variant, in interleaved rounds (after a warm-up). */
async function time(variants: Record<string, () => Promise<unknown>>, steps: number, rounds: number): Promise<Record<string, number>> {
  const best: Record<string, number> = {};
  for (const fn of Object.values(variants)) for (let i = 0; i < 3; i++) await fn();
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(variants)) {
      const t0 = performance.now();
      await fn();
      best[name] = Math.min(best[name] ?? Infinity, ((performance.now() - t0) * 1000) / steps);
    }
  }
  return best;
}

/** Commits, statements and bytes a run of `steps` steps adds to `store`'s counters, per step. */
async function writes(store: EventLogStore, steps: number, eventLog: boolean, latencyMs = 0): Promise<{ commits: number; statements: number; bytes: number; events: number }> {
  const before = store.stats;
  const runId = await run(store, steps, eventLog, latencyMs);
  const after = store.stats;
  const events = (await store.readEvents(runId, { after: 0, limit: 1 })).last;
  return { commits: (after.writes - before.writes) / steps, statements: ((after.statements ?? 0) - (before.statements ?? 0)) / steps, bytes: (after.bytes - before.bytes) / steps, events: events / steps };
}

type Row = [what: string, value: number, target: string | undefined, ok: boolean];

async function perStep(name: string, store: EventLogStore, rounds: number): Promise<Row[]> {
  const t = await time({ off: () => run(store, S, false), on: () => run(store, S, true) }, S, rounds);
  const off = await writes(store, S, false);
  const on = await writes(store, S, true);
  // A model slower than a batch (12 ms): the events that wait for it are appended on their own.
  const slowSteps = 20;
  const slowOff = await writes(store, slowSteps, false, 12);
  const slowOn = await writes(store, slowSteps, true, 12);
  console.log(`${name.padEnd(40)} log off ${t.off.toFixed(2).padStart(7)} µs/step   log on ${t.on.toFixed(2).padStart(7)} µs/step   (+${(t.on - t.off).toFixed(2)} µs/step, ${on.events.toFixed(1)} events/step)`);
  console.log(`${''.padEnd(40)} per step: commits ${off.commits.toFixed(2)} → ${on.commits.toFixed(2)}, statements ${off.statements.toFixed(2)} → ${on.statements.toFixed(2)}, bytes ${off.bytes.toFixed(0)} → ${on.bytes.toFixed(0)}`);
  console.log(`${''.padEnd(40)} with a model slower than a batch (12 ms): commits per step ${slowOff.commits.toFixed(2)} → ${slowOn.commits.toFixed(2)}`);
  const perEvent = (t.on - t.off) / on.events;
  const bound = name.startsWith('memory') ? 4 : name.startsWith('sqlite') ? 50 : 150;
  return [
    [`${name}: µs added per event logged`, perEvent, `≤ ${bound}`, perEvent <= bound],
    [`${name}: µs/step, log on / log off`, t.on / t.off, undefined, true],
    [`${name}: commits/step added by the log (fast model)`, on.commits - off.commits, '≤ 0.05', on.commits - off.commits <= 0.05],
    [`${name}: commits/step added by the log (model slower than a batch)`, slowOn.commits - slowOff.commits, '≤ 1.1', slowOn.commits - slowOff.commits <= 1.1],
  ];
}

/** A text delta as the log keeps one (about 120 bytes of JSON). */
const delta = (i: number) => JSON.stringify({ type: 'text.delta', delta: `word${i} `, step: 1, runId: 'run_bench_events', at: 1_800_000_000_000 + i });

/** Events per second `store` takes, appended `batch` at a time to one run, for about `ms`. */
async function eventsPerSecond(store: EventLogStore, batch: number, ms: number): Promise<number> {
  const runId = `run_bench_events_${batch}_${Date.now()}`;
  const created = await store.createRun({ state: newState(runId, runId, { name: 'bench', id: 'bench', toolsFingerprint: '' }, []), owner: 'bench' });
  const lease = (created as { lease: Lease }).lease;
  const events = Array.from({ length: batch }, (_, i) => delta(i));
  let appended = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    await store.appendEvents(lease, events);
    appended += batch;
  }
  return appended / ((performance.now() - t0) / 1000);
}

function printRows(rows: Row[]): void {
  const width = Math.max(...rows.map(([what]) => what.length));
  for (const [what, value, target, ok] of rows) console.log(`${what.padEnd(width)} ${value.toFixed(2).padStart(7)}  ${target === undefined ? 'for reference' : `target ${target.padEnd(7)} ${ok ? 'met' : 'NOT MET'}`}`);
}

console.log(`\nevent log: S = ${S} steps of one model reply with one tool call, best of ${ROUNDS} interleaved rounds; log on = eventLog: true`);
const dir = mkdtempSync(join(tmpdir(), 'koagent-bench-log-'));
let server: TestPostgres | undefined;
const rows: Row[] = [];
const rates: [string, number, number][] = [];
try {
  const stores: [string, () => Promise<EventLogStore>][] = [
    ['memoryStore()', async () => memoryStore()],
    ['sqliteStore()', async () => sqliteStore({ path: join(dir, 'log.db') })],
    ["sqliteStore({ synchronous: 'normal' })", async () => sqliteStore({ path: join(dir, 'log-normal.db'), synchronous: 'normal' })],
  ];
  if (process.env.BENCH_POSTGRES !== '0') {
    try {
      server = await startPostgres();
      const url = await server.database();
      stores.push(['postgresStore()', () => postgresStore({ connectionString: url })]);
    } catch (error) {
      console.log(`postgresStore(): skipped, the embedded PostgreSQL server did not start: ${(error as Error).message}`);
    }
  }
  // BENCH_ONLY=sqlite (a name's start) measures those stores alone.
  for (const [name, open] of stores.filter(([n]) => process.env.BENCH_ONLY === undefined || n.startsWith(process.env.BENCH_ONLY!))) {
    const store = await open();
    try {
      rows.push(...(await perStep(name, store, name.startsWith('postgres') ? Math.max(3, Math.round(ROUNDS / 8)) : ROUNDS)));
      rates.push([name, await eventsPerSecond(store, 1, 1000), await eventsPerSecond(store, 50, 1000)]);
    } finally {
      await store.close();
    }
  }
} finally {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log('\nevents a store takes, appended to one run by one writer (a text delta of about 120 bytes each):');
for (const [name, one, fifty] of rates) console.log(`${name.padEnd(40)} ${Math.round(one).toLocaleString('en').padStart(9)} events/s one at a time   ${Math.round(fifty).toLocaleString('en').padStart(10)} events/s 50 at a time`);
console.log('');
printRows(rows);
