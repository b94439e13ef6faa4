// todoListMiddleware's list survives a suspend → JSON → resume in another process
// (test/fixtures/todo-resume-child.ts). Its other tests, in one process: todo-list-middleware.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { textOf, type Message } from '../../src/index.js';
import { todosOf } from '../../src/middleware.js';
import { buildTodoAgent, PLAN } from '../fixtures/todo-agent.js';
import { childReport } from '../support/child-report.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/todo-resume-child.ts');

const isReminder = (m: Message | undefined) => m?.role === 'user' && textOf(m.content).startsWith('<todo-list>');

describe('todoListMiddleware: the list survives suspend → JSON → resume in another process', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const resumeInChild = (stateFile: string, decisions: Record<string, unknown>) => childReport(CHILD, [stateFile, JSON.stringify(decisions)]);

  it('the other process shows the model the list and finishes the plan', async () => {
    const { agent } = buildTodoAgent();
    const paused = await agent.run('Release 1.2.0');
    expect(paused.status).toBe('suspended');
    expect(todosOf(paused.state)).toEqual(PLAN);
    const dir = mkdtempSync(join(tmpdir(), 'koagent-todos-'));
    dirs.push(dir);
    const stateFile = join(dir, 'state.json');
    writeFileSync(stateFile, JSON.stringify(paused.state));
    const report = await resumeInChild(stateFile, { d1: true });
    expect(report.pid).not.toBe(process.pid);
    expect(report).toMatchObject({ status: 'completed', text: 'Released 1.2.0 and told the team.' });
    // The first request there already ends with the list written here.
    expect(report.sent[0].tools).toEqual(['deploy', 'write_todos']);
    expect(report.sent[0].last.content).toContain('1. [completed] Build the release\n2. [in_progress] Deploy it\n3. [pending] Tell the team');
    expect(report.sent[1].last.content).toContain('2. [completed] Deploy it');
    expect(report.todos).toEqual(PLAN.map((todo) => ({ ...todo, status: 'completed' })));
    expect((report.stored as Message[]).some(isReminder)).toBe(false);
  }, 30_000);
});
