// The gate: each scorer's mean held to its threshold and to a baseline (an earlier report) less a
// margin. Scores here come straight from the examples (a scorer returning the example's own
// number), so each mean is known before the evaluation runs.
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { evaluate, type EvalReport } from '../../src/evals.js';
import type { EvaluateOptions } from '../../src/evals/evaluate.js';

/** An evaluation whose scorer `quality` gives each example the number it expects; `tone` always 1. */
function scoring(scores: number[], options: Partial<EvaluateOptions<number>> = {}): Promise<EvalReport> {
  return evaluate<number>({
    name: 'gate',
    agent: () => createAgent({ model: mockModel(['Fine.']) }),
    dataset: scores.map((expected, i) => ({ id: `e${i}`, input: 'Hi', expected })),
    scorers: { quality: (run) => run.example.expected, tone: () => true },
    ...options,
  });
}

describe('thresholds', () => {
  it('pass when each mean reaches its threshold (a mean equal to it included), and fail naming the scorer, its mean and how many examples lost points', async () => {
    const met = await scoring([1, 0.5, 0.6], { thresholds: { quality: 0.7, tone: 1 } });
    expect(met.scorers.quality.mean).toBeCloseTo(0.7);
    expect(met.passed).toBe(true);
    expect(met.checks).toEqual([
      { scorer: 'quality', kind: 'threshold', passed: true, message: 'quality: mean 0.70 meets its threshold 0.70' },
      { scorer: 'tone', kind: 'threshold', passed: true, message: 'tone: mean 1.00 meets its threshold 1.00' },
    ]);
    const below = await scoring([1, 0.5, 0.5], { thresholds: { quality: 0.7 } });
    expect(below.passed).toBe(false);
    expect(below.checks[0]).toEqual({ scorer: 'quality', kind: 'threshold', passed: false, message: 'quality: mean 0.67 is below its threshold 0.70 (2 of 3 examples lost points)' });
  });

  it('fail when the scorer scored no example, since the threshold cannot be checked', async () => {
    const report = await evaluate({ agent: createAgent({ model: mockModel(['a', 'b']) }), dataset: [{ input: 'x' }, { input: 'y' }], scorers: { never: () => undefined }, thresholds: { never: 0.5 }, concurrency: 1 });
    expect(report.scorers.never).toEqual({ scored: 0, passed: 0, threshold: 0.5 });
    expect(report.checks).toEqual([expect.objectContaining({ passed: false, message: expect.stringContaining('never: no example was scored, so its threshold 0.50 cannot be checked') })]);
  });

  it('are refused when they name no scorer (the one meant is named) or lie outside 0 to 1', async () => {
    await expect(scoring([1], { thresholds: { qualty: 0.5 } as never })).rejects.toThrow('evaluate: thresholds: qualty is not a scorer of this evaluation (thresholds name scorers); did you mean `quality`?');
    await expect(scoring([1], { thresholds: { quality: 90 } })).rejects.toThrow('evaluate: thresholds: quality must be a number from 0 to 1');
  });

  it('without thresholds or a baseline, the gate checks nothing and passes', async () => {
    const report = await scoring([0]);
    expect(report.checks).toEqual([]);
    expect(report.passed).toBe(true);
  });
});

describe('a baseline', () => {
  it('passes a mean that fell less than the margin, and fails one that fell more, saying by how much', async () => {
    const baseline = await scoring([1, 1, 1, 1]);
    const within = await scoring([1, 1, 1, 0.8], { baseline, margin: 0.05 });
    expect(within.passed).toBe(true);
    expect(within.baseline).toBe(baseline.id);
    expect(within.checks.find((c) => c.scorer === 'quality')).toEqual({ scorer: 'quality', kind: 'baseline', passed: true, message: 'quality: mean 0.95 fell 0.05 below the baseline 1.00, within the margin 0.05' });
    const beyond = await scoring([1, 1, 0.8, 0.8], { baseline, margin: 0.05 });
    expect(beyond.passed).toBe(false);
    expect(beyond.checks.find((c) => c.scorer === 'quality')).toEqual({ scorer: 'quality', kind: 'baseline', passed: false, message: 'quality: mean 0.90 fell 0.10 below the baseline 1.00, more than the margin 0.05' });
    expect(beyond.scorers.quality).toMatchObject({ baseline: 1, margin: 0.05 });
  });

  it('holds with no margin (the default) only a mean at least the baseline\'s; a rise passes', async () => {
    const baseline = await scoring([0.5, 0.5]);
    expect((await scoring([0.5, 0.4], { baseline })).passed).toBe(false);
    const rose = await scoring([0.9, 0.5], { baseline });
    expect(rose.passed).toBe(true);
    expect(rose.checks[0].message).toBe('quality: mean 0.70 rose 0.20 above the baseline 0.50');
  });

  it('takes a margin per scorer', async () => {
    const baseline = await scoring([1, 1]);
    const report = await scoring([0.8, 1], { baseline, margin: { quality: 0.2 } });
    expect(report.passed).toBe(true);
    expect(report.scorers.tone.margin).toBe(0);
  });

  it('fails when the baseline has a scorer this evaluation no longer has (a check must not vanish quietly)', async () => {
    const baseline = await scoring([1]);
    const report = await evaluate({ name: 'gate', agent: () => createAgent({ model: mockModel(['Fine.']) }), dataset: [{ input: 'Hi' }], scorers: { quality: () => 1 }, baseline });
    expect(report.checks).toContainEqual(expect.objectContaining({ scorer: 'tone', passed: false, message: expect.stringContaining('tone: the baseline (eval_') }));
  });

  it('is refused when it is not a report, with what to give instead', async () => {
    await expect(scoring([1], { baseline: { scorers: {} } as never })).rejects.toThrow('evaluate: baseline is not a report of an evaluation (its version is undefined, not 1): give the report an earlier evaluate() returned, or the JSON file koagent eval --json wrote');
    await expect(scoring([1], { baseline: { version: 1, scorers: { quality: { mean: 'high' } } } as never })).rejects.toThrow('scorers.quality.mean is not a number');
  });
});
