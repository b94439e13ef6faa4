// npx tsx examples/durable.ts
// A durable run survives its process. A worker process starts a booking on a SQLite file and
// is killed (SIGKILL) while it charges the card; this process then recovers the run from the
// file. The seat reservation, done before the crash, does not run again: its stored result is
// used. The charge was running when the worker died, so nobody knows whether it went through:
// the tool is idempotent, so it runs again with the same idempotency key, and the payment
// provider (a file here, outside the store) charges the card once.
// Offline: the model reads the transcript and answers from it.
import { spawn } from 'node:child_process';
import { appendFileSync, linkSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type Agent, type GenerateResult, type ModelProvider, type RunResult } from 'koagent';
import type { LedgerCall, RunStore } from 'koagent/store';
import { sqliteStore } from 'koagent/sqlite';

const LEASE_MS = 500;

/** The model: reserve a seat, then charge for it, then confirm, by what the transcript holds. */
const travelModel: ModelProvider = {
  name: 'travel-model',
  async generate({ messages }): Promise<GenerateResult> {
    const done = new Map(messages.filter((m) => m.role === 'tool').map((m) => [(m as { name: string }).name, m.content]));
    const usage = { inputTokens: 20, outputTokens: 10 };
    const call = (name: string, args: Record<string, unknown>): GenerateResult => ({ message: { role: 'assistant', content: '', toolCalls: [{ id: `call_${name}`, name, args }] }, usage, finishReason: 'tool_calls' });
    if (!done.has('reserve_seat')) return call('reserve_seat', { flight: 'KO123' });
    if (!done.has('charge_card')) return call('charge_card', { amount: 240 });
    return { message: { role: 'assistant', content: `Booked: ${done.get('reserve_seat')}, paid: ${done.get('charge_card')}.` }, usage, finishReason: 'stop' };
  },
};

/** The booking agent on `store`; its tools log each execution and keep their effects in `dir`. */
function bookingAgent(store: RunStore, dir: string, onCharge: () => Promise<void> = async () => undefined): Agent {
  const log = (line: string) => appendFileSync(join(dir, 'executions.log'), `${line}\n`);
  const reserveSeat = defineTool({
    name: 'reserve_seat',
    description: 'Reserve a seat on a flight',
    input: z.object({ flight: z.string() }),
    execute: ({ flight }) => (log('reserve_seat'), `seat 14C on ${flight}`),
  });
  const chargeCard = defineTool({
    name: 'charge_card',
    description: 'Charge the card',
    input: z.object({ amount: z.number() }),
    // The payment provider deduplicates by the idempotency key, so running the call again is safe.
    idempotent: true,
    async execute({ amount }, ctx) {
      log(`charge_card ${ctx.idempotencyKey}`);
      const receipt = charge(dir, ctx.idempotencyKey, amount);
      await onCharge();
      return receipt;
    },
  });
  return createAgent({ name: 'booking', model: travelModel, tools: [reserveSeat, chargeCard], store });
}

/** The payment provider: one charge per idempotency key, written whole or not at all. */
function charge(dir: string, key: string, amount: number): string {
  const file = join(dir, `charge-${encodeURIComponent(key)}.json`);
  const draft = `${file}.${process.pid}`;
  writeFileSync(draft, JSON.stringify({ key, amount }));
  try {
    linkSync(draft, file);
    appendFileSync(join(dir, 'charges.log'), `${key} ${amount}\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return `charged ${amount} EUR (receipt ${key})`;
}

const lines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

/** What the example found. */
export interface DurableDemo {
  killedWhile: { status: string; ledger: LedgerCall[] };
  recovered: RunResult;
  executions: string[];
  charges: string[];
}

/** Run the example; `print` gets each line it would print. */
export async function main(print: (line: string) => void = console.log): Promise<DurableDemo> {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-durable-'));
  try {
    print(`1. A worker process starts a booking on ${join(dir, 'runs.db')}`);
    const here = fileURLToPath(import.meta.url);
    const worker = spawn(process.execPath, ['--import', 'tsx', here, 'worker', dir], { cwd: join(dirname(here), '..'), stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      worker.stdout.on('data', (chunk: Buffer) => {
        // The card is charged and the worker has not stored that yet: kill it now.
        if (chunk.toString().includes('charging')) worker.kill('SIGKILL');
      });
      worker.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`the worker exited by itself (${signal ?? _code})`))));
    });
    print('2. The worker was killed (SIGKILL) while charge_card was running');

    const store = sqliteStore({ path: join(dir, 'runs.db'), leaseMs: LEASE_MS });
    const [stored] = await store.listRuns({ agentName: 'booking' });
    const state = (await store.loadRun(stored.runId))!;
    print(`   the file says: run ${state.status}; ledger: ${state.ledger.map((call) => `${call.id} ${call.entry}`).join(', ')}`);

    // A run is recovered once its lease expired (its worker stopped renewing it).
    await sleep(LEASE_MS + 50);
    const [recovered] = await bookingAgent(store, dir).runs.recover();
    await store.close();
    if (recovered.result === undefined) throw recovered.error;
    print(`3. Recovered in this process: ${recovered.result.status}. "${recovered.result.text}"`);
    const executions = lines(join(dir, 'executions.log'));
    const charges = lines(join(dir, 'charges.log'));
    const reserve = executions.filter((line) => line === 'reserve_seat').length;
    const charging = executions.filter((line) => line.startsWith('charge_card')).length;
    const times = (n: number) => (n === 1 ? 'once' : `${n} times`);
    print(`   reserve_seat ran ${times(reserve)}: it was done before the crash, and its stored result was used`);
    print(`   charge_card was entered ${times(charging)} with one idempotency key (again after the crash); the card was charged ${times(charges.length)}`);
    return { killedWhile: { status: state.status, ledger: state.ledger }, recovered: recovered.result, executions, charges };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The worker process: start the booking, and say when the card is being charged (then wait to be killed). */
async function worker(dir: string): Promise<void> {
  const agent = bookingAgent(sqliteStore({ path: join(dir, 'runs.db'), leaseMs: LEASE_MS }), dir, async () => {
    process.stdout.write('charging\n');
    await sleep(60_000);
  });
  await agent.run('Book me on KO123 and pay with my card');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'worker') await worker(process.argv[3]!);
  else await main();
}
