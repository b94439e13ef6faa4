// The report as a table for people: scores, means, why examples lost points, the gate's verdict.
// (Its JUnit XML is parsed back by a browser's XML parser in junit-xml.test.ts.)
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { evaluate, exact, formatReport } from '../../src/evals.js';
import { mixed } from './support.js';

describe('formatReport', () => {
  it('shows a row per example, a row per scorer, why each example lost points and the checks that failed', async () => {
    const report = await mixed();
    const text = formatReport(report);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^weather: 3 examples, 1 failed run \(\d+\.\d s, eval_[0-9a-f-]+\)$/);
    expect(lines).toContainEqual(expect.stringMatching(/^EXAMPLE\s+RUN\s+answer\s+short$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ok\s+run_\S+\s+1\s+1$/));
    expect(lines).toContainEqual(expect.stringMatching(/^a<b>&"c'\s+run_\S+\s+0 ✗\s+1$/));
    expect(lines).toContainEqual(expect.stringMatching(/^down\s+failed\s+0 !\s+0 !$/));
    expect(lines).toContainEqual(expect.stringMatching(/^answer\s+0\.33\s+1\/3\s+≥ 0\.90\s+-$/));
    expect(text).toContain('Lost points\n  a<b>&"c\' answer 0: expected "Sunny.", got "Rainy & <cold>."\n  down: the run failed: ');
    expect(text.endsWith('gate FAILED: 1 of 1 checks\n  answer: mean 0.33 is below its threshold 0.90 (2 of 3 examples lost points)')).toBe(true);
  });

  it('says when the gate passed, and when it had nothing to check', async () => {
    const base = { agent: createAgent({ model: mockModel(['Sunny.', 'Sunny.']) }), dataset: [{ input: 'Paris?', expected: 'Sunny.' }], scorers: { answer: exact() } };
    expect(formatReport(await evaluate({ ...base, thresholds: { answer: 1 } }))).toMatch(/\ngate passed: 1 check held$/);
    expect(formatReport(await evaluate(base))).toMatch(/\ngate: nothing to check \(no thresholds, no baseline\)$/);
  });
});
