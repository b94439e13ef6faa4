// What a criogen Hook sees and what it may hand back: the HookContext it gets, the read-only view
// of the run state, and the checks on a HookAction (saved state, a new transcript, a new reply).
import { attributeError } from '../errors.js';
import type { AssistantMessage, Message } from '../messages.js';
import type { Run } from '../run.js';
import type { HookAction, HookContext, HookMessage, HookRunState } from './criogen.js';

/** The methods that return a HookAction, and the fields each may use. */
export type ActionMethod = 'onStart' | 'beforeModel' | 'afterModel';

const ACTION_FIELDS: Record<ActionMethod, readonly string[]> = {
  onStart: ['state', 'end', 'output'],
  beforeModel: ['state', 'messages', 'end', 'output'],
  afterModel: ['state', 'message', 'end', 'output'],
};

const ALL_FIELDS = new Set(['state', 'messages', 'message', 'end', 'output']);

/** A TypeError blamed on the hook, so the run fails with its name as `layer`. */
export function hookMistake(hook: string, message: string): unknown {
  return attributeError(new TypeError(message), hook);
}

/**
 * One HookContext per hook call: five fields, no copy. `messages` is the live transcript and
 * `state` a view over the live run state, built once per state object.
 */
export function hookContext(run: Run, hook: string): HookContext {
  const state = run.state;
  return {
    runId: state.runId,
    messages: state.messages as HookMessage[],
    modelCalls: state.usage.modelCalls,
    hookState: state.hookState[hook],
    state: readonlyView(state, 'ctx.state') as unknown as HookRunState,
  };
}

/**
 * Check what `method` of `hook` returned, save its `{ state }`, and give back the action (or
 * undefined for "nothing"). Every mistake is a TypeError naming the hook, the method and the fix.
 */
export function takeAction(run: Run, hook: string, method: ActionMethod, returned: unknown): HookAction | undefined {
  if (returned === undefined || returned === null) return undefined;
  const where = `${hook}.${method}()`;
  if (typeof returned !== 'object' || Array.isArray(returned)) {
    throw hookMistake(hook, `${where} returned ${show(returned)}; return a HookAction such as { state }, { end: true, output }, or nothing`);
  }
  const action = returned as Record<string, unknown>;
  const allowed = ACTION_FIELDS[method];
  for (const key of Object.keys(action)) {
    if (action[key] === undefined || allowed.includes(key)) continue;
    const fix = ALL_FIELDS.has(key)
      ? `{ ${key} } is for ${key === 'messages' ? 'beforeModel' : 'afterModel'} only`
      : `a HookAction has only ${[...ALL_FIELDS].join(', ')}`;
    throw hookMistake(hook, `${where} returned a field "${key}" that ${method} cannot use: ${fix}`);
  }
  if (action.end !== undefined && typeof action.end !== 'boolean') {
    throw hookMistake(hook, `${where} returned end: ${show(action.end)}; end must be true (end the run) or false`);
  }
  if (action.messages !== undefined) checkTranscript(hook, where, action.messages);
  if (action.message !== undefined) checkReply(hook, `${where} returned message`, action.message);
  if (action.state !== undefined) run.state.hookState[hook] = plainJsonCopy(action.state, hook, `${where} returned { state }`);
  return action as HookAction;
}

/** Put `next` in place of the live transcript's contents: everyone holding the array sees it. */
export function replaceTranscript(live: Message[], next: readonly unknown[]): void {
  if (next === live) return;
  live.length = 0;
  // A loop, not push(...next): spreading a long transcript into arguments can overflow the stack.
  for (const message of next) live.push(message as Message);
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function checkTranscript(hook: string, where: string, value: unknown): void {
  if (!Array.isArray(value)) throw hookMistake(hook, `${where} returned messages: ${show(value)}; messages must be an array of messages (the whole transcript to send and keep)`);
  value.forEach((m, i) => checkMessage(hook, `${where} returned messages[${i}]`, m));
}

function checkMessage(hook: string, where: string, m: unknown): void {
  const shape = "{ role: 'system' | 'user' | 'assistant' | 'tool', content: string }";
  if (typeof m !== 'object' || m === null || !ROLES.has((m as Message).role)) throw hookMistake(hook, `${where} is not a message: expected ${shape}`);
  const message = m as Message;
  if (typeof message.content !== 'string') throw hookMistake(hook, `${where}.content must be a string`);
  if (message.role === 'assistant') checkReply(hook, where, message);
  if (message.role === 'tool' && (typeof message.toolCallId !== 'string' || typeof message.name !== 'string')) {
    throw hookMistake(hook, `${where} is a tool message without toolCallId and name (strings): the model matches a tool result to its call by them`);
  }
}

/** A reply a hook gives in place of the model's: an assistant message the loop can act on. */
function checkReply(hook: string, where: string, value: unknown): asserts value is AssistantMessage {
  const m = value as Partial<AssistantMessage> | null;
  if (typeof m !== 'object' || m === null || m.role !== 'assistant' || typeof m.content !== 'string') {
    throw hookMistake(hook, `${where} must be an assistant message { role: 'assistant', content: string, toolCalls? }, got ${show(value)}`);
  }
  const calls = m.toolCalls;
  if (calls !== undefined && (!Array.isArray(calls) || calls.some((c) => typeof c !== 'object' || c === null || typeof c.id !== 'string' || typeof c.name !== 'string'))) {
    throw hookMistake(hook, `${where}.toolCalls must be a list of { id: string, name: string, args }`);
  }
}

/**
 * A copy of `value` that is plain JSON, or a TypeError naming the first part that is not.
 * Hook state lives in the run state, which is written to storage and resumed elsewhere: a Date,
 * a Map or a class instance would come back as something else, so they are refused here.
 */
export function plainJsonCopy(value: unknown, hook: string, where: string): unknown {
  const seen = new Set<object>();
  const fail = (path: string, what: string, fix = ''): never => {
    throw hookMistake(hook, `${where}: state${path} is ${what}; hook state must be plain JSON (objects, arrays, strings, finite numbers, booleans, null) so the run state can be stored and resumed in another process${fix}`);
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
        const proto = Object.getPrototypeOf(v);
        if (Array.isArray(v)) {
          seen.add(v);
          const copy = v.map((item, i) => (item === undefined ? fail(`${path}[${i}]`, 'undefined', '; use null for "nothing"') : walk(item, `${path}[${i}]`)));
          seen.delete(v);
          return copy;
        }
        if (proto !== Object.prototype && proto !== null) {
          const kind = v instanceof Date ? 'a Date' : v instanceof Map ? 'a Map' : v instanceof Set ? 'a Set' : `an instance of ${proto?.constructor?.name ?? 'a class'}`;
          const fix = v instanceof Date ? '; store date.toISOString()' : v instanceof Map ? '; store Object.fromEntries(map)' : v instanceof Set ? '; store Array.from(set)' : '; store its fields as a plain object';
          fail(path, kind, fix);
        }
        seen.add(v);
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(v)) {
          const item = (v as Record<string, unknown>)[key];
          // JSON drops an undefined field, and so do we: it reads back as undefined either way.
          if (item !== undefined) copy[key] = walk(item, `${path}.${key}`);
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

/** Shown in error messages: a short rendering of what a hook returned. */
export function show(value: unknown): string {
  if (typeof value === 'function') return `a function ${value.name || '(anonymous)'}`;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}

// Views by target object, so nested reads (ctx.state.usage) return the same view each time and
// a view is built once per object, however many calls read it.
const views = new WeakMap<object, object>();

/**
 * A deep read-only view of `target`: reads go through to the live object (no copy), writes
 * throw a TypeError that says what to do instead. `path` names the object in that message.
 */
export function readonlyView<T extends object>(target: T, path: string): T {
  const cached = views.get(target);
  if (cached !== undefined) return cached as T;
  const refuse = (key?: string | symbol): never => {
    const at = key === undefined ? path : `${path}.${String(key)}`;
    throw new TypeError(`${at} cannot be changed: ctx.state is a read-only view of the run state. To keep a value of your own, return { state: value } from the hook (it comes back as ctx.hookState); to change the transcript, return { messages } from beforeModel`);
  };
  const wrap = (value: unknown, key: string | symbol): unknown =>
    typeof value === 'object' && value !== null ? readonlyView(value, `${path}.${String(key)}`) : value;
  const view = new Proxy(target, {
    get(t, key, receiver) {
      const value = Reflect.get(t, key, receiver);
      if (typeof value !== 'object' || value === null) return value;
      // A proxy must report a frozen property's value as it is; such a value cannot be changed anyway.
      const own = Reflect.getOwnPropertyDescriptor(t, key);
      return own !== undefined && !own.configurable && !own.writable ? value : wrap(value, key);
    },
    getOwnPropertyDescriptor(t, key) {
      const own = Reflect.getOwnPropertyDescriptor(t, key);
      if (own === undefined || !own.configurable || !('value' in own)) return own;
      return { ...own, value: wrap(own.value, key) };
    },
    set: (_t, key) => refuse(key),
    deleteProperty: (_t, key) => refuse(key),
    defineProperty: (_t, key) => refuse(key),
    setPrototypeOf: () => refuse(),
    preventExtensions: () => refuse(),
  });
  views.set(target, view);
  return view;
}
