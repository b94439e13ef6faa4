// npm run bench: the cost of koagent's loop and layers, as ratios measured in one process.
// Every variant does the same essential work per step: one model reply with one tool call,
// the arguments checked with the same zod schema, the same two messages appended.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koaCompose from 'koa-compose';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type GenerateOptions, type GenerateResult, type Middleware, type ModelProvider } from '../src/index.js';
import type { RunStore } from '../src/store.js';
import { sqliteStore } from '../src/sqlite.js';
import { baseline, BEFORE_ONE_WAY_ONION } from './baseline.js';
import { benchStores } from './stores.js';

const input = z.object({ a: z.number(), b: z.number() });
const add = (args: { a: number; b: number }) => args.a + args.b;
// The tool's JSON schema, made once, as koagent makes it once per zod schema (about 11 µs each
// time, a sixth of a 200-step floor run if the floor paid it per run and koagent did not).
const addSpec = { name: 'add', description: 'Add', parameters: z.toJSONSchema(input, { io: 'input' }) };

/** Call ids handed out so far by providers asked for unique ids (as real models write them). */
let issued = 0;

/**
 * A provider that asks for the tool `steps` times, then answers. No copies, no snapshots. Its
 * call ids are `c1`, `c2`, … in every run, unless `unique`: then no id repeats in the process.
 */
function scripted(steps: number, unique = false): ModelProvider {
  let n = 0;
  return {
    name: 'scripted',
    async generate(): Promise<GenerateResult> {
      n++;
      if (n > steps) return { message: { role: 'assistant', content: 'done' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
      return {
        message: { role: 'assistant', content: '', toolCalls: [{ id: unique ? `call_${++issued}` : `c${n}`, name: 'add', args: { a: n, b: 1 } }] },
        usage: { inputTokens: 1, outputTokens: 1 },
        finishReason: 'tool_calls',
      };
    },
  };
}

/** A layer that only passes the call on: `return next()`. */
const noop = (i: number): Middleware => ({ name: `noop${i}`, model: (_ctx, next) => next(), tool: (_ctx, next) => next() });

/** The layer as users write it: await the inner outcome, look at it, return it. */
async function awaitingLayer<T>(_ctx: unknown, next: () => Promise<T>): Promise<T> {
  const out = await next();
  return out;
}
const awaiting = (i: number): Middleware => ({ name: `awaiting${i}`, model: awaitingLayer, tool: awaitingLayer });

/** What a koagent variant is built with: this checkout's package root, or the baseline commit's. */
type Koagent = Pick<typeof import('../src/index.js'), 'createAgent' | 'defineTool'>;
const current: Koagent = { createAgent, defineTool };

async function koagent(steps: number, layers: number, layer: (i: number) => Middleware = noop, store?: RunStore, unique = false, lib: Koagent = current): Promise<void> {
  const { createAgent, defineTool } = lib;
  const agent = createAgent({ model: scripted(steps, unique), maxSteps: steps + 1, tools: [defineTool({ name: 'add', description: 'Add', input, execute: add })], ...(store ? { store } : {}) });
  for (let i = 0; i < layers; i++) agent.use(layer(i));
  const result = await agent.run('go');
  if (result.usage.toolCalls !== steps) throw new Error('bench: wrong number of tool calls');
}

type Msg = { role: string; content: unknown; toolCallId?: string; name?: string };
type ModelCtx = { request: GenerateOptions };
type ToolCtx = { args: unknown };
/** What the hand-written tool work returns through its stack, as koagent's returns an outcome. */
type ToolOut = { content: string };

/**
 * What a layer needs, at the least, to be called again: a `next()` of its own per call, which
 * dispatches the rest of the stack again (through koa-compose) once its first call is made. No
 * check, no blame, no error for a concurrent call: the floor under any re-entrant layer.
 */
function reentrant<C>(layers: readonly ((ctx: C, next: () => Promise<unknown>) => unknown)[], work: (ctx: C) => Promise<unknown>): (ctx: C) => Promise<unknown> {
  const chain: ((ctx: C, next: () => Promise<unknown>) => unknown)[] = [];
  const rests: ((ctx: C) => Promise<unknown>)[] = [];
  layers.forEach((fn, i) => chain.push((ctx, koaNext) => {
    let called = false;
    const next = () => {
      if (called) return (rests[i] ??= koaCompose(chain.slice(i + 1)))(ctx);
      called = true;
      return koaNext();
    };
    return fn(ctx, next);
  }));
  chain.push(work);
  return koaCompose(chain);
}

// The floor must really be re-entrant: a layer that calls next() twice runs the work twice.
{
  let runs = 0;
  await reentrant<unknown>([async (_ctx, next) => { await next(); return next(); }], async () => { runs++; })({});
  if (runs !== 2) throw new Error('bench: the re-entrant wrapper did not dispatch the rest again');
}

/** The kind of layer around the hand-written loop's work. */
type HandLayer = 'pass-through' | 'awaiting' | 're-entrant';

/**
 * The floor: the same work, hand-written, no framework. With `layers` > 0, the model and tool
 * work are wrapped in that many koa-compose layers (raw koa-compose's own cost): pass-through
 * ones, the awaiting layer users write, or pass-through ones each in the least re-entrant wrapper.
 * Each stack returns what its work produced (the reply, the tool's content), as an agent's
 * stacks return the reply and the outcome: a promise resolved with an object costs a lookup of
 * its `then`, which every awaiting layer pays on both sides.
 */
async function handWritten(steps: number, layers: number, kind: HandLayer = 'pass-through', unique = false): Promise<void> {
  const provider = scripted(steps, unique);
  const tools = [addSpec];
  const messages: Msg[] = [{ role: 'user', content: 'go' }];
  const modelWork = async (ctx: ModelCtx): Promise<GenerateResult> => {
    const reply = await provider.generate(ctx.request);
    return reply;
  };
  const toolWork = async (ctx: ToolCtx): Promise<ToolOut> => {
    const parsed = input.safeParse(ctx.args);
    return { content: parsed.success ? JSON.stringify(add(parsed.data)) : 'invalid' };
  };
  const noops = Array.from({ length: layers }, () => (kind === 'awaiting' ? awaitingLayer : (_ctx: unknown, next: () => Promise<unknown>) => next()));
  // koa-compose's types say a stack resolves to nothing; it resolves to what the layers return.
  const stack = <C, R>(work: (ctx: C) => Promise<R>) =>
    (layers === 0 ? work : kind === 're-entrant' ? reentrant<C>(noops, work) : koaCompose<C>([...noops, work])) as (ctx: C) => Promise<R>;
  const callModel = stack(modelWork);
  const callTool = stack(toolWork);
  for (;;) {
    const { message } = await callModel({ request: { messages: messages as GenerateOptions['messages'], tools } });
    messages.push(message);
    if (!message.toolCalls?.length) break;
    for (const call of message.toolCalls) {
      const { content } = await callTool({ args: call.args });
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content });
    }
  }
}

interface Variant { label: string; steps: number; fn: (steps: number) => Promise<void>; best: number }

/**
 * Best µs per step of each variant. Rounds are interleaved (every variant once per round), so
 * a noisy moment of the machine hits all of them alike; the best of the rounds is the cost of
 * the code itself rather than of the noise.
 */
async function measure(variants: Variant[], rounds: number): Promise<void> {
  for (const v of variants) for (let i = 0; i < 5; i++) await v.fn(v.steps); // warm up the JIT
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      const t0 = performance.now();
      await v.fn(v.steps);
      v.best = Math.min(v.best, ((performance.now() - t0) * 1000) / v.steps);
    }
  }
}

const S = Number(process.env.BENCH_STEPS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1000);
const variant = (label: string, steps: number, fn: (steps: number) => Promise<void>): Variant => ({ label, steps, fn, best: Infinity });
const floor = variant('hand-written loop (floor)', S, (s) => handWritten(s, 0));
const koa10 = variant('hand-written + 10 raw koa-compose layers', S, (s) => handWritten(s, 10));
const zero = variant('koagent, 0 layers', S, (s) => koagent(s, 0));
const one = variant('koagent, 1 no-op layer on model and tool', S, (s) => koagent(s, 1));
const koa1 = variant('hand-written + 1 raw koa-compose layer', S, (s) => handWritten(s, 1));
// The floor under any re-entrant layer, against raw koa-compose measured again beside it.
const koa1Again = variant('hand-written + 1 raw koa-compose layer (again)', S, (s) => handWritten(s, 1));
const koa10Again = variant('hand-written + 10 raw koa-compose layers (again)', S, (s) => handWritten(s, 10));
const reentrant1 = variant('hand-written + 1 re-entrant koa-compose layer', S, (s) => handWritten(s, 1, 're-entrant'));
const reentrant10 = variant('hand-written + 10 re-entrant koa-compose layers', S, (s) => handWritten(s, 10, 're-entrant'));
const ten = variant('koagent, 10 no-op layers on model and tool', S, (s) => koagent(s, 10));
const awaitOne = variant('koagent, 1 awaiting layer on model and tool', S, (s) => koagent(s, 1, awaiting));
const awaitTen = variant('koagent, 10 awaiting layers on model and tool', S, (s) => koagent(s, 10, awaiting));
const koaAwaitOne = variant('hand-written + 1 awaiting koa-compose layer', S, (s) => handWritten(s, 1, 'awaiting'));
const koaAwaitTen = variant('hand-written + 10 awaiting koa-compose layers', S, (s) => handWritten(s, 10, 'awaiting'));
// The loop with call ids that never repeat, as real models write them: each is a new call the ledger lists and finds.
const uniqueFloor = variant('hand-written loop, unique call ids', S, (s) => handWritten(s, 0, 'pass-through', true));
const uniqueZero = variant('koagent, 0 layers, unique call ids', S, (s) => koagent(s, 0, noop, undefined, true));
// The scaling pair is measured on its own, so the long runs' garbage does not weigh on the rest.
const small = variant(`koagent, 10 layers, S = ${S}`, S, (s) => koagent(s, 10));
const big = variant(`koagent, 10 layers, S = ${S * 10}`, S * 10, (s) => koagent(s, 10));

// The same agents on the baseline commit, measured beside today's in the same rounds.
const base = await baseline();
const before = (v: Variant, fn: (s: number) => Promise<void>): Variant => variant(`${v.label} (before)`, v.steps, fn);
const pairs: [Variant, Variant][] = base === undefined ? [] : [
  [zero, before(zero, (s) => koagent(s, 0, noop, undefined, false, base))],
  [one, before(one, (s) => koagent(s, 1, noop, undefined, false, base))],
  [ten, before(ten, (s) => koagent(s, 10, noop, undefined, false, base))],
  [awaitOne, before(awaitOne, (s) => koagent(s, 1, awaiting, undefined, false, base))],
  [awaitTen, before(awaitTen, (s) => koagent(s, 10, awaiting, undefined, false, base))],
];

console.log(`koagent bench: S = ${S} model steps with one tool call each, best of ${ROUNDS} interleaved rounds (Node ${process.version})\n`);
await measure([floor, koa1, koa10, zero, one, ten], ROUNDS);
// Today's and the baseline's agents, interleaved: what the redesign changed a step's cost by.
const beside = pairs.map(([now, then]) => [variant(now.label, now.steps, now.fn), then] as const);
if (beside.length > 0) await measure(beside.flat(), ROUNDS);
// Measured after the main group, so it leaves that group's figures alone.
await measure([koa1Again, koa10Again, reentrant1, reentrant10], ROUNDS);
await measure([koaAwaitOne, koaAwaitTen, awaitOne, awaitTen], ROUNDS);
await measure([uniqueFloor, uniqueZero], Math.max(10, Math.round(ROUNDS / 2)));
await measure([small, big], Math.max(10, Math.round(ROUNDS / 2)));
for (const v of [floor, koa1, koa10, zero, one, ten, koa1Again, koa10Again, reentrant1, reentrant10, koaAwaitOne, koaAwaitTen, awaitOne, awaitTen, uniqueFloor, uniqueZero, small, big]) console.log(`${v.label.padEnd(48)} ${v.best.toFixed(2).padStart(7)} µs/step`);

// The marginal cost of a layer: from 1 to 10 layers on each of the two stacks (18 layer calls a
// step), so what any layer at all costs once (e.g. copying tool arguments for layers to edit)
// is not spread over the layers.
const perLayer = (ten.best - one.best) / 18;
const perKoaLayer = (koa10.best - koa1.best) / 18;
const perAwaiting = (awaitTen.best - awaitOne.best) / 18;
const perKoaAwaiting = (koaAwaitTen.best - koaAwaitOne.best) / 18;
const perReentrant = (reentrant10.best - reentrant1.best) / 18;
const perKoaAgain = (koa10Again.best - koa1Again.best) / 18;
const rows: [string, number, string, boolean][] = [
  ['per-layer cost / raw koa-compose per-layer cost', perLayer / perKoaLayer, '≤ 3', perLayer / perKoaLayer <= 3],
  ['awaiting layer / koa-compose awaiting layer', perAwaiting / perKoaAwaiting, '≤ 2.5', perAwaiting / perKoaAwaiting <= 2.5],
  ['0-layer loop / hand-written floor', zero.best / floor.best, '≤ 4', zero.best / floor.best <= 4],
  ['10 layers, µs per step', ten.best, '≤ 5', ten.best <= 5],
  [`µs/step at S = ${S * 10} / at S = ${S}`, big.best / small.best, '≤ 1.2', big.best / small.best <= 1.2],
];
console.log(`\none pass-through layer call: koagent ${(perLayer * 1000).toFixed(0)} ns, raw koa-compose ${(perKoaLayer * 1000).toFixed(0)} ns`);
console.log(`in the least re-entrant wrapper: ${(perReentrant * 1000).toFixed(0)} ns, raw koa-compose beside it ${(perKoaAgain * 1000).toFixed(0)} ns`);
console.log(`one awaiting layer call: koagent ${(perAwaiting * 1000).toFixed(0)} ns, raw koa-compose ${(perKoaAwaiting * 1000).toFixed(0)} ns\n`);
for (const [what, value, target, ok] of rows) console.log(`${what.padEnd(50)} ${value.toFixed(2).padStart(6)}  target ${target.padEnd(6)} ${ok ? 'met' : 'NOT MET'}`);
// For reference, no target: the part of the per-layer ratio that any re-entrant layer on koa-compose pays,
// and the 0-layer ratio when no call id repeats in the process (what new call ids cost a long-running process).
console.log(`${'least re-entrant wrapper / raw koa-compose'.padEnd(50)} ${(perReentrant / perKoaAgain).toFixed(2).padStart(6)}  for reference`);
console.log(`${'0-layer loop / floor, unique call ids'.padEnd(50)} ${(uniqueZero.best / uniqueFloor.best).toFixed(2).padStart(6)}  for reference`);
if (beside.length > 0) {
  console.log(`\nbeside the baseline commit ${(process.env.BENCH_BASE ?? BEFORE_ONE_WAY_ONION).slice(0, 12)}, interleaved (µs/step now, before; target: no step dearer than before, within 5 % noise):`);
  for (const [now, then] of beside) {
    const ratio = now.best / then.best;
    console.log(`${now.label.padEnd(48)} ${now.best.toFixed(2).padStart(7)} ${then.best.toFixed(2).padStart(7)}  now/before ${ratio.toFixed(2)}  ${ratio <= 1.05 ? 'met' : 'NOT MET'}`);
  }
}

// Durable runs: each store against its database's floor (bench/stores.ts).
await benchStores({
  steps: S,
  rounds: ROUNDS,
  run: (steps, store) => koagent(steps, 0, noop, store),
  async time(fns, steps, rounds) {
    const variants = Object.entries(fns).map(([label, fn]) => variant(label, steps, fn));
    await measure(variants, rounds);
    return Object.fromEntries(variants.map((v) => [v.label, v.best]));
  },
});

/** Bytes a run of `steps` steps writes to a fresh store, per step. */
async function bytesPerStep(make: () => RunStore, steps: number): Promise<number> {
  const store = make();
  await koagent(steps, 0, noop, store);
  const { bytes } = store.stats;
  await store.close();
  return bytes / steps;
}
const dir = mkdtempSync(join(tmpdir(), 'koagent-bench-'));
let files = 0;
const stores: [string, () => RunStore][] = [['memoryStore()', () => memoryStore()], ['sqliteStore()', () => sqliteStore({ path: join(dir, `bytes-${++files}.db`) })]];
console.log('');
const flat: [string, number][] = [];
for (const [name, make] of stores) {
  const small = await bytesPerStep(make, S);
  const big = await bytesPerStep(make, S * 10);
  console.log(`${name.padEnd(16)} bytes written per step: ${small.toFixed(0)} at S = ${S}, ${big.toFixed(0)} at S = ${S * 10}`);
  flat.push([`${name} bytes/step at S = ${S * 10} / at S = ${S}`, big / small]);
}
rmSync(dir, { recursive: true, force: true });
console.log('');
for (const [what, ratio] of flat) console.log(`${what.padEnd(60)} ${ratio.toFixed(2).padStart(6)}  target ≤ 1.2    ${ratio <= 1.2 ? 'met' : 'NOT MET'}`);
