// npm run bench (its last part): what a hook costs when it runs in the sandbox (koagent/sandbox)
// rather than in-process, warm, per call, with the engine on a worker thread (the default) and
// inline on the host's thread: the hook method alone (a tool call's context in, an outcome out),
// and inside agent runs (per tool call, the loop around it included). Also what a sandbox takes
// to start, which `sandboxedHooks()` pays once, not per call, and the longest the host's event
// loop waits while a sandboxed hook loops until its timeoutMs.
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type ModelProvider, type ToolContext } from '../src/index.js';
import type { AgentHook } from '../src/hooks.js';
import { sandboxedHooks } from '../src/sandbox.js';

const SOURCE = `export default { name: 'tag', postToolCall(ctx, settled) { return { result: ctx.toolName + ':' + settled.result }; } };`;
const inProcess: AgentHook = { name: 'tag', postToolCall: (ctx, settled) => ({ result: `${ctx.toolName}:${String(settled.result)}` }) };

async function started(thread: 'worker' | 'inline') {
  const t0 = performance.now();
  const made = await sandboxedHooks(SOURCE, { thread });
  return { made, hook: made.hooks[0] as AgentHook, startMs: performance.now() - t0 };
}
const worker = await started('worker');
const inline = await started('inline');

// A tool call's context as the hook layer passes it: the fields a hook reads, a short transcript.
const ctx = {
  agentId: 'a1', agentName: 'bench', runId: 'r1', sessionId: 's1', metadata: {}, toolCallId: 'c1', toolName: 'add', args: { a: 1, b: 2 },
  toolCall: { id: 'c1', name: 'add', args: { a: 1, b: 2 } }, resumedAfterApproval: false, step: 1, idempotencyKey: 'k1',
  messages: [{ role: 'user', content: 'go' }], state: {}, setHookState() {},
} as unknown as ToolContext;

async function perCall(hook: AgentHook, calls: number): Promise<number> {
  for (let i = 0; i < 500; i++) await hook.postToolCall!(ctx, { result: i });
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) await hook.postToolCall!(ctx, { result: i });
    best = Math.min(best, ((performance.now() - start) * 1000) / calls);
  }
  return best;
}

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
const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

async function perStep(hooks: AgentHook[], steps: number): Promise<number> {
  const once = () => createAgent({ model: scripted(steps), maxSteps: steps + 1, tools: [add], hooks }).run('go');
  for (let i = 0; i < 3; i++) await once();
  let best = Infinity;
  for (let round = 0; round < 7; round++) {
    const start = performance.now();
    await once();
    best = Math.min(best, ((performance.now() - start) * 1000) / steps);
  }
  return best;
}

/** The longest gap between the host's 1 ms ticks while a sandboxed hook loops until its deadline. */
async function longestTickGap(thread: 'worker' | 'inline', timeoutMs: number): Promise<number> {
  const { hooks, close } = await sandboxedHooks("export default { name: 'spin', preToolCall() { for (;;) {} } };", { thread, timeoutMs });
  let last = performance.now();
  let longest = 0;
  const interval = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await Promise.resolve((hooks[0] as AgentHook).preToolCall!(ctx)).catch(() => undefined);
  clearInterval(interval);
  close();
  return Math.max(longest, performance.now() - last);
}

const CALLS = 5000;
const STEPS = 50;
const LOOP_TIMEOUT_MS = 200;
const callIn = await perCall(inProcess, CALLS);
const [callWorker, callInline] = [await perCall(worker.hook, CALLS), await perCall(inline.hook, CALLS)];
const [stepNone, stepIn, stepWorker, stepInline] = [await perStep([], STEPS), await perStep([inProcess], STEPS), await perStep([worker.hook], STEPS), await perStep([inline.hook], STEPS)];
const [gapWorker, gapInline] = [await longestTickGap('worker', LOOP_TIMEOUT_MS), await longestTickGap('inline', LOOP_TIMEOUT_MS)];
const row = (label: string, value: number, unit: string, ratio?: number) => console.log(`${label.padEnd(60)} ${value.toFixed(unit === 'ms' ? 1 : 2).padStart(9)} ${unit}${ratio === undefined ? '' : `  (${ratio.toFixed(0)}× in-process)`}`);
console.log(`\nsandboxed hooks (koagent/sandbox, quickjs-emscripten), warm, best of rounds (Node ${process.version})`);
row('postToolCall alone, in-process', callIn, 'µs/call');
row('postToolCall alone, sandboxed, worker thread', callWorker, 'µs/call', callWorker / callIn);
row('postToolCall alone, sandboxed, inline', callInline, 'µs/call', callInline / callIn);
row('agent step (model reply + one tool call), no hook', stepNone, 'µs/step');
row('agent step, the hook in-process', stepIn, 'µs/step');
row('agent step, the hook sandboxed, worker thread', stepWorker, 'µs/step');
row('agent step, the hook sandboxed, inline', stepInline, 'µs/step');
row('a sandbox\'s start (sandboxedHooks, once), worker', worker.startMs, 'ms');
row('a sandbox\'s start (sandboxedHooks, once), inline', inline.startMs, 'ms');
row(`longest host tick gap, a hook loops (timeoutMs ${LOOP_TIMEOUT_MS}), worker`, gapWorker, 'ms');
row(`longest host tick gap, a hook loops (timeoutMs ${LOOP_TIMEOUT_MS}), inline`, gapInline, 'ms');
worker.made.close();
inline.made.close();
