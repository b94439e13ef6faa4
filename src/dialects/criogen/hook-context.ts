// What a criogen Hook sees and what it may hand back: the HookContext it gets, the read-only view
// of the run state, and the checks on a HookAction's own fields.
import { blame, ownValue, type BaseContext } from '../../api.js';
import type { HookAction, HookContext, HookMessage, HookRunState } from './types.js';

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
  return blame(new TypeError(message), hook);
}

/**
 * One HookContext per hook call: five fields, no copy. `messages` is the live transcript and
 * `state` a view over the live run state, built once per state object.
 */
export function hookContext(ctx: BaseContext, hook: string): HookContext {
  const state = ctx.state;
  return {
    runId: ctx.runId,
    messages: ctx.messages as HookMessage[],
    modelCalls: state.usage.modelCalls,
    // Its own: a hook named `constructor` with no state saved reads nothing inherited.
    hookState: ownValue(state.hookState, hook),
    state: readonlyView(state, 'ctx.state') as unknown as HookRunState,
  };
}

/**
 * Check the fields of what `method` of `hook` returned and give back the action (or undefined
 * for "nothing"); what they hold (a transcript, a reply, a state) is checked where it is used.
 * Every mistake is a TypeError naming the hook, the method and the fix.
 */
export function takeAction(hook: string, method: ActionMethod, returned: unknown): HookAction | undefined {
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
  return action as HookAction;
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
