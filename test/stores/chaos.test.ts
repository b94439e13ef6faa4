// The chaos test: worker processes run the chaos agent's tasks on one store and are killed
// with SIGKILL again and again — at random moments, and at chosen points: in a model call, as
// a tool starts, between a tool's effect and its `done` write, as a run suspends, in a resumed
// segment — two at a time, competing for the same runs; each round adds tasks. Then one worker
// finishes everything.
// Asserted: no run lost, no completed call executed again, each effect applied once, every
// transcript equal to the one a run without faults gives. Bounded: at most MAX_KILLS kills or
// BUDGET_MS per database. The same on SQLite (one file) and PostgreSQL (a real server).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, type Message } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { postgresStore } from '../../src/postgres.js';
import { sqliteStore } from '../../src/sqlite.js';
import { buildChaosAgent, needsApproval, taskInput, taskSession, type KillPoint } from '../fixtures/chaos-agent.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/chaos-child.ts');
/** New tasks each round brings, so that the workers always have work when they are killed. */
const TASKS_PER_ROUND = 6;
const MAX_KILLS = Number(process.env.CHAOS_KILLS ?? 30);
const BUDGET_MS = Number(process.env.CHAOS_BUDGET_MS ?? 40_000);
const POINTS: KillPoint[] = ['model', 'tool', 'effect', 'suspend', 'resume'];

const living = new Set<ChildProcess>();
const dirs: string[] = [];
let postgres: TestPostgres | undefined;

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  for (const child of living) child.kill('SIGKILL');
  await postgres?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Exit { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** One worker; killed `killAfterMs` after it is ready when given. One that has not exited after 45 s hangs: a failure. */
function worker(args: string[], killAfterMs?: number): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    living.add(child);
    let stdout = '';
    let stderr = '';
    const hang = setTimeout(() => {
      stderr += 'the worker hung: killed after 45 s\n';
      child.kill('SIGTERM');
    }, 45_000);
    child.stdout.on('data', (chunk: Buffer) => {
      const before = stdout;
      stdout += chunk.toString();
      if (killAfterMs !== undefined && !before.includes('ready\n') && stdout.includes('ready\n')) setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code, signal) => {
      clearTimeout(hang);
      living.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const random = (n: number) => Math.floor(Math.random() * n);

/** The transcripts of the tasks run without any fault (each suspended one approved). */
async function faultFree(tasks: number): Promise<Map<number, Message[]>> {
  const store = memoryStore();
  const agent = buildChaosAgent({ store });
  const transcripts = new Map<number, Message[]>();
  for (let n = 0; n < tasks; n++) {
    let result = await agent.run(taskInput(n), { sessionId: taskSession(n) });
    while (result.status === 'suspended') result = await agent.resume(result.runId, Object.fromEntries(result.pendingApprovals.map((p) => [p.toolCallId, true])));
    transcripts.set(n, result.messages);
  }
  return transcripts;
}


async function chaos(kind: 'sqlite' | 'postgres', where: string, open: () => Promise<RunStore>) {
  const effects = mkdtempSync(join(tmpdir(), `koagent-chaos-${kind}-`));
  dirs.push(effects);
  const store = await open();
  const kills: Record<string, number> = {};
  let total = 0;
  let rounds = 0;
  let tasks = 0;
  const deadline = Date.now() + BUDGET_MS;
  while (total < MAX_KILLS && Date.now() < deadline) {
    rounds++;
    tasks += TASKS_PER_ROUND;
    const exits = await Promise.all(['even', 'odd'].map((which, i) => {
      const args = [kind, where, effects, String(tasks), which];
      // One worker kills itself at a kill point (each point in turn, at its 1st to 3rd
      // occurrence), the other is killed at a random moment; they swap every round.
      if ((rounds + i) % 2 === 0) return worker([...args, `${POINTS[Math.floor(rounds / 2) % POINTS.length]}:${1 + random(3)}`]);
      return worker(args, random(600));
    }));
    for (const exit of exits) {
      if (exit.signal === 'SIGKILL') {
        total++;
        const point = /killed at (\w+)/.exec(exit.stdout)?.[1] ?? 'random moment';
        kills[point] = (kills[point] ?? 0) + 1;
      } else if (exit.code !== 0) {
        throw new Error(`a ${kind} worker failed (exit ${exit.code}): ${exit.stderr || exit.stdout}`);
      }
    }
  }
  // One worker, never killed, finishes every run left.
  const last = await worker([kind, where, effects, String(tasks), 'all']);
  expect(last.stderr).toBe('');
  expect(last.code).toBe(0);
  return { store, effects, kills, total, rounds, tasks, finisher: JSON.parse(last.stdout.trim().split('\n').at(-1)!) as Record<string, number> };
}

async function check(kind: string, outcome: Awaited<ReturnType<typeof chaos>>) {
  const { store, effects, tasks } = outcome;
  const expected = await faultFree(tasks);
  const runs = await store.listRuns({ agentName: 'chaos', limit: 10_000 });
  // 0 runs lost: each task has exactly one run, completed, whose transcript is the fault-free one.
  expect(runs.map((r) => r.sessionId).sort()).toEqual(Array.from({ length: tasks }, (_, n) => taskSession(n)).sort());
  expect(runs.filter((r) => r.status !== 'completed')).toEqual([]);
  let calls = 0;
  for (const run of runs) {
    const n = Number(run.sessionId.slice('task-'.length));
    const state = (await store.loadRun(run.runId))!;
    expect(state.messages).toEqual(expected.get(n));
    for (const m of state.messages) if (m.role === 'tool') calls++;
  }
  // 0 completed calls executed again: no execution found its call `done` in the store.
  const executions = readFileSync(join(effects, 'executions.log'), 'utf8').trim().split('\n').map((line) => line.split(' '));
  expect(executions.filter(([, entry]) => entry !== 'running')).toEqual([]);
  // Each effect applied once: one effect per call of the final transcripts, none of a lost run.
  expect(readdirSync(effects).filter((f) => f.startsWith('effect-') && f.endsWith('.json'))).toHaveLength(calls);
  const reruns = executions.length - new Set(executions.map(([key]) => key)).size;
  const suspended = [...expected.keys()].filter(needsApproval).length;
  console.log(`chaos on ${kind}: survived ${outcome.total} SIGKILLs in ${outcome.rounds} rounds of 2 workers (${JSON.stringify(outcome.kills)}); ` +
    `${tasks} runs (${suspended} suspended for approval) all completed, 0 lost; ${calls} tool calls, each effect once; ` +
    `${reruns} interrupted calls run again with their key; the last worker recovered ${outcome.finisher.recovered} runs`);
  await store.close();
  return reruns;
}

describe('chaos: workers killed with SIGKILL at random points', () => {
  it('on SQLite: no run lost, no completed call run twice, every transcript as without faults', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'koagent-chaos-db-'));
    dirs.push(dir);
    const path = join(dir, 'runs.db');
    const outcome = await chaos('sqlite', path, async () => sqliteStore({ path }));
    expect(outcome.total).toBeGreaterThan(0);
    await check('sqlite', outcome);
  }, 180_000);

  it('on PostgreSQL: the same', async () => {
    const url = await postgres!.database();
    const outcome = await chaos('postgres', url, () => postgresStore({ connectionString: url }));
    expect(outcome.total).toBeGreaterThan(0);
    await check('postgres', outcome);
  }, 180_000);
});
