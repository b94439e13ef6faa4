// Runs for the studio's tests, made by real agents (scripted models) into a real SQLite file.
// Their layer trace is written by hand, in the agreed record format, by a fixture layer that
// sits outermost and describes the layers inside it: what the runtime's own recording
// (`layerTrace: true`) will write.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createAgent, defineTool, type Agent, type Middleware } from '../../src/index.js';
import type { BaseContext } from '../../src/types.js';
import { sqliteStore } from '../../src/sqlite.js';
import type { RunStore } from '../../src/store.js';
import type { LayerTraceRecord, TracedCall, TracedLayer } from '../../src/studio/trace-types.js';
import { mockModel } from '../../src/testing/index.js';

/** A SQLite file in a temporary folder, and a way to remove it. */
export function tempStore(): { store: RunStore; path: string; dispose(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-studio-'));
  const path = join(dir, 'runs.db');
  const store = sqliteStore({ path });
  return { store, path, dispose: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
}

/** The changes between two argument objects, by top-level key, as the trace records them. */
function changes(before: Record<string, unknown>, after: Record<string, unknown>) {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key])).map((key) => ({
    path: `/args/${key}`, ...(key in before ? { before: before[key] } : {}), ...(key in after ? { after: after[key] } : {}),
  }));
}

/**
 * The fixture layer: outermost, it records each call with the layers `inner` names inside it
 * (their effects read from what the call looked like before and after them).
 */
export function handTrace(inner: string[], rewriter = inner[0]): Middleware {
  // A sub-agent's calls (the lead's layers run inside it too) wait here for the lead's call that ran them.
  const nested: TracedCall[] = [];
  const append = (ctx: BaseContext, call: TracedCall) => {
    if (ctx.subagent) return void nested.push({ ...call, agentPath: [ctx.subagent.name] });
    const record = (ctx.state.hookState['koagent.trace'] as LayerTraceRecord | undefined) ?? { version: 1, calls: [] };
    const children = call.kind === 'tool' ? nested.splice(0).map((child) => ({ ...child, parentCallId: call.id })) : [];
    ctx.setHookState('koagent.trace', { version: 1, calls: [...record.calls, call, ...children] });
  };
  const layer = (name: string, at: number, total: number, effects: TracedLayer['effects']): TracedLayer => ({ name, source: 'middleware', inAt: at, outAt: total - at, selfMs: 0.2, nextCalls: 1, effects });
  let modelCalls = 0;
  return {
    name: 'fixture-trace',
    async model(ctx, next) {
      const startedAt = Date.now();
      const reply = await next();
      const durationMs = Date.now() - startedAt;
      append(ctx, {
        id: `model:${ctx.state.steps}:${++modelCalls}`, kind: 'model', name: 'turn', step: ctx.state.steps, segment: ctx.state.segment,
        startedAt, durationMs, outcome: 'ok', layers: [{ ...layer('fixture-trace', 0, durationMs, []), source: 'builtin' }],
      });
      return reply;
    },
    async tool(ctx, next) {
      const startedAt = Date.now();
      const before = structuredClone(ctx.args) as Record<string, unknown>;
      const outcome = await next();
      const durationMs = Date.now() - startedAt;
      const after = ctx.args as Record<string, unknown>;
      const layers = inner.map((name, i) => layer(name, i * 0.1, durationMs, name === rewriter ? [{ kind: 'rewrote-args' as const, changes: changes(before, after) }] : []));
      append(ctx, {
        id: ctx.toolCallId, kind: 'tool', name: ctx.toolName, step: ctx.state.steps, segment: ctx.state.segment, startedAt, durationMs,
        outcome: outcome.requiresApproval ? 'approval' : 'ok', layers,
      });
      return outcome;
    },
  };
}

/** A layer that tidies a search query: trims it and lower-cases it (the rewrite the onion shows). */
export const tidyQuery: Middleware = {
  name: 'tidy-query',
  tool(ctx, next) {
    const args = ctx.args as { query?: unknown };
    if (typeof args.query === 'string') ctx.args = { ...args, query: args.query.trim().toLowerCase() };
    return next();
  },
};

/** A layer that passes every call on as it is. */
export const audit: Middleware = { name: 'audit', tool: (ctx, next) => next() };

/** Agent `support`: one search (its query rewritten by tidy-query, inside audit), then an answer. */
export function supportAgent(store: RunStore): Agent {
  const search = defineTool({ name: 'search', description: 'Search the help centre', input: z.object({ query: z.string() }), execute: ({ query }) => `3 articles about ${query}` });
  return createAgent({
    name: 'support', store, tools: [search], middleware: [handTrace(['audit', 'tidy-query'], 'tidy-query'), audit, tidyQuery],
    model: mockModel([{ reasoning: 'Look it up first.', toolCalls: [{ name: 'search', args: { query: '  Refund POLICY ' }, id: 'call_search' }] }, 'Refunds take 5 days.'], { resumable: true }),
  });
}

/** Agent `editor`: asks its sub-agent `researcher`, which searches, then answers. */
export function editorAgent(store: RunStore): Agent {
  const search = defineTool({ name: 'search', description: 'Search the web', input: z.object({ query: z.string() }), execute: ({ query }) => `otters: ${query}` });
  const researcher = createAgent({ name: 'researcher', tools: [search], model: mockModel([{ toolCalls: [{ name: 'search', args: { query: 'Otters ' }, id: 'call_sub_search' }] }, 'They hold hands.']) });
  return createAgent({
    name: 'editor', store, tools: [researcher.asTool({ description: 'Researches a topic' })], middleware: [handTrace(['audit', 'tidy-query'], 'tidy-query'), audit, tidyQuery],
    model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'otters' }, id: 'call_researcher' }] }, 'Otters hold hands.']),
  });
}

/** Agent `payments`: a refund of each order (default one) that waits for a human; `executions` counts the refunds made. */
export function paymentsAgent(store: RunStore, executions: { refunds: { orderId: string; amount: number }[] }, orders = ['A-17']): Agent {
  const refund = defineTool({
    name: 'refund', description: 'Refund an order', needsApproval: true,
    input: z.object({ orderId: z.string().min(1), amount: z.number().positive().max(500) }),
    execute: (args) => (executions.refunds.push(args), `refunded ${args.amount} EUR on ${args.orderId}`),
  });
  return createAgent({
    name: 'payments', store, tools: [refund], middleware: [handTrace([])],
    model: mockModel([{ toolCalls: orders.map((orderId, i) => ({ name: 'refund', args: { orderId, amount: 40 }, id: i === 0 ? 'call_refund' : `call_refund_${i + 1}` })) }, 'The refund is on its way.'], { resumable: true }),
  });
}

/** Agent `slow`: its tool waits until the test calls `release()`; `entered` resolves when it started. */
export function slowAgent(store: RunStore): { agent: Agent; entered: Promise<void>; release(): void } {
  let release!: () => void;
  let enter!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const wait = defineTool({ name: 'wait_for_stock', description: 'Wait for the warehouse', input: z.object({ sku: z.string() }), execute: async ({ sku }) => (enter(), await gate, `${sku} is in stock`) });
  const agent = createAgent({
    name: 'slow', store, tools: [wait],
    model: mockModel([{ toolCalls: [{ name: 'wait_for_stock', args: { sku: 'KO-1' }, id: 'call_wait' }] }, 'It is in stock.'], { resumable: true }),
  });
  return { agent, entered, release };
}

/** Wait until `store` holds run `runId` with `status`. */
export async function untilStatus(store: RunStore, runId: string, status: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if ((await store.loadRun(runId))?.status === status) return;
    if (Date.now() > until) throw new Error(`run ${runId} did not become ${status} (it is ${(await store.loadRun(runId))?.status})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
