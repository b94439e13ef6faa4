/** How deep and how large a model's arguments for one call may be (the agent's `toolArguments`). */
export interface ArgumentBounds {
  maxDepth: number;
  maxBytes: number;
}

/** 64 levels of nesting and 1 MiB of JSON: far past any real call, short of what breaks a run. */
export const DEFAULT_ARGUMENT_BOUNDS: ArgumentBounds = { maxDepth: 64, maxBytes: 1_048_576 };

/** What the transcript keeps in place of arguments past the bounds: a note, not the arguments. */
const REFUSED = 'koagent refused these arguments: ';

/**
 * A model's arguments as an object: parsed from JSON text if need be, or why they are not one
 * (the message the model reads back) — text that is no JSON object, or arguments past the
 * bounds, or the note that took their place in the transcript.
 *
 * @example argsObject('{"city":"Paris"}', DEFAULT_ARGUMENT_BOUNDS) // { city: 'Paris' }
 */
export function argsObject(raw: unknown, bounds: ArgumentBounds = DEFAULT_ARGUMENT_BOUNDS): Record<string, unknown> | string {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.startsWith(REFUSED)) return raw.slice(REFUSED.length);
    if (raw.trim() === '') return {};
    if (raw.length > bounds.maxBytes) return `the arguments are ${raw.length} bytes of JSON, more than the ${bounds.maxBytes} allowed`;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return `the arguments are not valid JSON (${(error as Error).message})`;
    }
  }
  if (!isArgsObject(value)) {
    return `the arguments must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  }
  const problem = pastBounds(value, bounds);
  return problem ?? (value as Record<string, unknown>);
}

/** Whether `value` has the shape of a call's arguments: an object, not null or an array. */
export function isArgsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Arguments past the bounds are replaced, in the reply the transcript keeps, by a note saying
 * why: the run state stays small and writable as JSON, and the call settles as a `validation`
 * error the model reads. Returns the arguments to keep.
 */
export function boundedArgs(raw: unknown, bounds: ArgumentBounds): unknown {
  if (typeof raw === 'string') return raw.length > bounds.maxBytes ? `${REFUSED}the arguments are ${raw.length} bytes of JSON, more than the ${bounds.maxBytes} allowed` : raw;
  if (typeof raw !== 'object' || raw === null) return raw;
  const problem = pastBounds(raw, bounds);
  return problem === undefined ? raw : `${REFUSED}${problem}`;
}

/**
 * Why `value` is nested deeper or is larger than the bounds allow (or holds a `__proto__`
 * key), stopping as soon as a bound is passed. It recurses at most `maxDepth` levels; with a
 * bound too deep for the call stack it walks with a stack of its own (arguments nested 10,000
 * levels deep must not overflow it).
 */
function pastBounds(value: object, bounds: ArgumentBounds): string | undefined {
  if (bounds.maxDepth > RECURSION_LIMIT) return pastBoundsIteratively(value, bounds);
  return measure(value, 1, 0, bounds) < 0 ? found : undefined;
}

const RECURSION_LIMIT = 1_000;

// Called this way inside `for…in`, V8 knows an own key needs no lookup (with `Object.hasOwn` it does one).
const hasOwn = Object.prototype.hasOwnProperty;

/** Why the last walk stopped (set just before `measure` returns -1): no object per walk. */
let found = '';

/**
 * `bytes` plus the bytes of JSON the object `current` takes, or -1 (and `found` set) once a
 * bound is passed. Arrays by index and objects by `for…in` over own keys: no array of keys made
 * per object.
 */
function measure(current: object, depth: number, bytes: number, bounds: ArgumentBounds): number {
  if (depth > bounds.maxDepth) return stop(`the arguments are nested deeper than ${bounds.maxDepth} levels`);
  if (Array.isArray(current)) {
    for (let i = 0; i < current.length; i++) {
      bytes = measureValue(current[i], depth + 1, bytes + 1, bounds);
      if (bytes < 0) return bytes;
    }
  } else {
    for (const key in current) {
      if (!hasOwn.call(current, key)) continue;
      // zod drops such a key from what the tool gets while a rule would still see it: refused,
      // so every reader sees one object graph (and none becomes a prototype).
      if (key === '__proto__') return stop('the arguments contain a "__proto__" key, which is refused');
      bytes = measureValue((current as Record<string, unknown>)[key], depth + 1, bytes + key.length + 4, bounds);
      if (bytes < 0) return bytes;
    }
  }
  return within(bytes, bounds);
}

/**
 * `bytes` plus what `value` takes: an object or array is walked, anything else counted here. (A
 * small function V8 inlines into the walk: a call of `measure` per number or string cost more
 * than the rest of the walk of a small call.)
 */
function measureValue(value: unknown, depth: number, bytes: number, bounds: ArgumentBounds): number {
  return typeof value === 'object' && value !== null ? measure(value, depth, bytes, bounds) : within(bytes + leafBytes(value), bounds);
}

/** The bytes of JSON a value that is no object takes: a string with its quotes, anything else 8. */
function leafBytes(value: unknown): number {
  return typeof value === 'string' ? value.length + 2 : 8;
}

/** `bytes`, or -1 (and `found` set) when that is more than the bounds allow. */
function within(bytes: number, bounds: ArgumentBounds): number {
  return bytes > bounds.maxBytes ? stop(`the arguments are larger than the ${bounds.maxBytes} bytes of JSON allowed`) : bytes;
}

function stop(problem: string): -1 {
  found = problem;
  return -1;
}

/** The same walk as `measure`, without recursion. */
function pastBoundsIteratively(value: object, { maxDepth, maxBytes }: ArgumentBounds): string | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  let bytes = 0;
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) bytes += leafBytes(current);
    else {
      if (depth > maxDepth) return `the arguments are nested deeper than ${maxDepth} levels`;
      if (Array.isArray(current)) {
        bytes += current.length;
        for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], depth + 1]);
      } else {
        for (const key in current) {
          if (!hasOwn.call(current, key)) continue;
          if (key === '__proto__') return 'the arguments contain a "__proto__" key, which is refused';
          bytes += key.length + 4;
          stack.push([(current as Record<string, unknown>)[key], depth + 1]);
        }
      }
    }
    if (bytes > maxBytes) return `the arguments are larger than the ${maxBytes} bytes of JSON allowed`;
  }
  return undefined;
}
