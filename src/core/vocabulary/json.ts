/**
 * A value as an error message shows it: its JSON, cut to `max` characters; what has no JSON (a
 * function, a cycle, a BigInt) by its kind or string.
 */
export function preview(value: unknown, max = 120): string {
  try {
    const text = JSON.stringify(value);
    if (text !== undefined) return text.length > max ? `${text.slice(0, max - 3)}...` : text;
  } catch {
    // not JSON: shown below
  }
  if (typeof value === 'function') return 'a function';
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value); // no toString at all (a null-prototype object)
  }
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Structural equality of two JSON values: key order does not matter, and a key whose value is
 * `undefined` counts as absent (as in their JSON). It walks with `for…in`, making no arrays of
 * keys: it runs on every tool call that a layer sees.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let keys = 0;
  for (const key in left) {
    if (!hasOwn.call(left, key) || left[key] === undefined) continue;
    if (!sameJson(left[key], right[key])) return false;
    keys++;
  }
  for (const key in right) if (hasOwn.call(right, key) && right[key] !== undefined) keys--;
  return keys === 0;
}

/**
 * Set `key` on `target` as an own property, even `__proto__`, which plain assignment would take
 * for the prototype: for objects used as maps of names someone else chose (hooks, tools, counters).
 *
 * @example setOwn(byTool, toolName, (ownValue(byTool, toolName) ?? 0) + 1);
 */
export function setOwn(target: object, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
}

/**
 * `target[key]` when `target` has it as its own property, else undefined: a name such as
 * `constructor`, `toString` or `__proto__` never reads what every object inherits.
 *
 * @example const mine = ownValue(ctx.state.hookState, 'constructor'); // undefined unless a hook saved state under that name
 */
export function ownValue<T>(target: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return target !== undefined && hasOwn.call(target, key) ? target[key] : undefined;
}

/**
 * A deep copy of a JSON value (objects and arrays copied, everything else shared). Much
 * cheaper than `structuredClone` or a JSON round trip for the small objects of tool arguments.
 * A `__proto__` key stays a key: no input ever becomes a prototype.
 */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, copyJson((value as Record<string, unknown>)[key]));
  return copy as T;
}

/**
 * A deep copy of the plain parts of `value` (arrays and plain objects); anything else (a class
 * instance, a function, a signal) is shared. For settings a layer may change per run.
 *
 * @example const request = copyPlain(agentSettings); request.headers['x-user'] = user; // agentSettings unchanged
 */
export function copyPlain<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyPlain) as T;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, copyPlain((value as Record<string, unknown>)[key]));
  return copy as T;
}

/**
 * A copy of `value` that is plain JSON, or a TypeError naming the first part that is not and
 * how to store it instead. What goes into a run state must read back the same in another
 * process: a Date, a Map or a class instance would come back as something else.
 *
 * `root` names the value in that message (`state.at is a Date`).
 *
 * @example plainJson(value, 'ctx.setHookState("counter", value)', 'value')
 */
export function plainJson(value: unknown, where: string, root = 'value'): unknown {
  const seen = new Set<object>();
  const fail = (path: string, what: string, fix = ''): never => {
    throw new TypeError(`${where}: ${root}${path} is ${what}; it is kept in the run state, which must be plain JSON (objects, arrays, strings, finite numbers, booleans, null) so it can be stored and resumed in another process${fix}`);
  };
  const walk = (v: unknown, path: string): unknown => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        return Number.isFinite(v) ? v : fail(path, String(v), '; store null or a string instead');
      case 'object': {
        if (v === null) return null;
        if (seen.has(v)) fail(path, 'a reference back to an object that contains it (a cycle)');
        seen.add(v);
        let copy: unknown;
        if (Array.isArray(v)) {
          copy = v.map((item, i) => (item === undefined ? fail(`${path}[${i}]`, 'undefined', '; use null for "nothing"') : walk(item, `${path}[${i}]`)));
        } else {
          const proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) fail(path, kindOf(v, proto), fixFor(v));
          const record: Record<string, unknown> = {};
          for (const key of Object.keys(v)) {
            const item = (v as Record<string, unknown>)[key];
            // JSON drops an undefined field, and so do we: it reads back as undefined either way.
            if (item !== undefined) setOwn(record, key, walk(item, `${path}.${key}`));
          }
          copy = record;
        }
        seen.delete(v);
        return copy;
      }
      default:
        return fail(path, `a ${typeof v}`);
    }
  };
  return walk(value, '');
}

function kindOf(v: object, proto: { constructor?: { name?: string } } | null): string {
  if (v instanceof Date) return 'a Date';
  if (v instanceof Map) return 'a Map';
  if (v instanceof Set) return 'a Set';
  return `an instance of ${proto?.constructor?.name ?? 'a class'}`;
}

function fixFor(v: object): string {
  if (v instanceof Date) return '; store date.toISOString()';
  if (v instanceof Map) return '; store Object.fromEntries(map)';
  if (v instanceof Set) return '; store Array.from(set)';
  return '; store its fields as a plain object';
}
