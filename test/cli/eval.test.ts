// `koagent eval <file>` run as a user runs it (the bin in a child process) on a small dataset: the
// gate passes, then fails after a deliberate regression (a layer left out) with a report that
// says which examples lost points and why; the JUnit XML and JSON it writes, the runs it stores,
// a baseline from a file or from the store, and its usage errors.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/sqlite.js';
import type { EvalReport } from '../../src/evals.js';
import { koagent } from '../support/cli.js';

const MODULE = 'test/fixtures/weather-eval.ts';
const dir = mkdtempSync(join(tmpdir(), 'koagent-eval-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const regressed = { ...process.env, KOAGENT_EVAL_REGRESSION: 'tidy-city' };
/** Each test runs the bin one or more times, each a Node process with tsx: a minute each on a loaded machine. */
const SLOW = 60_000;
const report = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as EvalReport;

describe('koagent eval: the gate', () => {
  it('passes on the agent as it is: the table, "gate passed", exit 0, and the runs stored', async () => {
    const db = join(dir, 'pass.db');
    const { code, stdout, stderr } = await koagent(['eval', MODULE, '--store', db, '--json', join(dir, 'pass.json'), '--junit', join(dir, 'out/pass.xml')]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^weather: 3 examples \(/);
    expect(stdout).toMatch(/\nparis\s+run_\S+\s+1\s+1\s+1\s+1\n/);
    expect(stdout).toMatch(/\ntool\s+1\s+3\/3\s+≥ 1\.00\s+-\n/);
    expect(stdout).toMatch(/\ngate passed: 4 checks held\n$/);
    const written = report(join(dir, 'pass.json'));
    expect(written).toMatchObject({ version: 1, name: 'weather', passed: true, failedRuns: 0 });
    const store = sqliteStore({ path: db });
    try {
      for (const example of written.examples) expect(await store.loadRun(example.runId!)).toMatchObject({ status: 'completed', agentName: 'weather' });
      expect(await store.keyValues!.get('koagent.eval:weather:passed')).toEqual(written);
    } finally {
      await store.close();
    }
    expect(readFileSync(join(dir, 'out/pass.xml'), 'utf8')).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="weather" tests="7" failures="0" errors="0"/);
  }, SLOW);

  it('fails after a deliberate regression (the tidy-city layer left out): exit 1, naming the check, the examples and what the tool got', async () => {
    const { code, stdout, stderr } = await koagent(['eval', MODULE, '--junit', join(dir, 'fail.xml')], regressed);
    expect(code).toBe(1);
    expect(stdout).toMatch(/\nparis\s+run_\S+\s+1\s+0 ✗\s+0 ✗\s+1\n/);
    expect(stdout).toContain('\nLost points\n  paris tool 0: expected a call of weather with {"city":"Paris"}; the calls were weather {"city":"paris"}\n');
    expect(stdout).toContain('  oslo tidied 0: expected rewrote-args by tidy-city on weather; the trace shows no effect\n');
    expect(stdout).toMatch(/\ngate FAILED: 2 of 4 checks\n {2}tool: mean 0\.33 is below its threshold 1\.00 \(2 of 3 examples lost points\)\n {2}tidied: mean 0\.00 is below its threshold 1\.00 \(2 of 2 examples lost points\)\n$/);
    expect(stderr).toBe('koagent eval: the gate failed (2 of 4 checks); see the report above\n');
    expect(readFileSync(join(dir, 'fail.xml'), 'utf8')).toContain('<failure type="gate" message="tool: mean 0.33 is below its threshold 1.00 (2 of 3 examples lost points)">');
  }, SLOW);
});

describe('koagent eval: baselines', () => {
  it('--baseline <report.json> --margin: holds the means to an earlier report less the margin', async () => {
    const baseline = join(dir, 'baseline.json');
    expect((await koagent(['eval', MODULE, '--json', baseline])).code).toBe(0);
    const { code, stdout } = await koagent(['eval', MODULE, '--baseline', baseline, '--margin', '0.1'], regressed);
    expect(code).toBe(1);
    expect(stdout).toMatch(/\ntool\s+0\.33\s+1\/3\s+≥ 1\.00\s+1\.00 \(margin 0\.10\)\n/);
    expect(stdout).toContain('  tool: mean 0.33 fell 0.67 below the baseline 1.00, more than the margin 0.10\n');
    expect((await koagent(['eval', MODULE, '--baseline', baseline])).stdout).toContain('gate passed: 8 checks held');
  }, SLOW);

  it('--baseline stored: the store\'s latest evaluation of this name that passed', async () => {
    const db = join(dir, 'stored.db');
    const first = await koagent(['eval', MODULE, '--store', db, '--baseline', 'stored']);
    expect(first.code).toBe(2);
    expect(first.stderr).toContain('koagent: evaluate: baseline \'stored\': the store holds no evaluation "weather" that passed its gate yet; run one without a baseline first');
    expect((await koagent(['eval', MODULE, '--store', db])).code).toBe(0);
    const { code, stdout } = await koagent(['eval', MODULE, '--store', db, '--baseline', 'stored'], regressed);
    expect(code).toBe(1);
    expect(stdout).toContain('  tidied: mean 0.00 fell 1.00 below the baseline 1.00, more than the margin 0.00\n');
  }, SLOW);
});

describe('koagent eval: mistakes', () => {
  const module = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('a dataset line that is not JSON: exit 2, naming the file, the line and the fix, before any run', async () => {
    const data = join(dir, 'bad.jsonl');
    writeFileSync(data, '{"input": "Hi"}\n{"input": "Bye"\n');
    const file = module('bad-data.mjs', `export default { agent: { name: 'x', run() { throw new Error('ran'); } }, dataset: ${JSON.stringify(data)}, scorers: { a: () => 1 } };`);
    const { code, stderr } = await koagent(['eval', file]);
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`^koagent: ${data.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: this line is not JSON \\(.*\\): a JSONL file holds one example a line`));
  }, SLOW);

  it('a module that declares no evaluation, a bad flag value, a missing module: each with its exit code and fix', async () => {
    const none = await koagent(['eval', module('none.mjs', 'export const x = 1;')]);
    expect(none).toMatchObject({ code: 2, stderr: expect.stringContaining('exports no evaluation: write export default defineEvaluation({ agent, dataset, scorers, thresholds })') });
    expect(await koagent(['eval', MODULE, '--margin', 'lots'])).toMatchObject({ code: 2, stderr: 'koagent: --margin must be a number from 0 to 1, got lots\n' });
    expect(await koagent(['eval'])).toMatchObject({ code: 2, stderr: expect.stringContaining('eval takes one evaluation module, got none') });
    expect(await koagent(['eval', join(dir, 'missing.ts')])).toMatchObject({ code: 1, stderr: expect.stringContaining('could not be loaded') });
    expect(await koagent(['eval', MODULE, '--baseline', join(dir, 'nope.json')])).toMatchObject({ code: 1, stderr: expect.stringContaining('no baseline at') });
  }, SLOW);

  it('is in the help', async () => {
    expect((await koagent(['--help'])).stdout).toContain('  koagent eval <file> [--junit <file>] [--json <file>] [--baseline <report.json>|stored] [--margin <n>]');
  }, SLOW);
});
