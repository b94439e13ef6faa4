import { attributeError, KoagentError } from './errors.js';

/** `next()` for a layer: runs everything inside it and resolves to the inner outcome. */
export type Next<T> = () => Promise<T>;

/** A function of one hook point: code before `await next()` is "before", code after is "after". */
export type LayerFn<C, T> = (ctx: C, next: Next<T>) => Promise<T> | T;

/** One layer of a stack: a user's, checked on every call. */
export interface CheckedLayer<C, T> {
  name: string;
  fn: LayerFn<C, T>;
  trusted?: false;
}

/**
 * One of koagent's own steps: not checked per call, and its `next` takes the context, so
 * calling it costs no closure.
 */
export interface TrustedLayer<C, T> {
  name: string;
  fn: (ctx: C, next: (ctx: C) => Promise<T>) => Promise<T>;
  trusted: true;
}

export type Layer<C, T> = CheckedLayer<C, T> | TrustedLayer<C, T>;

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
  /** The promise the last `next()` returned. */
  last?: Promise<unknown>;
  /** Set when this layer passed that promise straight back: its caller settles with it. */
  up?: Frame;
}

type Inner<C, T> = (ctx: C, caller?: Frame) => Promise<T>;

const NONE = Symbol('none');

/** A call settled: tell the caller's frame, and those of pass-through layers above it. */
function release(caller: Frame | undefined, error: unknown): void {
  for (let frame = caller; frame !== undefined; frame = frame.up) {
    frame.pending = false;
    if (error !== NONE) frame.innerError = error;
  }
}

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

function trustedLayer<C, T>(layer: TrustedLayer<C, T>, inner: Inner<C, T>): Inner<C, T> {
  const { fn } = layer;
  return (ctx) => fn(ctx, inner);
}

/** Wrap code that is not a checked layer so it tells its caller's frame when it settles. */
function reporting<C, T>(inner: Inner<C, T>): Inner<C, T> {
  return (ctx, caller) => inner(ctx).then(
    (value) => { release(caller, NONE); return value; },
    (error) => { release(caller, error); throw error; },
  );
}

function checkedLayer<C, T>(layer: Layer<C, T>, inner: Inner<C, T>, settle?: Settle<C, T>): Inner<C, T> {
  const { fn, name } = layer;
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
      return (frame.last = inner(ctx, frame));
    };
    // Rethrowing what next() rejected with leaves the blame where it arose.
    const fail = (error: unknown): never => {
      const blamed = error === frame.innerError ? error : attributeError(error, name);
      release(caller, blamed);
      throw blamed;
    };
    let returned: Promise<T> | T;
    try {
      returned = fn(ctx, next);
    } catch (error) {
      return Promise.reject(error).catch(fail);
    }
    // `return next()` passed the inner promise straight back: its value was checked inside, so
    // this layer costs no promise of its own (that is what keeps a layer near koa-compose's cost).
    if (returned === frame.last && returned !== undefined) {
      frame.up = caller;
      return returned as Promise<T>;
    }
    // Otherwise one reaction does all the checks on the way out.
    return Promise.resolve(returned).then((out: T) => {
      let settled = out;
      try {
        if (out === undefined) {
          throw new KoagentError('hook_failed', `${name} returned nothing; a middleware must return the outcome (usually \`return next()\`)`, { layer: name });
        }
        if (settle !== undefined) settled = settle(ctx, out, name, frame.calls > 0);
      } catch (error) {
        fail(error);
      }
      release(caller, NONE);
      return settled;
    }, fail);
  };
}
