// One worker process of the workers bench (bench/workers.ts forks it): the bench's agent — the
// five-step model of the worker tests, a 1 ms tool with no effect, a refund that needs approval —
// on a koagent worker. It tells its parent, by IPC, when each segment's first step (model or tool
// call) starts, by Date.now(): the parent's clock, on the same machine.
import { z } from 'zod';
import { createAgent, defineTool, type Middleware } from '../src/index.js';
import { createWorker } from '../src/worker.js';
import { stepsModel } from '../test/fixtures/worker-agents.js';

/** What a worker process tells the bench. */
export type WorkerMessage =
  | { type: 'ready'; id: string }
  | { type: 'step'; runId: string; segment: number; kind: 'model' | 'tool'; at: number }
  | { type: 'stopped'; counts: Record<string, number> };

const [url, concurrencyArg] = process.argv.slice(2);
if (url === undefined || process.send === undefined) throw new Error('bench/worker-process: fork me with a connection string and an IPC channel');
const tell = (message: WorkerMessage) => process.send!(message);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const record = defineTool({ name: 'record', description: 'Record one step', input: z.object({ step: z.number() }), idempotent: true, execute: async () => { await sleep(1); return 'recorded'; } });
const refund = defineTool({ name: 'refund', description: 'Refund the customer', input: z.object({ amount: z.number() }), needsApproval: true, idempotent: true, execute: async () => 'refunded' });

// The first step (model or tool call) of each segment is told, one message a segment.
const firstStepOf = new Map<string, number>();
const first = (runId: string, kind: 'model' | 'tool') => {
  const segment = firstStepOf.get(runId);
  if (segment === undefined) return;
  firstStepOf.delete(runId);
  tell({ type: 'step', runId, segment, kind, at: Date.now() });
};
const marks: Middleware = {
  name: 'bench-marks',
  run: (ctx, next) => {
    firstStepOf.set(ctx.runId, ctx.segment);
    return next();
  },
  model: (ctx, next) => {
    first(ctx.runId, 'model');
    return next();
  },
  tool: (ctx, next) => {
    first(ctx.runId, 'tool');
    return next();
  },
};

const agent = createAgent({ name: 'bench', model: stepsModel(5), tools: [record, refund], maxSteps: 50, logger: { warn: () => undefined } });
agent.use(marks);
const worker = await createWorker({ connectionString: url, agents: [agent], concurrency: Number(concurrencyArg ?? 8), handleSignals: false });
process.on('message', (message: { type?: string }) => {
  if (message?.type !== 'stop') return;
  // Exits once its parent has the counts: nothing this process opened may keep it alive.
  void worker.stop({ deadlineMs: 10_000 }).then(() => process.send!({ type: 'stopped', counts: { ...worker.counts } } satisfies WorkerMessage, () => process.exit(0)));
});
tell({ type: 'ready', id: worker.id });
