// `koagent runs …` run as a user runs it: the bin in a child process, against a SQLite file this
// test fills by running real agents. What it prints, its --json, and its exit codes.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/index.js';
import { sqliteStore } from '../../src/sqlite.js';
import { bank, helper, ops } from '../fixtures/cli-agents.js';
import { mortal } from '../support/durable.js';
import { offsetClock } from '../support/clock.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const AGENTS = 'test/fixtures/cli-agents.ts';
const dir = mkdtempSync(join(tmpdir(), 'koagent-cli-'));
const db = join(dir, 'runs.db');
const marks = join(dir, 'marks.txt');
let suspended: string;
let completed: string;

interface Exit { code: number; stdout: string; stderr: string }

/** `koagent …` in a child process, as the bin runs. */
function koagent(...args: string[]): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, env: { ...process.env, KOAGENT_CLI_MARKS: marks }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

const deploys = () => { try { return readFileSync(marks, 'utf8').split('\n').filter(Boolean); } catch { return []; } };

beforeAll(async () => {
  const store = sqliteStore({ path: db });
  suspended = (await ops.run('Deploy the service', { store, sessionId: 'team-a' })).runId;
  completed = (await helper.run('Help me with invoices', { store, sessionId: 'team-b' })).runId;
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runs ls', () => {
  it('prints a table of the runs for people', async () => {
    const { code, stdout } = await koagent('runs', 'ls', '--store', db);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+AGENT\s+STATUS\s+STOP\s+STEPS\s+PENDING\s+SESSION\s+UPDATED$/);
    expect(lines.find((l) => l.startsWith(suspended))).toMatch(/ops\s+suspended\s+approval\s+1\s+1\s+team-a/);
  });

  it('filters by agent, status, session and text, and gives JSON for scripts', async () => {
    const ids = async (...flags: string[]) => (JSON.parse((await koagent('runs', 'ls', '--store', db, '--json', ...flags)).stdout) as { runId: string }[]).map((r) => r.runId);
    expect(await ids('--agent', 'helper')).toEqual([completed]);
    expect(await ids('--status', 'suspended')).toEqual([suspended]);
    expect(await ids('--session', 'team-b')).toEqual([completed]);
    expect(await ids('--grep', 'INVOICES')).toEqual([completed]);
    expect(await ids('--status', 'completed,suspended', '--limit', '1')).toHaveLength(1);
  });

  it('refuses a status that is not one, with exit code 2', async () => {
    const { code, stderr } = await koagent('runs', 'ls', '--store', db, '--status', 'done');
    expect(code).toBe(2);
    expect(stderr).toMatch(/--status done is not a run status/);
  });

  it('fails on a store file that does not exist (exit 1: the store could not be opened, as docs/cli.md says), and never creates one', async () => {
    const { code, stderr } = await koagent('runs', 'ls', '--store', join(dir, 'nope.db'));
    expect(code).toBe(1);
    expect(stderr).toMatch(/no run store at/);
    expect(existsSync(join(dir, 'nope.db'))).toBe(false);
  });
});

describe('runs show and export', () => {
  it('prints the transcript, the ledger with idempotency keys, and the layer trace as an onion', async () => {
    const { code, stdout } = await koagent('runs', 'show', suspended, '--store', db);
    expect(code).toBe(0);
    expect(stdout).toContain('status suspended (approval)');
    expect(stdout).toMatch(/Transcript\n\s+user: Deploy the service/);
    expect(stdout).toMatch(/→ deploy \{"env":"staging"\} \(d1\)/);
    expect(stdout).toMatch(new RegExp(`Ledger\\n\\s+CALL\\s+TOOL\\s+ENTRY\\s+IDEMPOTENCY KEY\\n\\s+d1\\s+deploy\\s+pending\\s+${suspended}:d1`));
    expect(stdout).toMatch(/tool deploy d1 {2}step 1, segment 1 {2}approval/);
    expect(stdout).toMatch(/model turn \[scripted\] model:1:1 {2}step 1, segment 1 {2}ok/);
    expect(stdout).toMatch(/\n {6}prod-only {2}self .*\n {8}· rewrote-args: \/args\/env "staging" → "prod"/);
    expect(stdout).toMatch(/koagent:approval \(builtin\).*\n(\s+· .*\n)*\s+· asked for approval/);
    // The segment's run layers (a criogen hook's onStart and onEnd), before the calls it made.
    expect(stdout).toMatch(/Layer trace\n {2}run segment 1 {2}suspended {2}[\d.]+ ms\n {4}DeployLog \(criogen\) \[onStart, onEnd\] {2}self [\d.]+ ms, out at [\d.]+ ms\n {2}model turn/);
  });

  it('exits 3 for a run the store does not have', async () => {
    const { code, stderr } = await koagent('runs', 'show', 'run_missing', '--store', db);
    expect(code).toBe(3);
    expect(stderr).toMatch(/no run run_missing/);
  });

  it('exports the run as JSON, and its trace as OTLP JSON', async () => {
    const state = JSON.parse((await koagent('runs', 'export', suspended, '--store', db)).stdout) as { runId: string; hookState: Record<string, unknown> };
    expect(state.runId).toBe(suspended);
    expect(state.hookState['koagent.trace']).toBeDefined();
    const otlp = JSON.parse((await koagent('runs', 'export', suspended, '--store', db, '--otlp')).stdout) as { resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[] };
    expect(otlp.resourceSpans[0].scopeSpans[0].spans.map((s) => s.name)).toContain('layer prod-only');
  });
});

describe('runs approve, deny and delete', () => {
  it('refuses to approve without --agents, naming the flag (exit 2)', async () => {
    const { code, stderr } = await koagent('runs', 'approve', suspended, '--store', db);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--agents <module>/);
  });

  it('refuses to deny without a reason (exit 2)', async () => {
    const { code, stderr } = await koagent('runs', 'deny', suspended, '--store', db, '--agents', AGENTS);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--reason/);
  });

  it('approves a suspended run, which resumes once through the store; a second approve is refused (exit 4)', async () => {
    const first = await koagent('runs', 'approve', suspended, '--store', db, '--agents', AGENTS, '--json');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ runId: suspended, status: 'completed', text: 'Done: deployed to prod' });
    const second = await koagent('runs', 'approve', suspended, '--store', db, '--agents', AGENTS);
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(/is completed/);
    expect(deploys()).toEqual(['deploy prod']);
    const store = sqliteStore({ path: db });
    const state = (await store.loadRun(suspended))!;
    await store.close();
    expect(state.status).toBe('completed');
    expect(state.ledger).toEqual([{ id: 'd1', entry: 'done' }]);
    expect(state.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('denies with a reason the model reads', async () => {
    const store = sqliteStore({ path: db });
    const runId = (await ops.run('Deploy again', { store })).runId;
    await store.close();
    const { code, stdout } = await koagent('runs', 'deny', runId, '--store', db, '--agents', AGENTS, '--reason', 'Freeze week');
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`denied deploy \\(d1\\); run ${runId} is completed`));
    expect(deploys()).toEqual(['deploy prod']);
  });

  it('approves with edited arguments (--args): the tool runs once, with those arguments', async () => {
    const store = sqliteStore({ path: db });
    const runId = (await bank.run('Pay Ada', { store })).runId;
    await store.close();
    const { code, stdout, stderr } = await koagent('runs', 'approve', runId, '--store', db, '--agents', AGENTS, '--args', '{"to":"Ada","amount":60}');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`approved with edited arguments transfer \\(t1\\); run ${runId} is completed \\(final\\): Done: sent 60 to Ada`));
    expect(deploys().filter((mark) => mark.startsWith('transfer'))).toEqual(['transfer 60 to Ada']);
  });

  it('refuses edited arguments that fail the tool\'s schema, or are not JSON (exit 2), and resumes nothing', async () => {
    const store = sqliteStore({ path: db });
    const runId = (await bank.run('Pay Ada', { store })).runId;
    await store.close();
    const tooMuch = await koagent('runs', 'approve', runId, '--store', db, '--agents', AGENTS, '--args', '{"to":"Ada","amount":5000}');
    expect(tooMuch.code).toBe(2);
    expect(tooMuch.stderr).toMatch(/--args do not fit transfer's schema: amount: .*100/);
    const notJson = await koagent('runs', 'approve', runId, '--store', db, '--agents', AGENTS, '--args', '{amount: 5}');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/--args must be JSON/);
    const check = sqliteStore({ path: db });
    expect((await check.loadRun(runId))!.status).toBe('suspended');
    await check.close();
    expect(deploys().filter((mark) => mark.startsWith('transfer'))).toEqual(['transfer 60 to Ada']);
  });

  it('puts the decision on the record: an edit 42.5 → 40 by --actor through the CLI, in the state, the trace and runs show', async () => {
    const store = sqliteStore({ path: db });
    const runId = (await bank.run('Pay Ada 42.5', { store })).runId;
    await store.close();
    const approved = await koagent('runs', 'approve', runId, '--store', db, '--agents', AGENTS, '--args', '{"to":"Ada","amount":40}', '--actor', 'grace@example.com', '--reason', 'Round it down');
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    const state = JSON.parse((await koagent('runs', 'export', runId, '--store', db)).stdout) as RunState;
    expect(state.decisionLog).toEqual([{
      toolCallId: 't1', toolName: 'transfer', decision: 'approved', args: { to: 'Ada', amount: 42.5 }, editedArgs: { to: 'Ada', amount: 40 },
      reason: 'Round it down', actor: { id: 'grace@example.com' }, surface: 'cli', at: expect.stringMatching(/^\d{4}-/), segment: 2,
    }]);
    const { stdout } = await koagent('runs', 'show', runId, '--store', db);
    expect(stdout).toMatch(/\nDecisions\n {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}transfer \(t1\) {2}approved with edited arguments \(\/args\/amount 42\.5 → 40\) by grace@example\.com via cli: Round it down {2}segment 2\n/);
    // The approval step of the segment where the transfer ran says the same, not "passed it on unchanged".
    expect(stdout).toMatch(/tool transfer t1 {2}step 1, segment 2 {2}ok.*\n(.*\n)*?\s+koagent:approval \(builtin\).*\n\s+· human decision: approved with edited arguments \(\/args\/amount 42\.5 → 40\) by grace@example\.com via cli/);
  });

  it('records the user running the command when no --actor is given, and refuses an empty --actor (exit 2)', async () => {
    const store = sqliteStore({ path: db });
    const runId = (await bank.run('Pay Ada 42.5', { store })).runId;
    await store.close();
    const empty = await koagent('runs', 'deny', runId, '--store', db, '--agents', AGENTS, '--reason', 'No', '--actor', ' ');
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringMatching(/--actor needs a name/) });
    const denied = await koagent('runs', 'deny', runId, '--store', db, '--agents', AGENTS, '--reason', 'Not this month');
    expect(denied.code).toBe(0);
    const state = JSON.parse((await koagent('runs', 'export', runId, '--store', db)).stdout) as RunState;
    expect(state.decisionLog).toEqual([expect.objectContaining({ decision: 'denied', reason: 'Not this month', actor: { id: userInfo().username }, surface: 'cli' })]);
    expect((await koagent('runs', 'show', runId, '--store', db)).stdout).toContain(`transfer (t1)  denied by ${userInfo().username} via cli: Not this month`);
  });

  it('deletes a run, and exits 3 when it is gone', async () => {
    expect((await koagent('runs', 'delete', completed, '--store', db)).code).toBe(0);
    const again = await koagent('runs', 'delete', completed, '--store', db);
    expect(again.code).toBe(3);
  });
});

describe('runs recover', () => {
  it('continues a run whose worker died, through its agent, once its lease expired', async () => {
    // The dead worker's clock was a minute behind: its lease had run out by the time it took it.
    const store = sqliteStore({ path: db, leaseMs: 50, clock: offsetClock(-60_000) });
    const worker = mortal(store);
    let runId = '';
    // The worker dies as the run starts: the run stays running in the store, its lease out.
    void helper.run('Help me', { store: worker.store, onEvent: (event) => { if (event.type === 'run.start') { runId = event.runId; worker.die(); } } });
    await worker.died;
    await store.close();
    expect(runId).not.toBe('');
    const { code, stdout, stderr } = await koagent('runs', 'recover', runId, '--store', db, '--agents', AGENTS);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(`recovered ${runId}: completed\n`);
    const again = await koagent('runs', 'recover', runId, '--store', db, '--agents', AGENTS);
    expect(again.code).toBe(4);
  });
});

describe('usage', () => {
  it('exits 2 on an unknown command or flag, saying which', async () => {
    expect(await koagent('walk')).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown command "walk"/) });
    expect(await koagent('runs', 'ls', '--store', db, '--colour')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--colour/) });
  });

  it('prints the package\'s version with --version and -v', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(await koagent('--version')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(await koagent('-v')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('ends the help with where the manual is: the repository\'s docs/cli.md, since the package ships no docs', async () => {
    const { repository } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { repository: { url: string } };
    const web = repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    const { code, stdout } = await koagent('--help');
    expect(code).toBe(0);
    expect(stdout.trim().split('\n').at(-1)).toBe(`The manual: ${web}/blob/main/docs/cli.md`);
    expect(stdout).toContain('koagent --version');
  });
});
