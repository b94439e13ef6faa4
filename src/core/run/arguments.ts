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
 * A model's arguments, checked once as its reply is kept: what the transcript keeps — the
 * arguments as written, or, past the bounds, a note saying why (so the run state stays small
 * and writable as JSON) — and the arguments as an object, or why they are none (the call then
 * settles as a `validation` error the model reads).
 *
 * @example checkedArgs('{"city":"Paris"}', DEFAULT_ARGUMENT_BOUNDS) // { kept: '{"city":"Paris"}', args: { city: 'Paris' } }
 */
export function checkedArgs(raw: unknown, bounds: ArgumentBounds): { kept: unknown; args: Record<string, unknown> | string } {
  const args = argsObject(raw, bounds);
  const past = typeof args === 'string' && (typeof raw === 'string' ? raw.length > bounds.maxBytes : typeof raw === 'object' && raw !== null && !Array.isArray(raw));
  return { kept: past ? `${REFUSED}${args}` : raw, args };
}

/**
 * Why `value` is nested deeper or is larger than the bounds allow (or holds a `__proto__`
 * key), stopping as soon as a bound is passed. It walks with a stack of its own, not by
 * recursion: arguments nested 10,000 levels deep must not overflow the call stack. Bytes are
 * counted as JSON takes them: an array by its elements, an object by its own keys.
 */
function pastBounds(value: object, { maxDepth, maxBytes }: ArgumentBounds): string | undefined {
  // Values still to count, each followed by its depth.
  const pending: unknown[] = [value, 1];
  let bytes = 0;
  while (pending.length > 0) {
    const depth = pending.pop() as number;
    const current = pending.pop();
    // A leaf: a string with its quotes, anything else 8 bytes.
    if (typeof current !== 'object' || current === null) bytes += typeof current === 'string' ? current.length + 2 : 8;
    else if (depth > maxDepth) return `the arguments are nested deeper than ${maxDepth} levels`;
    else if (Array.isArray(current)) {
      bytes += current.length;
      for (let i = current.length - 1; i >= 0; i--) pending.push(current[i], depth + 1);
    } else {
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        // zod drops such a key from what the tool gets while a rule would still see it: refused,
        // so every reader sees one object graph (and none becomes a prototype).
        if (key === '__proto__') return 'the arguments contain a "__proto__" key, which is refused';
        bytes += key.length + 4;
        pending.push((current as Record<string, unknown>)[key], depth + 1);
      }
    }
    if (bytes > maxBytes) return `the arguments are larger than the ${maxBytes} bytes of JSON allowed`;
  }
  return undefined;
}
