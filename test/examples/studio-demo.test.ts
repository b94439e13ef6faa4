// npm run studio:demo, as a user runs it (its own process, through tsx), with --exit: it runs
// its agents into a SQLite file and prints the studio's URL; the file then holds each kind of run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/sqlite.js';
import { traceOf } from '../../src/trace.js';
import { runExample } from '../support/examples.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-studio-demo-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the studio demo', () => {
  it('runs a streamed, a waiting, a sub-agent\'s and a recovered run into the file, each with its layer trace, prints the URL with its token and exits', async () => {
    const db = join(dir, 'runs.db');
    const { code, stdout, stderr } = await runExample('examples/studio-demo.ts', { args: ['--db', db, '--exit'] });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/The studio: http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{16,}/);
    expect(stdout).toContain('recovered in this process: completed');
    const store = sqliteStore({ path: db });
    try {
      const runs = await store.listRuns();
      const byAgent = Object.fromEntries(runs.map((run) => [run.agentName, run.status]));
      expect(byAgent).toEqual({ booking: 'completed', writer: 'completed', payments: 'suspended', editor: 'completed' });
      const booking = (await store.loadRun(runs.find((run) => run.agentName === 'booking')!.runId))!;
      // The crash happened mid-run: the run took a second segment (the recovery) to finish.
      expect(booking.segment).toBeGreaterThan(1);
      expect(booking.ledger.map((call) => call.entry)).toEqual(['done', 'done']);
      // Every run recorded its layer trace: the studio shows each one's onions.
      const traces = Object.fromEntries(await Promise.all(runs.map(async (run) => [run.agentName, traceOf(await store.loadRun(run.runId))] as const)));
      expect(Object.values(traces).every((trace) => trace !== undefined && trace.calls.length > 0)).toBe(true);
      expect(traces.editor!.calls.filter((call) => call.parentCallId !== undefined).map((call) => call.agentPath)).toContainEqual(['researcher']);
      // The killed segment left no trace (it is written as a segment ends); the recovered one recorded its own.
      expect(new Set(traces.booking!.calls.map((call) => call.segment))).toEqual(new Set([booking.segment]));
      const refund = traces.payments!.calls.find((call) => call.name === 'refund')!;
      expect(refund.outcome).toBe('approval');
      expect(refund.layers.find((layer) => layer.name === 'cents-only')!.effects).toContainEqual({ type: 'rewrote-args', changes: [{ path: '/args/amount', before: 40.004, after: 40 }] });
      const payments = (await store.loadRun(runs.find((run) => run.agentName === 'payments')!.runId))!;
      expect(payments.pendingApprovals[0]!.args).toEqual({ orderId: 'A-17', amount: 40 });
      expect(payments.usage.cost).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 60_000);
});
