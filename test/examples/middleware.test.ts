// examples/middleware.ts: every built-in middleware on one agent prints what it did, from its own
// callbacks and events; it runs by itself, offline, with `npx tsx`.
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/middleware.js';
import { runExample } from '../support/examples.js';

/** What each built-in is expected to have said it did, by its name. */
const DID: Record<string, RegExp> = {
  'cost-budget': /^\[cost-budget\] the run cost \$0\.\d+: primary-model \$0\.\d+, backup-model \$0\.\d+ \(budget \$1\.00\)$/,
  guardrails: /^\[guardrails\] input checked \(no-injection\): "Plan a weekend in Oslo for me \(\[EMAIL\]\) and send me the plan\."$/,
  'tool-selector': /^\[tool-selector\] kept 6 of 8 tools for this turn: get_weather, find_contacts/,
  'context-editing': /^\[context-editing\] cleared \d+ old tool results?: \d+ → \d+ tokens$/,
  'todo-list': /^\[todo-list\] the plan: Check the weather \(completed\), Find a hotel \(completed\), Send the plan \(completed\)$/,
  'loop-detection': /^\[loop-detection\] check_availability called 3 times with the same arguments: not run/,
  'tool-call-limit': /^\[tool-call-limit\] search_hotels may run once a run: this call was refused$/,
  'tool-cache': /^\[tool-cache\] get_weather answered from the cache: the tool did not run$/,
  'response-cache': /^\[response-cache\] the same request was answered before: no model call, \d+ tokens saved$/,
  'pii-redaction': /^\[pii-redaction\] 2 e-mail addresses masked in the tool result$/,
  'tool-emulator': /^\[tool-emulator\] send_email emulated \(to \[EMAIL\]\): nothing was sent$/,
  'prompt-caching': /^\[prompt-caching\] the last request had 3 of its \d+ messages marked/,
  'model-fallback': /^\[model-fallback\] primary-model failed with 503, backup-model answered$/,
  'rate-limit': /^\[rate-limit\] mockModel\/primary-model is at 4 requests a minute: waited \d+ s \(simulated\)$/,
};

describe('examples/middleware.ts', () => {
  it('prints, for every built-in, what it did', async () => {
    const lines: string[] = [];
    const { trip, again } = await main((line) => lines.push(line));
    for (const [name, did] of Object.entries(DID)) expect(lines.some((line) => did.test(line)), `${name}: ${did}`).toBe(true);
    expect(trip.text).toBe('The Grand in Oslo it is; the plan went to [EMAIL].');
    expect(again.usage.cacheHits).toBe(1);
    // The first tool call ran, its repeat came from the cache.
    expect(lines.filter((line) => line === '  (get_weather runs for Oslo)')).toHaveLength(1);
    expect(lines.join('\n')).not.toMatch(/ana@example\.com|visitoslo|grand-oslo/);
  });

  it('runs by itself with npx tsx, offline, naming each of the fourteen', async () => {
    const { code, stdout, stderr } = await runExample('examples/middleware.ts');
    expect(code, stderr).toBe(0);
    for (const name of Object.keys(DID)) expect(stdout).toContain(`[${name}]`);
    expect(stdout.trim().split('\n').at(-1)).toMatch(/^answer: I plan trips/);
  });
});
