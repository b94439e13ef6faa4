// `koagent eval <file>`: run the evaluation a module declares (its default export, the options of
// `evaluate`), print its report, write it as JUnit XML and JSON, and exit 1 when the gate fails.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { evaluate, formatReport, junitXml, type EvalReport } from '../evals.js';

type EvaluateOptions = Parameters<typeof evaluate>[0];
type EvalClient = NonNullable<EvaluateOptions['client']>;
import type { RunStore } from '../stores/run-store.js';
import { importModule } from './agents.js';
import { CliError, EXIT, parse, type Io } from './io.js';
import { openStore } from './stores.js';

export const EVAL_USAGE = `  koagent eval <file> [--junit <file>] [--json <file>] [--baseline <report.json>|stored] [--margin <n>] [--concurrency <n>] [--store <file|url>] [--queue <postgres url>]`;

const FLAGS = {
  junit: { type: 'string' }, json: { type: 'string' }, baseline: { type: 'string' }, margin: { type: 'string' },
  concurrency: { type: 'string' }, store: { type: 'string' }, queue: { type: 'string' },
} as const;

/** The evaluation the module declares: its default export, or its export named `evaluation`. */
async function declared(file: string): Promise<EvaluateOptions> {
  const exports = await importModule(file, 'eval');
  const options = exports.default ?? exports.evaluation;
  if (typeof options !== 'object' || options === null) {
    throw new CliError(EXIT.usage, `${file} exports no evaluation: write export default defineEvaluation({ agent, dataset, scorers, thresholds }) (defineEvaluation from koagent/evals)`);
  }
  return options as EvaluateOptions;
}

/** A number flag in [min, max], or a usage error naming it. */
function numberFlag(value: string | undefined, flag: string, min: number, max: number, whole: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max || (whole && !Number.isInteger(n))) throw new CliError(EXIT.usage, `--${flag} must be ${whole ? 'a whole number' : 'a number'} from ${min}${max === Infinity ? ' up' : ` to ${max}`}, got ${value}`);
  return n;
}

/** `--baseline`: `stored`, or the JSON report of an earlier evaluation. */
function baselineFlag(value: string | undefined): EvalReport | 'stored' | undefined {
  if (value === undefined || value === 'stored') return value;
  let text: string;
  try {
    text = readFileSync(value, 'utf8');
  } catch (error) {
    throw new CliError(EXIT.failure, `no baseline at ${value} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): --baseline takes the JSON report of an earlier evaluation (koagent eval --json <file>), or stored`);
  }
  try {
    return JSON.parse(text) as EvalReport;
  } catch (error) {
    throw new CliError(EXIT.failure, `--baseline ${value} is not JSON (${(error as Error).message}): give the report koagent eval --json wrote`);
  }
}

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** Run `koagent eval <file> …`. */
export async function evalCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, FLAGS);
  if (positionals.length !== 1) throw new CliError(EXIT.usage, `eval takes one evaluation module, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}:\n${EVAL_USAGE}`);
  const [file] = positionals;
  const margin = numberFlag(values.margin, 'margin', 0, 1, false);
  const concurrency = numberFlag(values.concurrency, 'concurrency', 1, Infinity, true);
  const baseline = baselineFlag(values.baseline);
  if (values.queue !== undefined && !/^postgres(ql)?:\/\//.test(values.queue)) throw new CliError(EXIT.usage, `--queue takes the workers' PostgreSQL connection string (postgres://…), got ${values.queue}`);
  const options = await declared(file);
  const closers: (() => Promise<void>)[] = [];
  try {
    let store: RunStore | undefined;
    if (values.store !== undefined) {
      store = await openStore(values.store, { create: true });
      closers.push(() => store!.close());
    }
    let client: EvalClient | undefined;
    if (values.queue !== undefined) {
      const { createClient } = await import('../worker.js').catch((error: unknown) => {
        throw new CliError(EXIT.failure, `--queue needs the pg and pg-boss packages (npm i pg pg-boss): ${(error as Error).message}`);
      });
      const opened = await createClient({ connectionString: values.queue, ...(store === undefined ? {} : { store }) });
      closers.unshift(() => opened.close());
      client = opened;
    }
    const name = options.name ?? basename(file).replace(/(\.eval)?\.[cm]?[jt]sx?$/, '').replace(/[:\s]+/g, '-');
    let report: EvalReport;
    try {
      report = await evaluate({
        ...options, name,
        ...(store === undefined ? {} : { store }), ...(client === undefined ? {} : { client }),
        ...(baseline === undefined ? {} : { baseline }), ...(margin === undefined ? {} : { margin }), ...(concurrency === undefined ? {} : { concurrency }),
      });
    } catch (error) {
      // The module's options or the dataset are wrong (a TypeError names what and how to fix it).
      if (error instanceof TypeError) throw new CliError(EXIT.usage, error.message);
      throw error;
    }
    io.out(formatReport(report));
    if (values.junit !== undefined) write(values.junit, junitXml(report));
    if (values.json !== undefined) write(values.json, `${JSON.stringify(report, null, 2)}\n`);
    if (!report.passed) {
      io.err(`koagent eval: the gate failed (${report.checks.filter((check) => !check.passed).length} of ${report.checks.length} checks); see the report above`);
      return EXIT.failure;
    }
    return EXIT.ok;
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}
