// npm run studio:demo — the studio over runs made here, offline: scripted agents run into a
// SQLite file (one streamed, one waiting for a human's approval, one with a sub-agent, one
// recovered after its worker process was killed mid-run), then the studio opens on that file
// and prints its URL. Approve the waiting refund from the page: the studio resumes it.
//   --db <file>  the SQLite file (default: a new one in a temporary folder)
//   --exit       print the URL and exit (used by a test)
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type Agent, type AgentOptions, type Middleware } from 'koagent';
import { costBudgetMiddleware } from 'koagent/middleware';
import { sqliteStore } from 'koagent/sqlite';
import type { RunStore } from 'koagent/store';
import { startStudio } from 'koagent/studio';
import { mockModel } from 'koagent/testing';

const LEASE_MS = 500;

// Each agent records its layer trace, so the studio shows the onion of every call; a layer that
// rewrites the refund's arguments and a priced model give the onion and the cost column something to show.
const priced = costBudgetMiddleware({ prices: { mock: { input: 0.25, output: 2 } } });
const TRACED = { layerTrace: true, middleware: [priced] } satisfies Partial<AgentOptions>;

/** Amounts to the cent: the onion of the refund shows this layer's rewrite, and the approval asks about its result. */
const centsOnly: Middleware = {
  name: 'cents-only',
  tool(ctx, next) {
    const args = ctx.args as { amount?: unknown };
    if (typeof args.amount === 'number') ctx.args = { ...args, amount: Math.round(args.amount * 100) / 100 };
    return next();
  },
};

/** Every agent of the demo on `store`. `onCharge` runs inside the booking's charge (the worker hangs there). */
function agents(store: RunStore, onCharge: () => Promise<void> = async () => undefined): Record<'writer' | 'payments' | 'editor' | 'booking', Agent> {
  const writer = createAgent({ ...TRACED, name: 'writer', store, model: mockModel(['Otters hold hands while they sleep, so that the current does not carry them apart. A group of resting otters is called a raft.'], { deltaLatencyMs: 15 }) });

  const refund = defineTool({
    name: 'refund', description: 'Refund an order', needsApproval: true,
    input: z.object({ orderId: z.string().min(1), amount: z.number().positive().max(500) }),
    execute: ({ orderId, amount }) => `refunded ${amount} EUR on ${orderId}`,
  });
  const payments = createAgent({
    ...TRACED, name: 'payments', store, tools: [refund], middleware: [priced, centsOnly],
    model: mockModel([{ toolCalls: [{ name: 'refund', args: { orderId: 'A-17', amount: 40.004 }, id: 'call_refund' }] }, 'The refund of 40 EUR is on its way.'], { resumable: true }),
  });

  const search = defineTool({ name: 'search', description: 'Search the web', input: z.object({ query: z.string() }), execute: ({ query }) => `Otters (${query}): they hold hands while sleeping.` });
  const researcher = createAgent({ ...TRACED, name: 'researcher', model: mockModel([{ toolCalls: [{ name: 'search', args: { query: 'otters sleeping' } }] }, 'Otters hold hands while sleeping.'], { resumable: true }), tools: [search] });
  const editor = createAgent({
    ...TRACED, name: 'editor', store, tools: [researcher.asTool({ description: 'Researches a topic' })],
    model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'Find a fact about otters' } }] }, 'Fact checked: otters hold hands while sleeping.'], { resumable: true }),
  });

  const reserve = defineTool({ name: 'reserve_seat', description: 'Reserve a seat', input: z.object({ flight: z.string() }), execute: ({ flight }) => `seat 14C on ${flight}` });
  const charge = defineTool({
    name: 'charge_card', description: 'Charge the card', input: z.object({ amount: z.number() }), idempotent: true,
    async execute({ amount }, ctx) {
      await onCharge();
      return `charged ${amount} EUR (receipt ${ctx.idempotencyKey})`;
    },
  });
  const booking = createAgent({
    ...TRACED, name: 'booking', store, tools: [reserve, charge],
    model: mockModel([{ toolCalls: [{ name: 'reserve_seat', args: { flight: 'KO123' }, id: 'call_reserve' }] }, { toolCalls: [{ name: 'charge_card', args: { amount: 240 }, id: 'call_charge' }] }, 'Booked seat 14C on KO123 and paid 240 EUR.'], { resumable: true }),
  });
  return { writer, payments, editor, booking };
}

/** A worker process starts the booking on `db` and is killed (SIGKILL) while it charges the card. */
async function crashedBooking(db: string): Promise<void> {
  const here = fileURLToPath(import.meta.url);
  const worker = spawn(process.execPath, ['--import', 'tsx', here, 'worker', db], { cwd: join(dirname(here), '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    worker.stdout.on('data', (chunk: Buffer) => void (chunk.toString().includes('charging') && worker.kill('SIGKILL')));
    worker.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`the worker exited by itself (${signal ?? code})`))));
  });
}

export async function main(argv = process.argv.slice(2), print: (line: string) => void = console.log): Promise<void> {
  const at = argv.indexOf('--db');
  const db = at >= 0 ? argv[at + 1]! : join(mkdtempSync(join(tmpdir(), 'koagent-studio-demo-')), 'runs.db');
  print(`Runs go to ${db}`);

  await crashedBooking(db);
  print('1. booking: its worker process was killed (SIGKILL) while it charged the card');
  const store = sqliteStore({ path: db, leaseMs: LEASE_MS });
  const all = agents(store);
  await sleep(LEASE_MS + 50); // a run is recovered once its dead worker's lease expired
  const [recovered] = await all.booking.runs.recover();
  print(`   recovered in this process: ${recovered?.result?.status ?? recovered?.error}`);

  let streamed = 0;
  for await (const event of all.writer.stream('Tell me about otters')) if (event.type === 'text.delta') streamed++;
  print(`2. writer: streamed its answer (${streamed} deltas)`);
  const waiting = await all.payments.run('Refund order A-17');
  print(`3. payments: ${waiting.status}, waiting for a human to approve refund(${JSON.stringify(waiting.pendingApprovals[0]?.args)})`);
  const edited = await all.editor.run('Check a fact about otters');
  print(`4. editor: ${edited.status}, through its researcher sub-agent`);

  const studio = await startStudio({ store, agents: Object.values(all) });
  print(`\nThe studio: ${studio.url}`);
  if (argv.includes('--exit')) {
    await studio.close();
    await store.close();
    return;
  }
  print('(Ctrl-C to stop)');
  await new Promise<void>((resolve) => process.once('SIGINT', resolve));
  await studio.close();
  await store.close();
}

/** The worker process: the booking, hanging inside charge_card until it is killed. */
async function worker(db: string): Promise<void> {
  const { booking } = agents(sqliteStore({ path: db, leaseMs: LEASE_MS }), async () => {
    process.stdout.write('charging\n');
    await sleep(60_000);
  });
  await booking.run('Book me on KO123 and pay with my card');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'worker') await worker(process.argv[3]!);
  else await main();
}
