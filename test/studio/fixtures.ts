// Runs for the studio's tests, made by real agents (scripted models) into a real SQLite file,
// each recording its layer trace (`layerTrace: true`): the onions the page shows are the ones
// the runtime wrote, with real middleware, both dialects' hooks and koagent's own steps.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createAgent, defineTool, type Agent, type Middleware } from '../../src/index.js';
import type { AgentHook, Hook } from '../../src/hooks.js';
import { costBudgetMiddleware } from '../../src/middleware.js';
import { sqliteStore } from '../../src/sqlite.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import { overriding } from '../support/durable.js';

/** A SQLite file in a temporary folder, watched: what was written to it and read from it is told as it happens. */
export interface TempStore {
  store: RunStore;
  path: string;
  /** Resolves once a write stored run `runId` with `status` (at once if one did). */
  stored(runId: string, status: string): Promise<void>;
  /** Resolves once the next listing of the runs (`listRuns`) has been answered. */
  listed(): Promise<void>;
  dispose(): Promise<void>;
}

/** A SQLite file in a temporary folder (see `TempStore`), and a way to remove it. */
export function tempStore(): TempStore {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-studio-'));
  const path = join(dir, 'runs.db');
  const inner = sqliteStore({ path });
  const seen = new Set<string>();
  let storedWaiters: { key: string; resolve: () => void }[] = [];
  let listWaiters: (() => void)[] = [];
  const wrote = (runId: string, status: string) => {
    const key = `${runId} ${status}`;
    seen.add(key);
    const ready = storedWaiters.filter((w) => w.key === key);
    storedWaiters = storedWaiters.filter((w) => w.key !== key);
    for (const w of ready) w.resolve();
  };
  const store = overriding(inner, {
    checkpoint: async (lease, checkpoint, final) => {
      await inner.checkpoint(lease, checkpoint, final);
      wrote(lease.runId, checkpoint.status);
    },
    listRuns: async (filter) => {
      const runs = await inner.listRuns(filter);
      const waiting = listWaiters;
      listWaiters = [];
      for (const resolve of waiting) resolve();
      return runs;
    },
  });
  return {
    store,
    path,
    stored: (runId, status) => (seen.has(`${runId} ${status}`) ? Promise.resolve() : new Promise((resolve) => storedWaiters.push({ key: `${runId} ${status}`, resolve }))),
    listed: () => new Promise((resolve) => listWaiters.push(resolve)),
    dispose: async () => (await inner.close(), rmSync(dir, { recursive: true, force: true })),
  };
}

/** An AgentHooks hook that notes each tool call and its result (the trace names it `log-calls`). */
export const logCalls: AgentHook = { name: 'log-calls', preToolCall: () => undefined, postToolCall: () => undefined };

/** A criogen hook that looks at each tool call before it runs, and at each segment's start and end (the trace names it by its class). */
export class CheckScope implements Hook {
  onStart() {
    return undefined;
  }
  beforeTool() {
    return undefined;
  }
  onEnd() {}
}

/** What the scripted model costs in the fixtures' price table (USD per million tokens). */
export const MOCK_PRICE = { input: 100, output: 400 };

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

/** Agent `support`: one search (its query rewritten by tidy-query, inside audit, with both dialects' hooks inside), then an answer; priced by the cost budget. */
export function supportAgent(store: RunStore): Agent {
  const search = defineTool({ name: 'search', description: 'Search the help centre', input: z.object({ query: z.string() }), execute: ({ query }) => `3 articles about ${query}` });
  return createAgent({
    name: 'support', store, tools: [search], layerTrace: true,
    middleware: [costBudgetMiddleware({ prices: { mock: MOCK_PRICE } }), audit, tidyQuery], hooks: [logCalls, new CheckScope()],
    model: mockModel([{ reasoning: 'Look it up first.', toolCalls: [{ name: 'search', args: { query: '  Refund POLICY ' }, id: 'call_search' }] }, 'Refunds take 5 days.'], { resumable: true }),
  });
}

/** Agent `editor`: asks its sub-agent `researcher`, whose search query tidy-query rewrites, then answers (the lead's trace holds the sub-agent's calls). */
export function editorAgent(store: RunStore): Agent {
  const search = defineTool({ name: 'search', description: 'Search the web', input: z.object({ query: z.string() }), execute: ({ query }) => `otters: ${query}` });
  const researcher = createAgent({ name: 'researcher', tools: [search], middleware: [tidyQuery], model: mockModel([{ toolCalls: [{ name: 'search', args: { query: 'Otters ' }, id: 'call_sub_search' }] }, 'They hold hands.']) });
  return createAgent({
    name: 'editor', store, tools: [researcher.asTool({ description: 'Researches a topic' })], middleware: [audit], hooks: [logCalls], layerTrace: true,
    model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'otters' }, id: 'call_researcher' }] }, 'Otters hold hands.']),
  });
}

/** Agent `payments`: a refund of `amount` on each order (default one) that waits for a human; `executions` counts the refunds made (no `store`: an agent made without one). */
export function paymentsAgent(store: RunStore | undefined, executions: { refunds: { orderId: string; amount: number }[] }, orders = ['A-17'], amount = 40): Agent {
  const refund = defineTool({
    name: 'refund', description: 'Refund an order', needsApproval: true,
    input: z.object({ orderId: z.string().min(1), amount: z.number().positive().max(500) }),
    execute: (args) => (executions.refunds.push(args), `refunded ${args.amount} EUR on ${args.orderId}`),
  });
  return createAgent({
    name: 'payments', store, tools: [refund], middleware: [audit], layerTrace: true,
    model: mockModel([{ toolCalls: orders.map((orderId, i) => ({ name: 'refund', args: { orderId, amount }, id: i === 0 ? 'call_refund' : `call_refund_${i + 1}` })) }, 'The refund is on its way.'], { resumable: true }),
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
    name: 'slow', store, tools: [wait], layerTrace: true,
    model: mockModel([{ toolCalls: [{ name: 'wait_for_stock', args: { sku: 'KO-1' }, id: 'call_wait' }] }, 'It is in stock.'], { resumable: true }),
  });
  return { agent, entered, release };
}
