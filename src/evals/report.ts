// An evaluation's report, and its three forms: a table for people, JUnit XML for a CI's test
// view, and JSON (the report itself) for scripts and as the next evaluation's baseline.

/**
 * One scorer's verdict on one example: the score (0 to 1), whether the example passes it, why it
 * lost points, and whether it could not be scored (the run failed, the scorer threw).
 *
 * @example const lost = Object.entries(example.scores).filter(([, s]) => !s.pass).map(([name, s]) => `${name}: ${s.reason}`);
 *
 * @inline
 */
export interface ScoreResult {
  score: number;
  pass: boolean;
  reason?: string;
  /** The run failed or the scorer threw (or gave no score): `reason` says which. */
  error?: boolean;
}

/**
 * One example's run and its scores (a scorer that left the example out is absent).
 *
 * @example for (const e of report.examples) console.log(e.id, e.runId, e.scores.answer?.score);
 *
 * @inline
 */
export interface ExampleResult {
  id: string;
  /** The stored run's id (absent when the run could not start). */
  runId?: string;
  status: 'completed' | 'suspended' | 'failed';
  /** Why the run failed. */
  error?: string;
  durationMs: number;
  scores: Record<string, ScoreResult>;
}

/**
 * One scorer over the examples: its mean (absent when it scored none), how many it scored and
 * passed, and what the gate held it to.
 *
 * @example const { mean, threshold } = report.scorers.answer;
 *
 * @inline
 */
export interface ScorerSummary {
  mean?: number;
  scored: number;
  passed: number;
  threshold?: number;
  baseline?: number;
  margin?: number;
}

/**
 * One check of the gate: a scorer's mean against its threshold, or against its baseline less the margin.
 *
 * @example for (const check of report.checks.filter((c) => !c.passed)) console.error(check.message);
 *
 * @inline
 */
export interface GateCheck {
  scorer: string;
  kind: 'threshold' | 'baseline';
  passed: boolean;
  message: string;
}

/**
 * What `evaluate` returns and `koagent eval --json` writes: every example's run and scores, each
 * scorer's summary, and the gate's checks (`passed`: all of them held). A report is also a
 * baseline for a later evaluation.
 *
 * @example const report = await evaluate({ agent, dataset, scorers, thresholds: { answer: 0.9 } }); if (!report.passed) process.exitCode = 1;
 */
export interface EvalReport {
  version: 1;
  name: string;
  /** This evaluation's id (`eval_…`), under which the store keeps the report. */
  id: string;
  /** ISO 8601. */
  startedAt: string;
  durationMs: number;
  passed: boolean;
  /** Runs that failed (each scorer gave them 0). */
  failedRuns: number;
  /** The baseline's id, when there was one. */
  baseline?: string;
  examples: ExampleResult[];
  scorers: Record<string, ScorerSummary>;
  checks: GateCheck[];
}

const score = (n: number | undefined) => (n === undefined ? '-' : n === 1 || n === 0 ? String(n) : n.toFixed(2));

/** Rows under a header, each column as wide as its widest cell. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

/**
 * The report for people: a row per example with its scores (✗ lost points, ! could not be
 * scored), a row per scorer with its mean and what the gate held it to, why each example lost
 * points, and the gate's verdict with the checks that failed.
 *
 * @example console.log(formatReport(await evaluate({ agent, dataset, scorers })));
 */
export function formatReport(report: EvalReport): string {
  const names = Object.keys(report.scorers);
  const lines = [`${report.name}: ${report.examples.length} example${report.examples.length === 1 ? '' : 's'}${report.failedRuns > 0 ? `, ${report.failedRuns} failed run${report.failedRuns === 1 ? '' : 's'}` : ''} (${(report.durationMs / 1000).toFixed(1)} s, ${report.id})`, ''];
  lines.push(...table(['EXAMPLE', 'RUN', ...names], report.examples.map((e) => [
    e.id,
    e.status === 'failed' ? 'failed' : e.runId ?? '',
    ...names.map((name) => {
      const s = e.scores[name];
      return s === undefined ? '-' : `${score(s.score)}${s.error ? ' !' : s.pass ? '' : ' ✗'}`;
    }),
  ])));
  lines.push('');
  lines.push(...table(['SCORER', 'MEAN', 'PASSED', 'THRESHOLD', 'BASELINE'], names.map((name) => {
    const s = report.scorers[name];
    return [name, score(s.mean), `${s.passed}/${s.scored}`, s.threshold === undefined ? '-' : `≥ ${s.threshold.toFixed(2)}`, s.baseline === undefined ? '-' : `${s.baseline.toFixed(2)} (margin ${(s.margin ?? 0).toFixed(2)})`];
  })));
  const lost = report.examples.flatMap((e) => (e.status === 'failed'
    ? [`  ${e.id}: the run failed: ${e.error ?? 'unknown error'}`]
    : Object.entries(e.scores).filter(([, s]) => !s.pass).map(([name, s]) => `  ${e.id} ${name} ${score(s.score)}: ${s.reason ?? 'no reason given'}`)));
  if (lost.length > 0) lines.push('', 'Lost points', ...lost);
  const failed = report.checks.filter((check) => !check.passed);
  lines.push('');
  if (report.checks.length === 0) lines.push('gate: nothing to check (no thresholds, no baseline)');
  else if (failed.length === 0) lines.push(`gate passed: ${report.checks.length} check${report.checks.length === 1 ? '' : 's'} held`);
  else lines.push(`gate FAILED: ${failed.length} of ${report.checks.length} checks`, ...failed.map((check) => `  ${check.message}`));
  return lines.join('\n');
}

/** Text as XML holds it in an attribute or an element: the five special characters escaped, characters XML 1.0 forbids dropped. */
function xml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/**
 * The report as JUnit XML, for a CI's test view: a test case per example (a failure when it lost
 * points, an error when its run failed or a scorer could not score it, its run id and scores as
 * properties), and a test case per check of the gate.
 *
 * @example writeFileSync('evals.xml', junitXml(report));
 */
export function junitXml(report: EvalReport): string {
  const cases = report.examples.map((e) => {
    const properties = [['runId', e.runId ?? ''], ...Object.entries(e.scores).map(([name, s]) => [`score.${name}`, String(s.score)])]
      .map(([name, value]) => `<property name="${xml(name)}" value="${xml(value)}"/>`).join('');
    const errors = e.status === 'failed' ? [`the run failed: ${e.error ?? 'unknown error'}`] : Object.entries(e.scores).filter(([, s]) => s.error).map(([name, s]) => `${name}: ${s.reason ?? ''}`);
    const lost = Object.entries(e.scores).filter(([, s]) => !s.pass && !s.error).map(([name, s]) => `${name} ${score(s.score)}: ${s.reason ?? 'no reason given'}`);
    const verdict = errors.length > 0
      ? `<error type="${e.status === 'failed' ? 'run' : 'scorer'}" message="${xml(errors[0])}">${xml([...errors, ...lost].join('\n'))}</error>`
      : lost.length > 0 ? `<failure type="score" message="${xml(lost[0])}">${xml(lost.join('\n'))}</failure>` : '';
    return { xml: `    <testcase classname="${xml(report.name)}" name="${xml(e.id)}" time="${seconds(e.durationMs)}"><properties>${properties}</properties>${verdict}</testcase>`, failure: errors.length === 0 && lost.length > 0, error: errors.length > 0 };
  });
  const checks = report.checks.map((check) => `    <testcase classname="${xml(`${report.name}.gate`)}" name="${xml(`${check.scorer} ${check.kind}`)}" time="0">${check.passed ? '' : `<failure type="gate" message="${xml(check.message)}">${xml(check.message)}</failure>`}</testcase>`);
  const failures = cases.filter((c) => c.failure).length;
  const errors = cases.filter((c) => c.error).length;
  const gateFailures = report.checks.filter((c) => !c.passed).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(report.name)}" tests="${cases.length + checks.length}" failures="${failures + gateFailures}" errors="${errors}" time="${seconds(report.durationMs)}">`,
    `  <testsuite name="${xml(report.name)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds(report.durationMs)}" timestamp="${xml(report.startedAt)}">`,
    ...cases.map((c) => c.xml),
    '  </testsuite>',
    `  <testsuite name="${xml(`${report.name} gate`)}" tests="${checks.length}" failures="${gateFailures}" errors="0" skipped="0" time="0">`,
    ...checks,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/**
 * The keys a run store's key values keep an evaluation's reports under: the latest, the latest
 * whose gate passed (the stored baseline), and each by its id.
 *
 * @example const last = await store.keyValues?.get(reportKeys('weather').latest);
 */
export function reportKeys(name: string, id = ''): { latest: string; passed: string; byId: string } {
  return { latest: `koagent.eval:${name}:latest`, passed: `koagent.eval:${name}:passed`, byId: `koagent.eval:${name}:${id}` };
}

/** The counter of stored reports, and each one's entry under it: the store's key values hold no list of their keys. */
const INDEX_COUNT = 'koagent.eval:count';
const indexEntry = (n: number) => `koagent.eval:#${n}`;

/**
 * Keep `report` in `keyValues`: by its id, as its evaluation's latest (and latest passed), and in
 * the index the studio lists evaluations from. The index entry takes a number from an atomic
 * counter, so two evaluations stored at once each keep theirs.
 *
 * @example await storeReport(store.keyValues, report);
 */
export async function storeReport(keyValues: KeyValuesLike, report: EvalReport): Promise<void> {
  const keys = reportKeys(report.name, report.id);
  await keyValues.set(keys.byId, report);
  await keyValues.set(keys.latest, report);
  if (report.passed) await keyValues.set(keys.passed, report);
  const n = await keyValues.add(INDEX_COUNT, 1);
  await keyValues.set(indexEntry(n), { name: report.name, id: report.id });
}

/**
 * The reports stored in `keyValues` (`storeReport`), the latest first, at most `limit`.
 *
 * @example for (const report of await storedReports(store.keyValues, 20)) console.log(report.name, report.passed);
 */
export async function storedReports(keyValues: KeyValuesLike, limit: number): Promise<EvalReport[]> {
  const count = await keyValues.get(INDEX_COUNT);
  const last = typeof count === 'number' && Number.isInteger(count) ? count : 0;
  const reports: EvalReport[] = [];
  for (let n = last; n >= 1 && reports.length < limit; n--) {
    const entry = (await keyValues.get(indexEntry(n))) as { name?: unknown; id?: unknown } | undefined;
    if (typeof entry?.name !== 'string' || typeof entry.id !== 'string') continue;
    const report = (await keyValues.get(reportKeys(entry.name, entry.id).byId)) as EvalReport | undefined;
    if (report?.version === 1) reports.push(report);
  }
  return reports;
}

/** What the report's keeping needs of a run store's key values. */
interface KeyValuesLike {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  add(key: string, delta: number): Promise<number>;
}
