// npm run bench (replay): how fast a stored run replays (each reply and tool result from its
// record, through the agent's layers) against the same run made live on mockModel, in steps per
// second, interleaved in one process; and what recording the world adds to a traced run.
import { z } from 'zod';
import { createAgent, defineTool, type Middleware, type RunState } from '../src/index.js';
import { mockModel, type MockReply } from '../src/testing/index.js';
import { replay } from '../src/replay.js';

const S = Number(process.env.BENCH_REPLAY_STEPS ?? 50);
const ROUNDS = Math.max(10, Math.round(Number(process.env.BENCH_ROUNDS ?? 1000) / 10));
const input = z.object({ a: z.number(), b: z.number() });
const add = defineTool({ name: 'add', description: 'Add', input, execute: ({ a, b }) => ({ sum: a + b }) });
const script: MockReply[] = [...Array.from({ length: S }, (_, i) => ({ toolCalls: [{ id: `c${i + 1}`, name: 'add', args: { a: i, b: 1 } }] })), 'done'];
const noop = (i: number): Middleware => ({ name: `noop${i}`, model: (_ctx, next) => next(), tool: (_ctx, next) => next() });

const agentOf = (layerTrace: boolean) => createAgent({ model: mockModel(script), maxSteps: S + 2, tools: [add], middleware: [noop(0), noop(1)], layerTrace });

async function live(layerTrace: boolean): Promise<RunState> {
  const result = await agentOf(layerTrace).run('go');
  if (result.usage.toolCalls !== S) throw new Error('bench: wrong number of tool calls');
  return result.state;
}

const stored = await live(true);
const replayer = agentOf(true);
async function replayed(): Promise<void> {
  const report = await replay(replayer, stored);
  if (!report.same) throw new Error(`bench: the replay differs: ${report.divergence?.reason ?? 'its trace or transcript'}`);
}

interface Variant { label: string; fn: () => Promise<unknown>; best: number }
const variants: Variant[] = [
  { label: 'live on mockModel, no layer trace', fn: () => live(false), best: Infinity },
  { label: 'live on mockModel, layer trace (records the world)', fn: () => live(true), best: Infinity },
  { label: 'replay of that run (no model, no tool)', fn: replayed, best: Infinity },
];
for (const v of variants) for (let i = 0; i < 3; i++) await v.fn();
for (let r = 0; r < ROUNDS; r++) {
  for (const v of variants) {
    const t0 = performance.now();
    await v.fn();
    v.best = Math.min(v.best, performance.now() - t0);
  }
}
const perSecond = (v: Variant) => ((S + 1) * 1000) / v.best;
console.log(`\nreplay: a run of ${S + 1} steps (${S} with a tool call), 2 layers, best of ${ROUNDS} interleaved rounds, in memory`);
for (const v of variants) console.log(`${v.label.padEnd(52)} ${perSecond(v).toFixed(0).padStart(8)} steps/s  ${((v.best * 1000) / (S + 1)).toFixed(1).padStart(7)} µs/step`);
console.log(`${'replay / live (layer trace), steps per second'.padEnd(52)} ${(perSecond(variants[2]) / perSecond(variants[1])).toFixed(2).padStart(8)}×`);
console.log(`${'live: layer trace and record / none, time per step'.padEnd(52)} ${(variants[1].best / variants[0].best).toFixed(2).padStart(8)}×`);
