// examples/evals.ts runs offline: the gate passes on the agent as it is, then fails after the
// deliberate regression, naming the examples, the arguments the tool got and the checks.
import { describe, expect, it } from 'vitest';
import { runExample } from '../support/examples.js';

describe('examples/evals.ts', () => {
  it('passes the gate, writes the reports, then fails it after dropping the layer, against the first report as baseline', async () => {
    const { code, stdout, stderr } = await runExample('examples/evals.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const [before, after] = stdout.split('--- after a change that drops tidy-city ---');
    expect(before).toMatch(/\nparis\s+run_\S+\s+1\s+1\s+1\s+1\s+0\.90\n/);
    expect(before).toContain('gate passed: 3 checks held');
    expect(before).toContain('wrote weather.xml (JUnit) and weather.json');
    expect(after).toContain('  paris tool 0: expected a call of weather with {"city":"Paris"}; the calls were weather {"city":"paris"}');
    expect(after).toContain('gate FAILED: 3 of 8 checks\n  tool: mean 0.00 is below its threshold 1.00 (3 of 3 examples lost points)\n  tool: mean 0.00 fell 1.00 below the baseline 1.00, more than the margin 0.05\n');
    expect(after).toContain('gate: passed before, failed after');
  });
});
