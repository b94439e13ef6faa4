import { attributeError, KoagentError } from './errors.js';

/** `next()` for a layer: runs everything inside it and resolves to the inner outcome. */
export type Next<T> = () => Promise<T>;

/** A function of one hook point: code before `await next()` is "before", code after is "after". */
export type LayerFn<C, T> = (ctx: C, next: Next<T>) => Promise<T> | T;

/** One layer of a stack. `trusted` layers are koagent's own steps: no per-call checks. */
export interface Layer<C, T> {
  name: string;
  fn: LayerFn<C, T>;
  trusted?: boolean;
}

/**
 * Called after each untrusted layer settles with the value it returned. It may return a
 * replacement (e.g. to stamp who produced a tool outcome) or throw to reject it.
 * `nextCalled` is false when the layer short-circuited.
 */
export type Settle<C, T> = (ctx: C, out: T, layer: string, nextCalled: boolean) => T;

/** What a checked layer knows about its own `next()`: one per layer call. */
interface Frame {
  pending: boolean;
  calls: number;
  /** The last rejection `next()` delivered, so rethrowing it is not blamed on this layer. */
  innerError: unknown;
}

type Inner<C, T> = (ctx: C, caller?: Frame) => Promise<T>;

const NONE = Symbol('none');

/**
 * Compose layers around a terminal step into one function, built once per stack.
 *
 * Unlike koa-compose, a layer may call `next()` again once the previous call has settled
 * (retry, fallback); calling it while a call is still pending rejects with a clear error.
 * An error a layer throws itself (not one it received from `next()`) is attributed to it, and
 * a layer that returns nothing is an error naming it.
 */
export function compose<C, T>(layers: readonly Layer<C, T>[], terminal: (ctx: C) => Promise<T>, settle?: Settle<C, T>): (ctx: C) => Promise<T> {
  let inner: Inner<C, T> = terminal;
  let checkedBelow = false;
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i];
    if (layer.trusted) {
      inner = trustedLayer(layer, inner);
      continue;
    }
    // The innermost checked layer's next() leads into code that does not report back.
    inner = checkedLayer(layer, checkedBelow ? inner : reporting(inner), settle);
    checkedBelow = true;
  }
  return inner;
}

function trustedLayer<C, T>(layer: Layer<C, T>, inner: Inner<C, T>): Inner<C, T> {
  const { fn } = layer;
  return (ctx) => fn(ctx, () => inner(ctx)) as Promise<T>;
}

/** Wrap code that is not a checked layer so it tells its caller's frame when it settles. */
function reporting<C, T>(inner: Inner<C, T>): Inner<C, T> {
  return (ctx, caller) => inner(ctx).then(
    (value) => { caller!.pending = false; return value; },
    (error) => { caller!.pending = false; caller!.innerError = error; throw error; },
  );
}

function checkedLayer<C, T>(layer: Layer<C, T>, inner: Inner<C, T>, settle?: Settle<C, T>): Inner<C, T> {
  const { fn, name } = layer;
  // One promise reaction per layer call does all the checks on the way out (and tells the
  // caller's frame that this call settled), which keeps a layer close to koa-compose's cost.
  return function layerCall(ctx: C, caller?: Frame): Promise<T> {
    const frame: Frame = { pending: false, calls: 0, innerError: NONE };
    const next: Next<T> = () => {
      if (frame.pending) {
        return Promise.reject(attributeError(new KoagentError('hook_failed',
          `${name} called next() again while its previous next() was still pending; await it before calling again (sequential retries are fine)`,
          { layer: name }), name));
      }
      frame.pending = true;
      frame.calls++;
      return inner(ctx, frame);
    };
    const fail = (error: unknown): never => {
      const blamed = error === frame.innerError ? error : attributeError(error, name);
      if (caller !== undefined) {
        caller.pending = false;
        caller.innerError = blamed;
      }
      throw blamed;
    };
    let returned: Promise<T> | T;
    try {
      returned = fn(ctx, next);
    } catch (error) {
      return Promise.reject(error).catch(fail);
    }
    return Promise.resolve(returned).then((out: T) => {
      if (out === undefined) {
        fail(new KoagentError('hook_failed', `${name} returned nothing; a middleware must return the outcome (usually \`return next()\`)`, { layer: name }));
      }
      let settled = out as T;
      if (settle !== undefined) {
        try {
          settled = settle(ctx, out, name, frame.calls > 0);
        } catch (error) {
          fail(error);
        }
      }
      if (caller !== undefined) caller.pending = false;
      return settled;
    }, fail);
  };
}
