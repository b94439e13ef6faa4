// examples/durable.ts: a worker process is killed mid-tool, this process recovers the run from
// the SQLite file, and the tools' effects happened once.
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/durable.js';
import { runExample } from '../support/examples.js';

describe('examples/durable.ts', () => {
  it('recovers the killed run from its checkpoint: the done call is not run again, the interrupted one charges once', async () => {
    const lines: string[] = [];
    const demo = await main((line) => lines.push(line));
    expect(demo.killedWhile).toEqual({ status: 'running', ledger: [{ id: 'call_reserve_seat', entry: 'done' }, { id: 'call_charge_card', entry: 'running' }] });
    expect(demo.recovered).toMatchObject({ status: 'completed', stopReason: 'final' });
    expect(demo.recovered.text).toMatch(/^Booked: seat 14C on KO123, paid: charged 240 EUR \(receipt run_[\w-]+:call_charge_card\)\.$/);
    expect(demo.executions.filter((line) => line === 'reserve_seat')).toHaveLength(1);
    expect(demo.executions.filter((line) => line.startsWith('charge_card'))).toHaveLength(2);
    expect(new Set(demo.executions.filter((line) => line.startsWith('charge_card'))).size).toBe(1);
    expect(demo.charges).toHaveLength(1);
    expect(lines).toContain('   reserve_seat ran once: it was done before the crash, and its stored result was used');
    expect(lines).toContain('   charge_card was entered 2 times with one idempotency key (again after the crash); the card was charged once');
  }, 60_000);

  it('runs by itself with npx tsx, offline', async () => {
    const { code, stdout } = await runExample('examples/durable.ts');
    expect(code).toBe(0);
    expect(stdout).toContain('2. The worker was killed (SIGKILL) while charge_card was running');
    expect(stdout).toContain('reserve_seat ran once');
    expect(stdout.trim().split('\n').at(-1)).toBe('   charge_card was entered 2 times with one idempotency key (again after the crash); the card was charged once');
  }, 60_000);
});
