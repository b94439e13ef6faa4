// agent.stream() leaves nothing running behind it: a process of its own
// (test/fixtures/no-dangling-stream.ts) breaks out of two slow streams and must exit by itself.
// The other tests of agent.stream(): agent-stream.test.ts.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const fixture = fileURLToPath(new URL('../../fixtures/no-dangling-stream.ts', import.meta.url));

describe('agent.stream(): breaking out early', () => {
  it('leaves no timer or promise behind: a process that breaks out of two slow streams exits by itself', async () => {
    const { code, stdout, stderr, killed } = await new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>((resolve) => {
      // Generous: streaming everything would take minutes; a clean exit takes a few seconds.
      const child = execFile(process.execPath, ['--import', 'tsx', fixture], { cwd: repo, timeout: 60_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
        resolve({ code: child.exitCode, stdout, stderr, killed: (error as { killed?: boolean } | null)?.killed === true });
      });
    });
    expect(killed, `the child did not exit by itself; stderr: ${stderr}`).toBe(false);
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout.trim());
    expect(report.unhandled).toEqual([]);
    expect(report.timers).toEqual([]);
    const [midModel, midTool] = report.results;
    for (const run of report.results) {
      expect(run.stopReason).toBe('aborted');
      expect(run.firstDelta).toBe('word0 ');
      // run.end and onEnd fired once per run (the lead's, and in the second case the sub-agent's), and had by the time the loop exited.
      expect(run.endsAtBreak).toEqual(run.ends);
      expect(run.ends.runEnd.filter((id: string) => id === run.runId)).toHaveLength(1);
      expect(new Set(run.ends.runEnd).size).toBe(run.ends.runEnd.length);
      expect([...run.ends.onEnd].sort()).toEqual([...run.ends.runEnd].sort());
    }
    expect(midModel.tool).toEqual({ started: 0, aborted: 0 });
    expect(midModel.transcriptRoles).toEqual(['user']);
    expect(midTool.tool).toEqual({ started: 1, aborted: 1 });
    expect(midTool.ends.runEnd).toHaveLength(2);
    expect(midTool.transcriptRoles).toEqual(['user', 'assistant', 'tool', 'tool']);
  });
});
