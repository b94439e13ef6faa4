// The gate: each scorer's mean over the examples it scored, held to its threshold and to a
// baseline (an earlier report) less a margin. A check that cannot be made (no example scored, a
// baseline's scorer gone) fails: a gate never passes by checking nothing it was asked to.
import type { EvalReport, ExampleResult, GateCheck, ScorerSummary } from './report.js';

/** Rounding of sums of scores must not fail a mean equal to its bound. */
const EPSILON = 1e-9;

const fixed = (n: number) => n.toFixed(2);

/** Each scorer's mean, how many examples it scored and how many passed it, over `examples`. */
export function summarise(scorers: readonly string[], examples: readonly ExampleResult[]): Record<string, ScorerSummary> {
  const summaries: Record<string, ScorerSummary> = {};
  for (const name of scorers) {
    const results = examples.flatMap((example) => (Object.hasOwn(example.scores, name) ? [example.scores[name]] : []));
    const summary: ScorerSummary = { scored: results.length, passed: results.filter((r) => r.pass).length };
    if (results.length > 0) summary.mean = results.reduce((sum, r) => sum + r.score, 0) / results.length;
    summaries[name] = summary;
  }
  return summaries;
}

/** What the gate holds the means to. */
export interface GateRules {
  thresholds: Record<string, number>;
  baseline?: Pick<EvalReport, 'scorers' | 'id' | 'name'>;
  margin: number | Record<string, number>;
}

/**
 * The gate's checks: each threshold, then each baseline score less its margin. `summaries`
 * gain the threshold, baseline and margin they were held to.
 */
export function gateChecks(summaries: Record<string, ScorerSummary>, rules: GateRules): GateCheck[] {
  const checks: GateCheck[] = [];
  for (const [scorer, threshold] of Object.entries(rules.thresholds)) {
    const summary = summaries[scorer];
    summary.threshold = threshold;
    if (summary.mean === undefined) {
      checks.push({ scorer, kind: 'threshold', passed: false, message: `${scorer}: no example was scored, so its threshold ${fixed(threshold)} cannot be checked (its expectation gave undefined for every example)` });
      continue;
    }
    const passed = summary.mean + EPSILON >= threshold;
    checks.push({ scorer, kind: 'threshold', passed, message: `${scorer}: mean ${fixed(summary.mean)} ${passed ? 'meets' : 'is below'} its threshold ${fixed(threshold)}${passed ? '' : ` (${summary.scored - summary.passed} of ${summary.scored} examples lost points)`}` });
  }
  const baseline = rules.baseline;
  if (baseline === undefined) return checks;
  for (const [scorer, before] of Object.entries(baseline.scorers)) {
    if (before.mean === undefined) continue;
    const summary = summaries[scorer];
    if (summary === undefined) {
      checks.push({ scorer, kind: 'baseline', passed: false, message: `${scorer}: the baseline (${baseline.id}) has a score for it, but this evaluation has no such scorer: give it back, or make a new baseline` });
      continue;
    }
    const margin = typeof rules.margin === 'number' ? rules.margin : rules.margin[scorer] ?? 0;
    summary.baseline = before.mean;
    summary.margin = margin;
    if (summary.mean === undefined) {
      checks.push({ scorer, kind: 'baseline', passed: false, message: `${scorer}: no example was scored, so it cannot be held to its baseline ${fixed(before.mean)}` });
      continue;
    }
    const drop = before.mean - summary.mean;
    const passed = drop <= margin + EPSILON;
    const change = drop > EPSILON ? `fell ${fixed(drop)} below` : drop < -EPSILON ? `rose ${fixed(-drop)} above` : 'equals';
    checks.push({ scorer, kind: 'baseline', passed, message: `${scorer}: mean ${fixed(summary.mean)} ${change} the baseline ${fixed(before.mean)}${drop > EPSILON ? `, ${passed ? 'within' : 'more than'} the margin ${fixed(margin)}` : ''}` });
  }
  return checks;
}

/**
 * `value` checked as a baseline: a report of an earlier evaluation (what `evaluate` returns, or
 * the JSON `koagent eval --json` writes), else a `TypeError` saying what it lacks.
 */
export function checkBaseline(value: unknown, where: string): EvalReport {
  const report = value as Partial<EvalReport> | null;
  const fail = (what: string) => new TypeError(`${where} is not a report of an evaluation (${what}): give the report an earlier evaluate() returned, or the JSON file koagent eval --json wrote`);
  if (typeof report !== 'object' || report === null || Array.isArray(report)) throw fail('it is not an object');
  if (report.version !== 1) throw fail(`its version is ${JSON.stringify(report.version)}, not 1`);
  if (typeof report.scorers !== 'object' || report.scorers === null) throw fail('it has no scorers');
  for (const [name, summary] of Object.entries(report.scorers)) {
    if (typeof summary !== 'object' || summary === null || (summary.mean !== undefined && typeof summary.mean !== 'number')) throw fail(`scorers.${name}.mean is not a number`);
  }
  return report as EvalReport;
}
