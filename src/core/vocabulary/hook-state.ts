import type { BaseContext } from './contexts.js';
import { copyJson } from './json.js';

/**
 * A layer's own state in a run (`state.hookState[name]`): plain JSON, kept with the run, so it
 * survives suspend, resume and other processes. `get` gives this layer's copy to read (the
 * run state itself is read-only), made once per change rather than at every read; `set` keeps a
 * new value (give a new object: what `get` returned is never changed in place).
 *
 * @example const counts = hookState('call-counter', () => ({ calls: 0 })); tool: (ctx, next) => { counts.set(ctx, { calls: counts.get(ctx).calls + 1 }); return next(); }
 */
export interface HookState<S> {
  /** This layer's state in the run of `ctx`: a copy to read (`initial()` until one was set). */
  get(ctx: BaseContext): S;
  /** Keep `value` (plain JSON) as this layer's state in the run of `ctx`. */
  set(ctx: BaseContext, value: S): void;
}

/**
 * A layer's own state in each run, kept under `state.hookState[name]`: `initial()` until the
 * layer sets it (see `HookState`).
 *
 * @example const seen = hookState('seen-tools', () => ({ names: [] as string[] }));
 */
export function hookState<S>(name: string, initial: () => S): HookState<S> {
  if (typeof name !== 'string' || name === '') throw new TypeError('hookState(name, initial): name must be a non-empty string (it keys the value in state.hookState)');
  if (typeof initial !== 'function') throw new TypeError(`hookState(${JSON.stringify(name)}, initial): initial must be a function giving the state a run starts with`);
  // This layer's copy in the segment's variables, with the stored value it copies (a new one after every set).
  const key = Symbol(`koagent.hookState:${name}`);
  type Held = { stored: unknown; value: S };
  const heldIn = (ctx: BaseContext) => ctx.runVar as Record<symbol, Held | undefined>;
  return {
    get(ctx) {
      const stored = Object.hasOwn(ctx.state.hookState, name) ? ctx.state.hookState[name] : undefined;
      const held = heldIn(ctx)[key];
      if (held !== undefined && held.stored === stored) return held.value;
      const value = stored === undefined ? initial() : (copyJson(stored) as S);
      heldIn(ctx)[key] = { stored, value };
      return value;
    },
    set(ctx, value) {
      ctx.setHookState(name, value);
      heldIn(ctx)[key] = { stored: ctx.state.hookState[name], value };
    },
  };
}
