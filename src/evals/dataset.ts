// A dataset: examples of inputs with what the scorers expect of their runs, given as an array
// (a module's export) or as a JSONL file, one example a line. Every mistake in a file names its
// line and says how to write it instead.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { optionsSchema, parseOptions, type RunInput } from '../api.js';

/**
 * One example of a dataset: the agent's input, and what its run is expected to do (read by the
 * scorers). `id` names it in the table and the reports (default: `line <n>` in a JSONL file,
 * `#<n>` in an array); `context` is the run context; `metadata` holds anything of yours.
 *
 * @example const example: EvalExample<string> = { id: 'paris', input: 'Weather in Paris?', expected: 'Sunny in Paris.' };
 */
export interface EvalExample<E = unknown> {
  id?: string;
  input: RunInput;
  expected?: E;
  /** The run context (`run(input, { context })`); plain JSON when the runs go to workers. */
  context?: unknown;
  metadata?: Record<string, unknown>;
}

/**
 * An example as an evaluation holds it: its id settled.
 *
 * @example const ids = dataset.map((example: LoadedExample) => example.id);
 *
 * @inline
 */
export type LoadedExample<E = unknown> = EvalExample<E> & { id: string };

const exampleSchema = optionsSchema({
  id: z.union([z.string().min(1), z.number()], { error: 'must be a non-empty string (or a number)' }).optional(),
  input: z.unknown().optional(),
  expected: z.unknown().optional(),
  context: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
}, { noun: 'a field of an example', aliases: { expect: 'expected', expectation: 'expected', output: 'expected', answer: 'expected', prompt: 'input', question: 'input', messages: 'input', name: 'id', meta: 'metadata', tags: 'metadata' } });

const SHAPE = '{"id": "paris", "input": "Weather in Paris?", "expected": "Sunny in Paris."}';

/** `value` checked as an example (`where` names it in errors): its id settled (`fallbackId` when it has none). */
function checkedExample(value: unknown, where: string, fallbackId: string): LoadedExample {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${where}: an example is a JSON object with an input and what is expected of its run, e.g. ${SHAPE}`);
  }
  const parsed = parseOptions(exampleSchema, value, where);
  const input = (value as EvalExample).input;
  const inputOk = typeof input === 'string' ? input !== '' : typeof input === 'object' && input !== null;
  if (!inputOk) {
    throw new TypeError(`${where}: ${input === undefined ? 'the example has no "input"' : 'its "input" is empty or not one'}: give the agent's input as text, a message ({"role": "user", "content": "…"}) or an array of messages, e.g. ${SHAPE}`);
  }
  return { ...(value as EvalExample), id: parsed.id === undefined ? fallbackId : String(parsed.id) };
}

/** Two examples under one id would share a row of the reports: refused, naming both places. */
function refuseDuplicate(seen: Map<string, string>, id: string, where: string, here: string): void {
  const first = seen.get(id);
  if (first !== undefined) throw new TypeError(`${where}: the id "${id}" is taken by ${first} already: give each example an id of its own`);
  seen.set(id, here);
}

/**
 * The examples of an array (a module's export) checked, each given its id.
 *
 * @example const examples = checkExamples([{ input: 'Hi', expected: 'Hello.' }]); // ids '#1'
 */
export function checkExamples<E>(examples: readonly EvalExample<E>[], where = 'dataset'): LoadedExample<E>[] {
  if (!Array.isArray(examples)) throw new TypeError(`${where} must be an array of examples (${SHAPE}), or the path of a JSONL file of them`);
  if (examples.length === 0) throw new TypeError(`${where} holds no example: an evaluation needs at least one`);
  const seen = new Map<string, string>();
  return examples.map((value, i) => {
    const example = checkedExample(value, `${where}[${i}]`, `#${i + 1}`);
    refuseDuplicate(seen, example.id, `${where}[${i}]`, `${where}[${i}]`);
    return example as LoadedExample<E>;
  });
}

/** A file path given as a string or a `file:` URL, for messages and for reading. */
function pathOf(file: string | URL): string {
  return file instanceof URL ? fileURLToPath(file) : file;
}

/**
 * The examples of a JSONL file: one JSON object a line (blank lines are skipped). A line that is
 * not JSON, not an example, or repeats an id is refused with its line number and the fix.
 *
 * @example const examples = await loadDataset(new URL('./weather.jsonl', import.meta.url));
 */
export async function loadDataset<E = unknown>(file: string | URL): Promise<LoadedExample<E>[]> {
  const path = pathOf(file);
  if (!/\.jsonl$/i.test(path)) {
    throw new TypeError(`dataset ${path} is not a JSONL file (.jsonl, one example a line); for examples in a module, import its array and give that as the dataset`);
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TypeError(`no dataset at ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): give the path of a JSONL file, relative to the working directory, or a URL made with new URL('./examples.jsonl', import.meta.url)`);
  }
  const examples: LoadedExample<E>[] = [];
  const seen = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${path}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new TypeError(`${where}: this line is not JSON (${(error as Error).message}): a JSONL file holds one example a line, each a JSON object on a single line, e.g. ${SHAPE}`);
    }
    const example = checkedExample(value, where, `line ${i + 1}`);
    refuseDuplicate(seen, example.id, where, `line ${i + 1}`);
    examples.push(example as LoadedExample<E>);
  });
  if (examples.length === 0) throw new TypeError(`dataset ${path} holds no example: write one JSON object a line, e.g. ${SHAPE}`);
  return examples;
}
