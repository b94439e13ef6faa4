// npm run bench (middleware part): what the built-in middleware cost per step. Every variant runs
// the same agent — a scripted model that asks for one trivial tool call a step, S steps, then
// answers — with a list of built-ins installed, against the same agent with none. No variant
// waits on anything: what is measured is the layers' own work, not a model's or a network's.
// To add a built-in, add a line to VARIANTS.
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type Middleware, type ModelProvider } from '../src/index.js';
import { compactionMiddleware, contextEditingMiddleware, costBudgetMiddleware, guardrailsMiddleware, loopDetectionMiddleware, mediaStoreMiddleware, modelFallbackMiddleware, piiRedactionMiddleware, promptCachingMiddleware, rateLimitMiddleware, responseCacheMiddleware, retryMiddleware, timeoutMiddleware, todoListMiddleware, toolCacheMiddleware, toolCallLimitMiddleware, toolEmulatorMiddleware, toolSelectorMiddleware, type MediaStore } from '../src/middleware.js';

const reply = (message: GenerateResult['message']): GenerateResult => ({ message, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: message.toolCalls ? 'tool_calls' : 'stop' });

/** One tool call a step for `steps` steps, then an answer. With `plan`, the first step also writes a todo list of three items. */
function scripted(steps: number, plan = false): ModelProvider {
  let n = 0;
  return {
    name: 'scripted',
    modelId: 'bench-model',
    async generate(): Promise<GenerateResult> {
      n++;
      if (n > steps) return reply({ role: 'assistant', content: 'done' });
      const add = { id: `c${n}`, name: 'add', args: { a: n, b: 1 } };
      if (!plan || n > 1) return reply({ role: 'assistant', content: '', toolCalls: [add] });
      const todos = [{ content: 'Add the numbers', status: 'in_progress' }, { content: 'Check the sum', status: 'pending' }, { content: 'Report it', status: 'pending' }];
      return reply({ role: 'assistant', content: '', toolCalls: [{ id: 'plan', name: 'write_todos', args: { todos } }, add] });
    },
  };
}

/** The tool selector's model: always the one tool. */
const selector: ModelProvider = { name: 'selector', generate: async () => reply({ role: 'assistant', content: '{"tools": ["add"]}' }) };

/** A media store in memory (the bench's transcript holds no media: the layer only scans). */
function memoryMedia(): MediaStore {
  const data = new Map<string, string>();
  return { put: async ({ data: d }) => { const key = `k${data.size}`; data.set(key, d); return key; }, get: async (key) => data.get(key)! };
}

const input = z.object({ a: z.number(), b: z.number() });
const add = defineTool({ name: 'add', description: 'Add', input, execute: ({ a, b }) => a + b });

interface Setup {
  label: string;
  /** A fresh list per run: middleware that keep state per instance start empty each time. */
  middleware: () => Middleware[];
  /** The model writes a todo list at the first step. */
  plan?: boolean;
}

// Budgets no run of the bench reaches: the layers check them every step, and never act.
const builtIns: Record<string, () => Middleware> = {
  retry: () => retryMiddleware(),
  timeout: () => timeoutMiddleware({ model: 60_000, tool: 60_000 }),
  compaction: () => compactionMiddleware({ maxTokens: 10_000_000 }),
  'media store': () => mediaStoreMiddleware({ store: memoryMedia() }),
  // minTools 1, so it selects (once: the run is one user turn) rather than skipping.
  'tool selector': () => toolSelectorMiddleware({ model: selector, minTools: 1 }),
  'todo list': () => todoListMiddleware(),
  'tool-call limit': () => toolCallLimitMiddleware({ perRun: { total: 1_000_000 } }),
  'context editing': () => contextEditingMiddleware({ triggerTokens: 10_000_000 }),
  // Every call has new arguments: the window is scanned and written, and finds no loop.
  'loop detection': () => loopDetectionMiddleware(),
  'rate limit': () => rateLimitMiddleware({ requestsPerMinute: 1e9, tokensPerMinute: 1e12 }),
  // Every request is new (the transcript grows): a hash of the whole request and a write per step.
  'response cache': () => responseCacheMiddleware(),
  // New arguments every call: a miss and a write each.
  'tool cache': () => toolCacheMiddleware({ tools: ['add'] }),
  // The agent's model always answers: the backup is never asked.
  'model fallback': () => modelFallbackMiddleware({ models: [selector] }),
  'cost budget': () => costBudgetMiddleware({ prices: { 'bench-model': { input: 1, output: 2 } }, runBudget: 1_000 }),
  'prompt caching': () => promptCachingMiddleware(),
  // The default detectors over the input, each reply, each call's arguments and its result.
  'PII redaction': () => piiRedactionMiddleware(),
  guardrails: () => guardrailsMiddleware({ input: [{ name: 'pass', check: () => undefined }], output: [{ name: 'pass', check: () => undefined }] }),
  'tool emulator': () => toolEmulatorMiddleware({ tools: ['add'], emulate: ({ a, b }: { a: number; b: number }) => a + b }),
};
// All of them, in the order docs/built-in-middleware.md recommends, outermost first.
const ORDER = [
  'cost budget', 'guardrails', 'tool selector', 'context editing', 'compaction', 'media store', 'todo list',
  'loop detection', 'tool-call limit', 'tool cache', 'response cache', 'PII redaction', 'tool emulator',
  'prompt caching', 'retry', 'timeout', 'model fallback', 'rate limit',
];
const all = (): Middleware[] => ORDER.map((name) => builtIns[name]!());

const VARIANTS: Setup[] = [
  { label: 'no middleware', middleware: () => [] },
  ...Object.entries(builtIns).map(([label, make]) => ({ label, middleware: () => [make()] })),
  { label: 'todo list, with a list of 3 shown each step', middleware: () => [builtIns['todo list']!()], plan: true },
  { label: `all ${Object.keys(builtIns).length} above`, middleware: all, plan: true },
];

async function run(setup: Setup, steps: number): Promise<void> {
  const agent = createAgent({ model: scripted(steps, setup.plan), maxSteps: steps + 1, tools: [add], middleware: setup.middleware() });
  const result = await agent.run('go');
  if (result.status !== 'completed' || result.text !== 'done') throw new Error(`bench: ${setup.label} did not finish its run (${result.status})`);
}

interface Timed { setup: Setup; steps: number; best: number }

/** Best µs per step of each, in interleaved rounds (a noisy moment hits every variant alike). */
async function measure(timed: Timed[], rounds: number, warmups: number): Promise<void> {
  for (const t of timed) for (let i = 0; i < warmups; i++) await run(t.setup, t.steps); // warm up the JIT
  for (let r = 0; r < rounds; r++) {
    for (const t of timed) {
      const t0 = performance.now();
      await run(t.setup, t.steps);
      t.best = Math.min(t.best, ((performance.now() - t0) * 1000) / t.steps);
    }
  }
}

const S = Number(process.env.BENCH_STEPS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1000);
// The longer run is four times as long, with few rounds: some built-ins do work in the length of
// the transcript at each call (the response cache hashes the whole request), so it costs the
// square of its length, and it only tells whether a variant's cost per step grows.
const LONGER = 4;
const small = VARIANTS.map((setup): Timed => ({ setup, steps: S, best: Infinity }));
const big = VARIANTS.map((setup): Timed => ({ setup, steps: S * LONGER, best: Infinity }));
await measure(small, Math.max(10, Math.round(ROUNDS / 10)), 5);
await measure(big, Math.max(3, Math.round(ROUNDS / 200)), 1);

const none = small[0]!.best;
console.log(`\nbuilt-in middleware: S = ${S} steps with one tool call each, best of interleaved rounds; ratio to no middleware; growth to S = ${S * LONGER}`);
VARIANTS.forEach((setup, i) => {
  const at = small[i]!.best;
  const growth = big[i]!.best / at;
  console.log(`${setup.label.padEnd(46)} ${at.toFixed(2).padStart(7)} µs/step  ${(at / none).toFixed(2).padStart(5)}×  +${(at - none).toFixed(2).padStart(5)} µs  growth ${growth.toFixed(2)}`);
});
