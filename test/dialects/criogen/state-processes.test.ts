// criogen hook state across agent.resume in another process (test/fixtures/criogen-resume-child.ts).
// Its other tests, in one process: state.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { RunState } from '../../../src/index.js';
import { buildDeployAgent, type Sightings } from '../../fixtures/criogen-agent.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../..', import.meta.url));
const child = fileURLToPath(new URL('../../fixtures/criogen-resume-child.ts', import.meta.url));

describe('criogen hook state: { state }', () => {
  it('survives agent.resume in another process: each hook finds its own state again, by name and position', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'criogen-resume-'));
    try {
      const seen: Sightings = {};
      const agent = buildDeployAgent([{ toolCalls: [{ name: 'deploy', args: { service: 'api' } }] }], seen);
      const paused = await agent.run('Deploy the api');
      expect(paused.status).toBe('suspended');
      const stateFile = join(dir, 'state.json');
      writeFileSync(stateFile, JSON.stringify(paused.state));

      const { stdout } = await run(process.execPath, ['--import', 'tsx', child, stateFile], { cwd: repo });
      const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { pid: number; seen: Sightings; status: string; text: string; hookState: RunState['hookState'] };
      expect(report.pid).not.toBe(process.pid);
      expect(report.status).toBe('completed');
      expect(report.text).toBe('Deployed.');
      // What each hook saved in this process is what it found, and only its own, over there.
      expect(report.seen).toEqual({ segments: [[1]], Tally: [{ total: 1 }], 'Tally#2': [{ total: 10 }] });
      expect(report.hookState).toEqual({ Tally: { total: 2 }, 'Tally#2': { total: 20 }, segments: [1, 2] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
