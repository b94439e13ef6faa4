import { setOwn } from '../vocabulary/json.js';
import type { Message } from '../vocabulary/messages.js';
import type { RunState } from '../vocabulary/state.js';

/** The writes a transcript view turns changes into: the state writer's (see `StateWriter`). */
export interface TranscriptWrites {
  readonly state: { readonly messages: Message[] };
  putMessage(index: number, message: unknown): void;
  deleteMessage(index: number): void;
  truncate(length: number): void;
  /** `apply` changes `target[key]`, inside `message` (a stored message); the writer runs it, or not once closed. */
  editMessage(message: Message, target: object, key: string | symbol, apply: () => boolean): boolean;
}

/** The key under which a view gives its target: for koagent's own code, never enumerable or stored. */
const TARGET: unique symbol = Symbol('koagent.viewTarget');

/** The object behind a view (a message, a part, the transcript), or `value` itself when it is none. */
export function unwrap<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const target = (value as { [TARGET]?: T })[TARGET];
  return target === undefined ? value : target;
}

/**
 * `value` without views in it, at any depth: the views themselves give way to what they show,
 * and a container that holds one is copied (never changed). Whatever enters the run state
 * passes here, so the state stays plain data (`structuredClone` and stores take it). The walk
 * is a loop, not a recursion: a model's arguments may be thousands of levels deep.
 */
export function plainValue<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const target = unwrap(value);
  // A view shows part of the state, which is plain already.
  if (target !== value) return target;
  // Most values hold no view (a model's reply, a message a layer made): a scan that allocates
  // nothing says so; only a value that holds one, or is deeper than the scan goes, is walked.
  if (holdsView(value, 32) === false) return value;
  type Node = { value: object; parent: Node | undefined; key: string };
  const found: Node[] = [];
  const seen = new WeakSet<object>();
  const todo: Node[] = [{ value, parent: undefined, key: '' }];
  while (todo.length > 0) {
    const node = todo.pop()!;
    if (seen.has(node.value)) continue;
    seen.add(node.value);
    for (const key of Object.keys(node.value)) {
      const inner = (node.value as Record<string, unknown>)[key];
      if (typeof inner !== 'object' || inner === null) continue;
      const entry = { value: inner, parent: node, key };
      if (unwrap(inner) !== inner) found.push(entry);
      else todo.push(entry);
    }
  }
  if (found.length === 0) return value;
  // Copy each container on the way from the root to a view, once, and put the view's target in.
  const copies = new Map<Node, Record<string, unknown>>();
  const copyOf = (node: Node): Record<string, unknown> => {
    let copy = copies.get(node);
    if (copy === undefined) {
      copy = (Array.isArray(node.value) ? node.value.slice() : { ...node.value }) as Record<string, unknown>;
      copies.set(node, copy);
      if (node.parent !== undefined) setOwn(copyOf(node.parent), node.key, copy);
    }
    return copy;
  };
  for (const view of found) setOwn(copyOf(view.parent!), view.key, unwrap(view.value));
  return copyOf(rootOf(found[0])) as T;
}

/**
 * `JSON.stringify(value)`, with the transcript's views read as the plain data they show: the
 * same text, without a proxy trap for every property (what makes a view's JSON slow to write on
 * a long transcript). Only a string comes out: no layer gets hold of the state's own objects.
 *
 * @example const size = jsonOf(ctx.request.messages).length;
 */
export function jsonOf(value: unknown): string | undefined {
  return JSON.stringify(plainValue(value));
}

/**
 * A copy of `value` the run state alone holds: arrays and plain objects copied at every depth,
 * views giving way to copies of what they show. What a layer hands in (a message it pushes, a
 * part it sets) is checked, then kept as this copy, so a change the layer makes later through
 * its own reference can never reach the state unchecked. Anything else (a string, bytes, a
 * class instance) is kept as is, for the check to judge. A loop, not a recursion: a model's
 * arguments may be thousands of levels deep.
 *
 * @example const kept = ownedCopy(message); message.content = 42; // kept is unchanged
 */
export function ownedCopy<T>(value: T): T {
  if (!isPlainContainer(value)) return value;
  const copies = new Map<object, Record<string, unknown>>();
  const copyOf = (from: object): Record<string, unknown> => {
    let copy = copies.get(from);
    if (copy === undefined) {
      copy = (Array.isArray(from) ? new Array(from.length) : {}) as Record<string, unknown>;
      copies.set(from, copy);
      todo.push(from);
    }
    return copy;
  };
  const todo: object[] = [];
  const root = copyOf(unwrap(value as object));
  while (todo.length > 0) {
    const from = todo.pop()!;
    const copy = copies.get(from)!;
    for (const key of Object.keys(from)) {
      const inner = unwrap((from as Record<string, unknown>)[key]);
      const kept = isPlainContainer(inner) ? copyOf(inner) : inner;
      // A `__proto__` key stays a key.
      setOwn(copy, key, kept);
    }
  }
  return root as T;
}

function isPlainContainer(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(unwrap(value));
  return proto === Object.prototype || proto === null;
}

/** Whether `value` holds a view within `depth` levels; undefined when it goes deeper (or is cyclic) and the scan cannot tell. */
function holdsView(value: object, depth: number): boolean | undefined {
  for (const key of Object.keys(value)) {
    const inner = (value as Record<string, unknown>)[key];
    if (typeof inner !== 'object' || inner === null) continue;
    if ((inner as { [TARGET]?: unknown })[TARGET] !== undefined) return true;
    if (depth === 0) return undefined;
    const found = holdsView(inner, depth - 1);
    if (found !== false) return found;
  }
  return false;
}

function rootOf<N extends { parent: N | undefined }>(node: N): N {
  while (node.parent !== undefined) node = node.parent;
  return node;
}

/**
 * The transcript as layers and hooks see it (`ctx.messages`, `ctx.request.messages`): the
 * run's own messages, read through, with no copy — and every change made through it, to the
 * array or to any message in it at any depth, a write of the state writer. So a hook that
 * pushes a message or edits one in place changes the run, and a durable run stores exactly
 * that change. `readOnly` (the view in `ctx.state`): every change is refused, saying why.
 *
 * @example const messages = transcriptView(writer, false); messages.push({ role: 'user', content: 'Be brief.' });
 */
export function transcriptView(writer: TranscriptWrites, readOnly: boolean): Message[] {
  const views = new WeakMap<object, object>();
  const refuse = (what: string): never => {
    throw new TypeError(`${what}: this transcript is read-only (ctx.state.messages); change the run's transcript through ctx.messages or ctx.setMessages`);
  };

  /**
   * A view of `value` (a part of `root`, or `root` itself): reads go through, writes go to the
   * writer. `checked` says that `value` is within what the message check judges (its content,
   * its tool calls): what is set there is kept as the state's own copy (see `ownedCopy`), so it
   * cannot be changed later unchecked. Elsewhere (`metadata`, `providerOptions`) a value is kept
   * as given, so `(message.metadata ??= {}).seen = true` still changes the run.
   */
  const inside = (value: object, root: Message, checked: boolean): object => {
    let view = views.get(value);
    if (view !== undefined) return view;
    const edit = (target: object, key: string | symbol, apply: () => boolean): boolean =>
      readOnly ? refuse('A message of the transcript cannot be changed') : writer.editMessage(root, target, key, apply);
    const kept = (key: string | symbol, given: unknown): unknown => (checked || (value === root && CHECKED.has(key)) ? ownedCopy(given) : plainValue(given));
    view = new Proxy(value, {
      get(target, key) {
        if (key === TARGET) return target;
        return wrapped(target, key, (part) => inside(part, root, checked || (target === root && CHECKED.has(key))));
      },
      set: (target, key, given) => edit(target, key, () => Reflect.set(target, key, kept(key, given))),
      deleteProperty: (target, key) => edit(target, key, () => Reflect.deleteProperty(target, key)),
      defineProperty: (target, key, descriptor) => edit(target, key, () => Reflect.defineProperty(target, key, 'value' in descriptor ? { ...descriptor, value: kept(key, descriptor.value) } : descriptor)),
      setPrototypeOf: () => refuse('A message of the transcript cannot change its prototype'),
    });
    views.set(value, view);
    return view;
  };

  const messages = writer.state.messages;
  return new Proxy(messages, {
    get(target, key) {
      if (key === TARGET) return target;
      if (typeof key === 'symbol' || !isIndex(key)) return Reflect.get(target, key);
      return wrapped(target, key, (message) => inside(message, message as Message, false));
    },
    set(_target, key, given) {
      if (readOnly) refuse(`ctx.messages[${String(key)}] cannot be set`);
      if (key === 'length') writer.truncate(given as number);
      else if (typeof key === 'string' && isIndex(key)) writer.putMessage(Number(key), given);
      else refuse(`ctx.messages.${String(key)} cannot be set (the transcript holds messages only)`);
      return true;
    },
    deleteProperty(_target, key) {
      if (readOnly || typeof key !== 'string' || !isIndex(key)) refuse(`ctx.messages[${String(key)}] cannot be deleted`);
      writer.deleteMessage(Number(key));
      return true;
    },
    defineProperty: (_target, key) => refuse(`ctx.messages: defining ${String(key)} is not a change the run can keep; push, splice or assign messages instead`),
    setPrototypeOf: () => refuse('ctx.messages cannot change its prototype'),
    preventExtensions: () => refuse('ctx.messages cannot be frozen or sealed'),
  });
}

/** The fields of a message the message check judges: what is set inside them is copied. */
const CHECKED: ReadonlySet<string | symbol> = new Set(['content', 'toolCalls']);

/** `target[key]`, as a view when it is an object, unless the proxy rules say it must be given as is (a frozen property). */
function wrapped(target: object, key: string | symbol, view: (value: object) => object): unknown {
  const value = Reflect.get(target, key);
  if (typeof value !== 'object' || value === null) return value;
  const own = Reflect.getOwnPropertyDescriptor(target, key);
  return own !== undefined && !own.configurable && !own.writable ? value : view(value);
}

function isIndex(key: string): boolean {
  const code = key.charCodeAt(0);
  return code >= 48 && code <= 57 && String(Number(key) >>> 0) === key;
}

/** The fields of the run state that say how a segment ended. */
export type EndingFields = Pick<RunState, 'status' | 'stopReason' | 'output' | 'error'>;

const ENDING: ReadonlySet<string | symbol> = new Set(['status', 'stopReason', 'output', 'error']);

/**
 * The run state as layers see it (`ctx.state`): read through, with no copy, and read-only all
 * the way down; its `messages` is `transcript` (a read-only transcript view). Layers change the
 * run through the context's methods and `ctx.messages`, which the state writer owns.
 * `ending` gives how the segment ends once that is decided but not yet written (the state
 * itself says `running` until the segment is over): the view shows those fields instead.
 *
 * @example const state = stateView(segment.state, transcriptView(writer, true)); state.usage.toolCalls;
 */
export function stateView<S extends { messages: Message[] }>(state: S, transcript: Message[], ending: () => EndingFields | undefined = () => undefined): S {
  const views = new WeakMap<object, object>();
  const refuse = (key: string | symbol): never => {
    throw new TypeError(`ctx.state.${String(key)} cannot be changed: ctx.state is a read-only view of the run state; change the run through the context (ctx.messages, ctx.setMessages, ctx.setHookState, ctx.end)`);
  };
  const refusals: ProxyHandler<object> = {
    set: (_target, key) => refuse(key),
    deleteProperty: (_target, key) => refuse(key),
    defineProperty: (_target, key) => refuse(key),
    setPrototypeOf: () => refuse('prototype'),
    preventExtensions: () => refuse('extensible'),
  };
  const view = (value: object): object => {
    let known = views.get(value);
    if (known !== undefined) return known;
    known = new Proxy(value, { ...refusals, get: (target, key) => (key === TARGET ? target : wrapped(target, key, view)) });
    views.set(value, known);
    return known;
  };
  /** The decided end's value of `key`, when it is one of the ending fields and an end is decided. */
  const ended = (key: string | symbol): { value: unknown } | undefined => {
    if (!ENDING.has(key)) return undefined;
    const end = ending();
    return end === undefined ? undefined : { value: end[key as keyof EndingFields] };
  };
  const shown = (value: unknown): unknown => (typeof value === 'object' && value !== null ? view(value) : value);
  // The root: the same view, but the ending fields as decided, also to `in`, keys, spread and JSON.
  const root = new Proxy(state, {
    ...refusals,
    get(target, key) {
      if (key === TARGET) return target;
      if (key === 'messages') return transcript;
      const end = ended(key);
      return end === undefined ? wrapped(target, key, view) : shown(end.value);
    },
    has: (target, key) => {
      const end = ended(key);
      return end === undefined ? Reflect.has(target, key) : end.value !== undefined;
    },
    ownKeys(target) {
      const end = ending();
      const own = Reflect.ownKeys(target);
      if (end === undefined) return own;
      const defined = (key: string | symbol) => end[key as keyof EndingFields] !== undefined;
      return [...own.filter((key) => !ENDING.has(key) || defined(key)), ...[...ENDING].filter((key) => defined(key) && !own.includes(key))];
    },
    getOwnPropertyDescriptor(target, key) {
      const end = ended(key);
      if (end === undefined) return Reflect.getOwnPropertyDescriptor(target, key);
      return end.value === undefined ? undefined : { value: shown(end.value), writable: true, enumerable: true, configurable: true };
    },
  });
  views.set(state, root);
  return root as S;
}
