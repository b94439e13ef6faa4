/**
 * Evaluations with a gate: run an agent over a dataset of examples (an array, or a JSONL file),
 * score each run with plain functions (exact, regex, JSON Schema, tool called with arguments,
 * layer trace effects, cost and steps, or graded by a model you give), and hold each score to a
 * threshold and to a baseline less a margin. The report prints as a table and writes as JUnit XML
 * and JSON; `koagent eval <file>` runs an evaluation module and exits non-zero when the gate
 * fails. See docs/replay-and-evals.md.
 *
 * @example
 * ```ts
 * import { evaluate, exact, toolCalled, formatReport } from 'koagent/evals';
 * ```
 *
 * @packageDocumentation
 * @module koagent/evals
 */
// The `koagent/evals` entry: the functions users call, and the records they name (the report, a
// scorer, an example); the rest is read from those (`Parameters<Scorer>[0]` is a scored run).
// Ajv, which the jsonSchema scorer checks with, is loaded when such a scorer first runs, so
// importing this entry needs no optional peer.
/** @category Evaluations */
export { defineEvaluation, evaluate } from './evals/evaluate.js';
/** @category Evaluations */
export { checkExamples, loadDataset, type EvalExample } from './evals/dataset.js';
/** @category Scorers */
export { costAtMost, exact, jsonSchema, matches, stepsAtMost, toolCalled, traceEffect, type Scorer } from './evals/scorers.js';
/** @category Scorers */
export { modelGraded } from './evals/model-graded.js';
/** @category Evaluations */
export { formatReport, junitXml, type EvalReport } from './evals/report.js';
