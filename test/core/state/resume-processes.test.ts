// resume in another process: a separate Node process (test/fixtures/resume-child.ts) builds the
// same agent and resumes a state stored here, with and without claimResume. (resume in one process:
// resume.test.ts.)
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResult, RunState } from '../../../src/index.js';
import { BALANCE_CALL, buildBankAgent, executions, TRANSFER_CALL } from '../../fixtures/bank-agent.js';
import { childRun } from '../../support/child-report.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const CHILD = join(ROOT, 'test/fixtures/resume-child.ts');

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-resume-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface ChildReport {
  ok: boolean;
  pid: number;
  status?: string;
  stopReason?: string;
  text?: string;
  events: string[];
  state?: RunState;
  code?: string;
  message?: string;
}

/** Resume the state in `stateFile` in a new Node process (tsx), and read the line it prints. */
function resumeInChild(stateFile: string, decisions: Record<string, unknown>, dir: string, claimDir = ''): Promise<{ exitCode: number | null; report: ChildReport }> {
  return childRun(CHILD, [stateFile, JSON.stringify(decisions), dir, claimDir]) as Promise<{ exitCode: number | null; report: ChildReport }>;
}

async function suspendedInThisProcess(dir: string): Promise<{ result: RunResult; stateFile: string }> {
  const result = await buildBankAgent({ dir }).run('Pay Alice 80');
  expect(result.pendingApprovals).toEqual([{ toolCallId: TRANSFER_CALL, toolName: 'transfer', args: { to: 'alice', amount: 80 } }]);
  const stateFile = join(dir, 'state.json');
  writeFileSync(stateFile, JSON.stringify(result.state));
  return { result, stateFile };
}

describe('resume in another process', () => {
  it('a separate Node process, building the same agent, resumes a stored state and finishes the run', async () => {
    const dir = tempDir();
    const { result, stateFile } = await suspendedInThisProcess(dir);
    const { exitCode, report } = await resumeInChild(stateFile, { [TRANSFER_CALL]: true }, dir);
    expect(exitCode).toBe(0);
    expect(report.pid).not.toBe(process.pid);
    expect(report).toMatchObject({ ok: true, status: 'completed', stopReason: 'final' });
    expect(report.text).toBe(`Done. get_balance: {"account":"main","balance":120} | transfer: {"receipt":"${result.runId}:${TRANSFER_CALL}","to":"alice","amount":80}`);
    expect(report.events).toEqual(['run.start', 'permission.decision', 'tool.start', 'tool.done', 'model.start', 'model.done', 'run.end']);
    expect(report.state).toMatchObject({ runId: result.runId, segment: 2, status: 'completed', ledger: [{ id: BALANCE_CALL, entry: 'done' }, { id: TRANSFER_CALL, entry: 'done' }] });
    // The balance ran here, before the pause; the transfer ran there, once.
    expect(executions(dir)).toEqual([`get_balance ${result.runId}:${BALANCE_CALL}`, `transfer ${result.runId}:${TRANSFER_CALL}`]);
  });

  it('a denial given in the other process reaches the model there', async () => {
    const dir = tempDir();
    const { stateFile } = await suspendedInThisProcess(dir);
    const { report } = await resumeInChild(stateFile, { [TRANSFER_CALL]: { approved: false, reason: 'Alice was paid yesterday' } }, dir);
    expect(report.text).toContain('transfer: Error (denied): Alice was paid yesterday');
    expect(executions(dir).filter((l) => l.startsWith('transfer'))).toEqual([]);
  });

  it('with claimResume, two processes resuming the same state at once: one runs the transfer, the other is refused', async () => {
    const dir = tempDir();
    const claims = tempDir();
    const { result, stateFile } = await suspendedInThisProcess(dir);
    const reports = await Promise.all([1, 2].map(() => resumeInChild(stateFile, { [TRANSFER_CALL]: true }, dir, claims)));
    const done = reports.filter((r) => r.report.ok);
    const refused = reports.filter((r) => !r.report.ok);
    expect(done).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0].exitCode).toBe(3);
    expect(refused[0].report).toMatchObject({ code: 'invalid_resume', events: [] });
    expect(refused[0].report.message).toMatch(/claimResume answered false .* it was already resumed/);
    expect(executions(dir).filter((l) => l.startsWith('transfer'))).toEqual([`transfer ${result.runId}:${TRANSFER_CALL}`]);
    expect(readdirSync(claims)).toEqual([`${result.runId}#1`]);
  });

  it('without claimResume, the idempotency key lets the tool pay once however many processes resume', async () => {
    const dir = tempDir();
    const { result, stateFile } = await suspendedInThisProcess(dir);
    const first = await resumeInChild(stateFile, { [TRANSFER_CALL]: true }, dir);
    const second = await resumeInChild(stateFile, { [TRANSFER_CALL]: true }, dir);
    expect([first.report.ok, second.report.ok]).toEqual([true, true]);
    const key = `${result.runId}:${TRANSFER_CALL}`;
    // Both processes reached the tool, with the same key; only one receipt (one payment) exists.
    expect(executions(dir).filter((l) => l.startsWith('transfer'))).toEqual([`transfer ${key}`, `transfer ${key}`]);
    expect(readdirSync(dir).filter((f) => f.startsWith('receipt-'))).toEqual([`receipt-${encodeURIComponent(key)}.json`]);
    expect(second.report.text).toContain('"duplicate":true');
  });
});
