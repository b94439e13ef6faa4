// npm run bench (its last part): what a hook costs when it runs in the sandbox (koagent/sandbox)
// rather than in-process, warm, per call: the hook method alone (a tool call's context in, an
// outcome out), and inside agent runs (per tool call, the loop around it included). Also what a
// sandbox takes to start, which one `sandboxedHooks()` pays once, not per call.
import { z } from 'zod';
import { createAgent, defineTool, type AgentHook, type GenerateResult, type ModelProvider, type ToolContext } from '../src/index.js';
import { sandboxedHooks } from '../src/sandbox.js';

const SOURCE = `export default { name: 'tag', postToolCall(ctx, settled) { return { result: ctx.toolName + ':' + settled.result }; } };`;
const inProcess: AgentHook = { name: 'tag', postToolCall: (ctx, settled) => ({ result: `${ctx.toolName}:${String(settled.result)}` }) };

const t0 = performance.now();
const sandboxed = await sandboxedHooks(SOURCE);
const startMs = performance.now() - t0;
const sandboxedHook = sandboxed.hooks[0] as AgentHook;

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

const CALLS = 5000;
const STEPS = 50;
const [callIn, callSandboxed] = [await perCall(inProcess, CALLS), await perCall(sandboxedHook, CALLS)];
const [stepNone, stepIn, stepSandboxed] = [await perStep([], STEPS), await perStep([inProcess], STEPS), await perStep([sandboxedHook], STEPS)];
console.log(`\nsandboxed hooks (koagent/sandbox, quickjs-emscripten), warm, best of rounds (Node ${process.version})`);
console.log(`${'postToolCall alone, in-process'.padEnd(50)} ${callIn.toFixed(2).padStart(8)} µs/call`);
console.log(`${'postToolCall alone, sandboxed'.padEnd(50)} ${callSandboxed.toFixed(2).padStart(8)} µs/call`);
console.log(`${'agent step (model reply + one tool call), no hook'.padEnd(50)} ${stepNone.toFixed(2).padStart(8)} µs/step`);
console.log(`${'agent step, the hook in-process'.padEnd(50)} ${stepIn.toFixed(2).padStart(8)} µs/step`);
console.log(`${'agent step, the hook sandboxed'.padEnd(50)} ${stepSandboxed.toFixed(2).padStart(8)} µs/step`);
console.log(`${'a sandbox\'s start (sandboxedHooks, once)'.padEnd(50)} ${startMs.toFixed(1).padStart(8)} ms`);
sandboxed.close();
