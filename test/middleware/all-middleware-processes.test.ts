// Every built-in middleware on one agent (all-middleware.test.ts), suspended on an approval: a
// suspend → JSON → resume in another process ends exactly as the resume in this one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/index.js';
import { buildAllMiddlewareAgent, GREETING, normalised, TRIP } from '../fixtures/all-middleware-agent.js';
import { childReport } from '../support/child-report.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/all-middleware-resume-child.ts');

describe('all the built-in middleware on one agent', () => {
  let paused: RunResult;
  let done: RunResult;

  beforeAll(async () => {
    const built = buildAllMiddlewareAgent();
    await built.agent.run(GREETING);
    paused = await built.agent.run(TRIP);
    done = await built.agent.resume(JSON.parse(JSON.stringify(paused.state)), { [paused.pendingApprovals[0]!.toolCallId]: true });
  });

  describe('a suspend → JSON → resume in another process changes nothing', () => {
    const dirs: string[] = [];
    afterAll(() => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });

    const resumeInChild = (stateFile: string, decisions: Record<string, unknown>) => childReport(CHILD, [stateFile, JSON.stringify(decisions)]);

    it('the other process ends with the same transcript, usage, hook state, todos and trace', async () => {
      expect(paused.status).toBe('suspended');
      expect(paused.pendingApprovals.map((p) => p.toolName)).toEqual(['book_hotel']);
      const dir = mkdtempSync(join(tmpdir(), 'koagent-all-middleware-'));
      dirs.push(dir);
      const stateFile = join(dir, 'state.json');
      writeFileSync(stateFile, JSON.stringify(paused.state));
      const report = await resumeInChild(stateFile, { [paused.pendingApprovals[0]!.toolCallId]: true });
      expect(report.pid).not.toBe(process.pid);
      expect(report.result).toMatchObject({ status: 'completed', stopReason: 'final' });
      expect(report.result).toEqual(normalised(done));
      expect(report.ran).toEqual(['book_hotel']);
    }, 60_000);
  });
});
