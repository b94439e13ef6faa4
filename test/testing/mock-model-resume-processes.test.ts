// A plain mockModel counts its calls. Given a transcript its own script already began (a run
// resumed in another process, a run recovered by a new worker, a session continued by a new
// agent), it would answer with its first reply again — call the tools again, or ask for the same
// approval for ever — so it refuses, naming `{ resumable: true }`. A resumable one answers where
// the transcript stands. Here, a run approved in another process (test/fixtures/scripted-teller-child.ts);
// the rest, in one process: mock-model-resume.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { childReport } from '../support/child-report.js';
import { scriptedTeller } from '../fixtures/scripted-teller.js';

const CHILD = 'test/fixtures/scripted-teller-child.ts';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A teller run suspended for approval in this process, its state in a file. */
async function suspendedTransfer(): Promise<{ dir: string; stateFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-mock-resume-'));
  dirs.push(dir);
  const paused = await scriptedTeller(dir, false).run('Pay Alice 80');
  expect(paused.pendingApprovals.map((p) => p.toolCallId)).toEqual(['call_transfer']);
  const stateFile = join(dir, 'state.json');
  writeFileSync(stateFile, JSON.stringify(paused.state));
  return { dir, stateFile };
}

const transfers = (dir: string) => readFileSync(join(dir, 'transfers.log'), 'utf8').trim().split('\n');

describe('a plain mockModel given a transcript its script already began', () => {
  it('fails a run approved in another process with an error naming { resumable: true }, after the approved call ran once', async () => {
    const { dir, stateFile } = await suspendedTransfer();
    const report = await childReport(CHILD, [stateFile, dir, 'plain']);
    expect(report).toMatchObject({ status: 'failed', code: 'model_error' });
    expect(report.cause).toBe("mockModel: the request continues a transcript whose assistant message is the script's first reply, but a plain mockModel counts its calls, "
      + 'so this fresh one would answer with the first reply again. A run resumed or recovered in another process, or a session continued by a new agent, '
      + 'needs mockModel(script, { resumable: true }), which picks each reply by the transcript (here reply 2); or script only the replies still to come');
    expect(transfers(dir)).toEqual(['alice 80']);
  }, 30_000);

  it('with { resumable: true }, the run approved in another process ends with the second reply', async () => {
    const { dir, stateFile } = await suspendedTransfer();
    expect(await childReport(CHILD, [stateFile, dir, 'resumable'])).toEqual({ status: 'completed', text: 'Paid Alice 80.', pending: 0 });
    expect(transfers(dir)).toEqual(['alice 80']);
  }, 30_000);
});
