// npm run bench (layer trace): what recording the layer trace costs per step, against the same
// agent without it. Off, the stacks are the ones built without the feature; the two "off" rows
// (no option, and layerTrace: false) measure the same code and differ only by noise.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type Middleware, type ModelProvider } from '../src/index.js';
import { sqliteStore } from '../src/sqlite.js';
import type { RunStore } from '../src/store.js';

const input = z.object({ a: z.number(), b: z.number() });

function scripted(steps: number): ModelProvider {
  let n = 0;
  return {
    name: 'scripted',
    async generate(): Promise<GenerateResult> {
      n++;
      if (n > steps) return { message: { role: 'assistant', content: 'done' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
      return { message: { role: 'assistant', content: '', toolCalls: [{ id: `c${n}`, name: 'add', args: { a: n, b: 1 } }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' };
    },
  };
}

const noop = (i: number): Middleware => ({ name: `noop${i}`, model: (_ctx, next) => next(), tool: (_ctx, next) => next() });

async function run(steps: number, layers: number, layerTrace: boolean | undefined, store?: RunStore): Promise<void> {
  const agent = createAgent({
    model: scripted(steps), maxSteps: steps + 1, tools: [defineTool({ name: 'add', description: 'Add', input, execute: ({ a, b }) => a + b })],
    middleware: Array.from({ length: layers }, (_, i) => noop(i)), ...(layerTrace === undefined ? {} : { layerTrace }), ...(store ? { store } : {}),
  });
  const result = await agent.run('go');
  if (result.usage.toolCalls !== steps) throw new Error('bench: wrong number of tool calls');
}

interface Variant { label: string; fn: () => Promise<void>; steps: number; best: number }

async function measure(variants: Variant[], rounds: number): Promise<void> {
  for (const v of variants) for (let i = 0; i < 5; i++) await v.fn();
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      const t0 = performance.now();
      await v.fn();
      v.best = Math.min(v.best, ((performance.now() - t0) * 1000) / v.steps);
    }
  }
}

const S = Number(process.env.BENCH_STEPS ?? 200);
const ROUNDS = Math.max(10, Math.round(Number(process.env.BENCH_ROUNDS ?? 1000) / 5));
const v = (label: string, steps: number, fn: () => Promise<void>): Variant => ({ label, fn, steps, best: Infinity });
const off = [0, 1, 10].map((n) => v(`${n} layers, no layerTrace option`, S, () => run(S, n, undefined)));
const offFalse = [0, 1, 10].map((n) => v(`${n} layers, layerTrace: false`, S, () => run(S, n, false)));
const on = [0, 1, 10].map((n) => v(`${n} layers, layerTrace: true`, S, () => run(S, n, true)));

console.log(`\nlayer trace: S = ${S} steps (one model call and one tool call each), best of ${ROUNDS} interleaved rounds, in memory`);
await measure([...off, ...offFalse, ...on], ROUNDS);
for (const x of [...off, ...offFalse, ...on]) console.log(`${x.label.padEnd(40)} ${x.best.toFixed(2).padStart(8)} µs/step`);
for (let i = 0; i < 3; i++) {
  console.log(`${`${[0, 1, 10][i]} layers: on − off`.padEnd(40)} ${(on[i].best - off[i].best).toFixed(2).padStart(8)} µs/step   off(false) / off(none) ${(offFalse[i].best / off[i].best).toFixed(2)}`);
}

// With a SQLite store: the trace is hook state, so each step's checkpoint writes it again.
const dir = mkdtempSync(join(tmpdir(), 'koagent-bench-trace-'));
let files = 0;
const stored = (trace: boolean, steps: number) => v(`sqliteStore, 1 layer, layerTrace ${trace}, S = ${steps}`, steps, () => withStore((store) => run(steps, 1, trace, store)));
async function withStore(fn: (store: RunStore) => Promise<void>): Promise<void> {
  const store = sqliteStore({ path: join(dir, `t-${++files}.db`), synchronous: 'normal' });
  await fn(store);
  await store.close();
}
async function bytesPerStep(trace: boolean, steps: number): Promise<number> {
  const store = sqliteStore({ path: join(dir, `b-${++files}.db`), synchronous: 'normal' });
  await run(steps, 1, trace, store);
  const { bytes } = store.stats;
  await store.close();
  return bytes / steps;
}
const storedVariants = [stored(false, 20), stored(true, 20), stored(false, S), stored(true, S)];
await measure(storedVariants, Math.max(5, Math.round(ROUNDS / 20)));
for (const x of storedVariants) console.log(`${x.label.padEnd(48)} ${x.best.toFixed(2).padStart(8)} µs/step`);
for (const steps of [20, S]) console.log(`sqliteStore bytes written per step at S = ${steps}: off ${(await bytesPerStep(false, steps)).toFixed(0)}, on ${(await bytesPerStep(true, steps)).toFixed(0)}`);
rmSync(dir, { recursive: true, force: true });
