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

const NONE = Symbol('none');

/** What a checked layer knows about its own `next()`: one per layer call. */
interface Frame {
  pending: boolean;
  calls: number;
  /** The last rejection `next()` delivered, so rethrowing it is not blamed on this layer. */
  innerError: unknown;
  /** The promise the last `next()` returned. */
  last: Promise<unknown> | undefined;
  /** Set when this layer passed that promise straight back: its caller settles with it. */
  up: Frame | undefined;
}

type Inner<C, T> = (ctx: C, caller?: Frame) => Promise<T>;

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

/**
 * Wrap code that is not a checked layer so it tells its caller's frame when it settles. The
 * promise itself goes back up, not one chained to it: the report is the first reaction on it,
 * so it runs before any layer awaiting it resumes, and the call costs no extra microtask.
 */
function reporting<C, T>(inner: Inner<C, T>): Inner<C, T> {
  return (ctx, caller) => {
    let settled: Promise<T>;
    try {
      settled = inner(ctx);
    } catch (error) {
      // koagent's own steps are not all async: what one throws is still the inner code's failure.
      settled = Promise.reject(error);
    }
    // The rejection handler does not rethrow: the report's own promise must not reject unhandled.
    settled.then(() => release(caller, NONE), (error: unknown) => release(caller, error));
    return settled;
  };
}

/** The layer threw instead of returning: it fails as if its promise had rejected. */
function threw<T>(error: unknown, frame: Frame, caller: Frame | undefined, name: string): Promise<T> {
  return Promise.reject(error).catch((e: unknown) => blame(frame, caller, name, e));
}

/** A layer's call failed: rethrowing what next() rejected with leaves the blame where it arose. */
function blame(frame: Frame, caller: Frame | undefined, name: string, error: unknown): never {
  const blamed = error === frame.innerError ? error : attributeError(error, name);
  release(caller, blamed);
  throw blamed;
}

function checkedLayer<C, T>(layer: Layer<C, T>, inner: Inner<C, T>, settle?: Settle<C, T>): Inner<C, T> {
  const { fn, name } = layer;
  return function layerCall(ctx: C, caller?: Frame): Promise<T> {
    // Every field set from the start, so all frames share one shape.
    const frame: Frame = { pending: false, calls: 0, innerError: NONE, last: undefined, up: undefined };
    const next: Next<T> = () => {
      if (frame.pending) {
        return Promise.reject(attributeError(new KoagentError('hook_failed',
          `${name} called next() again while its previous next() was still pending; await it before calling again (sequential retries are fine)`,
          { layer: name }), name));
      }
      frame.pending = true;
      frame.calls++;
      return (frame.last = inner(ctx, frame)) as Promise<T>;
    };
    let returned: Promise<T> | T;
    try {
      returned = fn(ctx, next);
    } catch (error) {
      return threw(error, frame, caller, name);
    }
    // `return next()` passed the inner promise straight back: its value was checked inside, so
    // this layer costs no promise of its own (that is what keeps a layer near koa-compose's cost).
    if (returned === frame.last && returned !== undefined) {
      frame.up = caller;
      return returned as Promise<T>;
    }
    return settleOwn(returned, ctx, frame, caller, name, settle);
  };
}

/** A layer that did not pass `next()`'s promise straight back: one reaction checks its value. */
function settleOwn<C, T>(returned: Promise<T> | T, ctx: C, frame: Frame, caller: Frame | undefined, name: string, settle?: Settle<C, T>): Promise<T> {
  const fail = (error: unknown): never => blame(frame, caller, name, error);
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
}
