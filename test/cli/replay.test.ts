// `koagent runs fork`, `runs replay` and `runs export --fixture`, run as a user runs them: the bin
// in a child process, against a SQLite file this test fills by running a real agent whose tool
// notes each effect in a file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { fixtureTools, playFixture, type RunFixture } from '../../src/replay.js';
import { helper, noter } from '../fixtures/cli-agents.js';
import { koagent as bin } from '../support/cli.js';

const AGENTS = 'test/fixtures/cli-agents.ts';
const dir = mkdtempSync(join(tmpdir(), 'koagent-cli-replay-'));
const db = join(dir, 'runs.db');
const marks = join(dir, 'marks.txt');
let noted: string;
let plain: string;

const koagent = (args: string[], env: Record<string, string> = {}) => bin(args, { ...process.env, KOAGENT_CLI_MARKS: marks, ...env });
const notes = () => { try { return readFileSync(marks, 'utf8').split('\n').filter(Boolean); } catch { return []; } };

beforeAll(async () => {
  const store = sqliteStore({ path: db });
  process.env.KOAGENT_CLI_MARKS = marks;
  noted = (await noter.run('Note three things', { store })).runId;
  plain = (await helper.run('Help me', { store })).runId;
  delete process.env.KOAGENT_CLI_MARKS;
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runs fork', () => {
  it('forks after a step and continues with the agent\'s code: only the notes after the step are made again', async () => {
    const before = notes().length;
    const { code, stdout, stderr } = await koagent(['runs', 'fork', noted, '--at', '1', '--store', db, '--agents', AGENTS, '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const row = JSON.parse(stdout) as { runId: string; forkedFrom: unknown; status: string; text: string };
    expect(row).toMatchObject({ forkedFrom: { runId: noted, step: 1 }, status: 'completed', text: 'Noted: {"noted":"one"} | {"noted":"two"} | {"noted":"three"}' });
    expect(notes().slice(before)).toEqual(['note two', 'note three']);
    const shown = await koagent(['runs', 'show', row.runId, '--store', db]);
    expect(shown.stdout).toContain(`forked from ${noted} after step 1`);
  });

  it('with --edit, the fork sees the changed tool result', async () => {
    const { code, stdout } = await koagent(['runs', 'fork', noted, '--at', '1', '--store', db, '--agents', AGENTS, '--edit', '{"toolResults":{"n1":"lost"}}']);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^forked ${noted} after step 1: run run_\\S+ is completed \\(final\\): Noted: lost \\| \\{"noted":"two"\\}`));
  });

  it('refuses without --at (exit 2), and a run not recorded with its layer trace (exit 4)', async () => {
    const missing = await koagent(['runs', 'fork', noted, '--store', db, '--agents', AGENTS]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/fork needs --at <step>/);
    const unrecorded = await koagent(['runs', 'fork', plain, '--at', '0', '--store', db, '--agents', AGENTS]);
    expect(unrecorded.code).toBe(4);
    expect(unrecorded.stderr).toMatch(new RegExp(`run ${plain} was not forked: .*was not recorded`));
  });
});

describe('runs replay', () => {
  it('replays with no change: the same as stored, the two traces side by side, no note made', async () => {
    const before = notes().length;
    const { code, stdout } = await koagent(['runs', 'replay', noted, '--store', db, '--agents', AGENTS]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^replay of \S+: the same as stored \(4 model replies and 3 tool results from the record; the model and the tools were not called\)/);
    expect(stdout).toMatch(/ {2}CALL\s+THEN \(stored\)\s+NOW \(replayed\)/);
    expect(stdout).toMatch(/\n {2}tool note n2 \(step 2\)\s+ok\s+ok\n/);
    expect(notes()).toHaveLength(before);
  });

  it('with a changed layer, stops at the first difference, names it, marks it, and exits 1', async () => {
    const { code, stdout } = await koagent(['runs', 'replay', noted, '--store', db, '--agents', AGENTS], { KOAGENT_CLI_CHANGE: '1' });
    expect(code).toBe(1);
    expect(stdout).toMatch(/^replay of \S+: diverged at tool note \(n2, step 2\): the call runs with other arguments\n {2}\/args\/text: "two" → "TWO"/);
    expect(stdout).toMatch(/\n≠ {5}louder\s+passed it on\s+rewrote-args: \/args\/text "two" → "TWO"/);
  });
});

describe('runs export --fixture', () => {
  it('writes the run as a fixture that replays it offline to the same final transcript', async () => {
    const { code, stdout } = await koagent(['runs', 'export', noted, '--store', db, '--fixture']);
    expect(code).toBe(0);
    const fixture = JSON.parse(stdout) as RunFixture;
    expect(fixture.runId).toBe(noted);
    const agent = createAgent({ name: 'noter', model: mockModel(fixture.replies), tools: fixtureTools(fixture, [...noter.tools.values()]) });
    const before = notes().length;
    const result = await playFixture(agent, fixture);
    expect(result.messages).toEqual(fixture.messages);
    expect(notes()).toHaveLength(before);
  });

  it('refuses --otlp with --fixture (exit 2), and a run not recorded (exit 4)', async () => {
    expect((await koagent(['runs', 'export', noted, '--store', db, '--fixture', '--otlp'])).code).toBe(2);
    const unrecorded = await koagent(['runs', 'export', plain, '--store', db, '--fixture']);
    expect(unrecorded.code).toBe(4);
    expect(unrecorded.stderr).toMatch(/was not exported as a fixture: .*was not recorded/);
  });
});
