// Options objects described once, as zod schemas, and checked against them: an unknown key is
// refused (naming the closest valid one), so a typo never switches a protection off quietly.
import { z } from 'zod';
import { ownValue } from './json.js';

/**
 * How errors talk about one options object: what one of its keys is (`'an option'`, `'a
 * limit'`), and keys people write by mistake for another (`systemPrompt` → `instructions`).
 *
 * @example optionsSchema({ ttlMs: z.number().optional() }, { noun: 'a cache option', aliases: { ttl: 'ttlMs' } })
 *
 * @inline
 */
export interface OptionsWording {
  noun?: string;
  aliases?: Record<string, string>;
}

/**
 * Where an options schema carries its wording: in its definition, under a key no one else reads,
 * which zod copies into the schema a refinement makes of it.
 */
const WORDS: unique symbol = Symbol('koagent.optionsWording');
type Worded = { [WORDS]?: OptionsWording };
const wordsOf = (schema: z.ZodObject): OptionsWording => (schema._zod.def as Worded)[WORDS] ?? {};

/**
 * A strict object schema of options: unknown keys are refused, with `words` for the message.
 *
 * @example const retryOptions = optionsSchema({ maxRetries: z.number().int().min(0).optional() }, { noun: 'a retry option' });
 */
export function optionsSchema<T extends z.ZodRawShape>(shape: T, words: OptionsWording = {}): z.ZodObject<T, z.core.$strict> {
  const schema = z.strictObject(shape);
  (schema._zod.def as Worded)[WORDS] = words;
  return schema;
}

/**
 * A function-valued option (zod has no schema type for functions).
 *
 * @typeParam F - the function's type, as the parsed options carry it
 *
 * @example optionsSchema({ onRetry: functionSchema('a function (info) => void').optional() })
 */
export function functionSchema<F extends (...args: never[]) => unknown = (...args: any[]) => any>(what = 'a function'): z.ZodType<F> {
  return z.custom<F>((value) => typeof value === 'function', { error: `must be ${what}` });
}

/**
 * A whole number of at least `min` (and, with `infinity`, Infinity too): counts and budgets.
 *
 * @example optionsSchema({ maxRetries: wholeNumberSchema(0).optional() })
 */
export function wholeNumberSchema(min: number, infinity = false, what = `must be a whole number ≥ ${min}${infinity ? ' or Infinity' : ''}`): z.ZodType<number> {
  return z.custom<number>((value) => typeof value === 'number' && value >= min && (Number.isInteger(value) || (infinity && value === Infinity)), { error: what });
}

/**
 * Check `value` against an options schema and return it parsed, or throw a `TypeError` that
 * starts with `where` and says what is wrong and how to fix it: an unknown key with the
 * closest valid one ("did you mean `default`?"), a value of the wrong type with what it got.
 *
 * @example const o = parseOptions(retryOptions, options, 'retryMiddleware');
 */
export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new TypeError(`${where}: ${describeIssue(pickIssue(parsed.error.issues, value), schema, value)}`);
}

/**
 * For objects that may carry keys of their own (a middleware's state, say): refuse only the keys
 * that are misspellings of the schema's keys (`modle` for `model`), which would otherwise be
 * ignored. Other keys pass; the schema's own keys are not checked here.
 *
 * @example refuseMisspellings(hookShape, hook, 'agent.use()');
 */
export function refuseMisspellings(schema: z.ZodObject, value: object, where: string): void {
  const known = schema.shape;
  const check = (key: string) => {
    if (Object.prototype.hasOwnProperty.call(known, key)) return;
    const words = wordsOf(schema);
    const meant = ownValue(words.aliases, key) ?? nearest(key, Object.keys(known));
    if (meant !== undefined) throw new TypeError(`${where}: ${key} is not ${words.noun ?? 'an option'}; did you mean \`${meant}\`?`);
  };
  for (const key of Object.keys(value)) check(key);
  // A class instance's methods live on its prototypes: their names count too.
  for (let proto = Object.getPrototypeOf(value); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) if (key !== 'constructor') check(key);
  }
}

type Issue = z.core.$ZodIssue;

/** Of a union's failed branches, the one that got furthest into the value (the branch meant). */
function pickIssue(issues: readonly Issue[], value: unknown): Issue {
  // A misspelled key explains the missing one beside it: it goes first.
  const first = issues.find((issue) => issue.code === 'unrecognized_keys') ?? issues[0];
  if (first.code !== 'invalid_union' || first.errors.length === 0) return first;
  const branches = first.errors.map((branch) => branch.map((issue) => ({ ...issue, path: [...first.path, ...issue.path] }) as Issue));
  const depth = (branch: Issue[]) => Math.max(...branch.map((issue) => issue.path.length + (issue.code === 'unrecognized_keys' ? 1 : 0)));
  const best = branches.reduce((a, b) => (depth(b) > depth(a) ? b : a));
  // No branch got into the value: the union's own message says what is expected.
  if (depth(best) <= first.path.length) return first;
  return pickIssue(best, value);
}

function describeIssue(issue: Issue, schema: z.ZodType, value: unknown): string {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const owner = schemaAt(schema, path);
    const words = owner instanceof z.ZodObject ? wordsOf(owner) : {};
    const allowed = owner instanceof z.ZodObject ? Object.keys(owner.shape) : [];
    const key = issue.keys[0];
    const closest = ownValue(words.aliases, key) ?? nearest(key, allowed);
    const fix = closest !== undefined ? `did you mean \`${closest}\`?` : allowed.length > 0 ? `use ${list(allowed)}` : 'remove it';
    return `${name([...path, key])} is not ${words.noun ?? 'an option'}; ${fix}`;
  }
  const at = valueAt(value, path);
  // What it got, where that tells something (not "an object" for an object that lacks a field).
  // A string that had the right type but not the right form is shown as it is; one in place
  // of another type is called a string.
  const sameType = typeof at === 'string' && (issue.code === 'invalid_format' || issue.code === 'too_small' || issue.code === 'too_big');
  const got = typeof at === 'object' && at !== null && issue.code !== 'invalid_type' ? '' : ` (got ${sameType ? JSON.stringify(at) : shown(at)})`;
  const subject = path.length === 0 ? 'options' : name(path);
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input')) {
    return `${subject} must be ${article(issue.expected)}${got}`;
  }
  return `${subject} ${issue.message.replace(/^Invalid input: /, 'must be ').replace(/^Too small: expected (\w+) to be /, 'must be ')}${got}`;
}

/** The object schema at `path` (through optionals, defaults, arrays, records and unions). */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = schema;
  for (const key of path) {
    current = unwrap(current);
    if (current instanceof z.ZodObject) current = current.shape[String(key)] as z.ZodType | undefined;
    else if (current instanceof z.ZodArray) current = current.element as z.ZodType;
    else if (current instanceof z.ZodRecord) current = current.valueType as z.ZodType;
    else if (current instanceof z.ZodUnion) {
      const options = current.options as z.ZodType[];
      current = options.map((option) => schemaAt(option, [key])).find((found) => found !== undefined);
    } else return undefined;
    if (current === undefined) return undefined;
  }
  current = unwrap(current);
  if (current instanceof z.ZodUnion) return (current.options as z.ZodType[]).map(unwrap).find((option) => option instanceof z.ZodObject);
  return current;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable || current instanceof z.ZodDefault) current = current.unwrap() as z.ZodType;
  return current;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) current = typeof current === 'object' && current !== null ? (current as Record<PropertyKey, unknown>)[key] : undefined;
  return current;
}

/** `limits.tokens`, `permissions.rules[2].decision`. */
function name(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
}

function list(keys: readonly string[]): string {
  return keys.length === 1 ? keys[0] : `${keys.slice(0, -1).join(', ')} or ${keys[keys.length - 1]}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** A value as an error message shows it: numbers as they are, strings quoted and named. */
function shown(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'function' ? 'a function' : `an ${typeof value}`;
}

/** The valid key a misspelling most likely meant: few edits away, case aside. */
function nearest(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  // A suggestion must be plausibly the same word: at most a third of it changed.
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(Math.max(key.length, best.length) / 3)) ? best : undefined;
}

/** Edit distance (insertions, deletions, substitutions, and swaps of neighbours). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
