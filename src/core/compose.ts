import koaCompose from 'koa-compose';
import { blame, KoagentError } from './errors.js';

/** `next()` for a layer: runs everything inside it and resolves to the inner outcome. */
export type Next<T> = () => Promise<T>;

/** A function of one hook point: code before `await next()` is "before", code after is "after". */
export type LayerFn<C, T> = (ctx: C, next: Next<T>) => Promise<T> | T;

/**
 * One layer of a stack. A user's layer is checked on every call; koagent's own steps are
 * `trusted`: koa-compose calls them as they are, at no cost beyond its own dispatch.
 */
export interface Layer<C, T> {
  name: string;
  fn: LayerFn<C, T>;
  trusted?: boolean;
}

/**
 * Called with what a checked layer returned. It may return a replacement (e.g. to stamp who
 * settled a tool call) or throw to reject it. `nextCalled` is false when the layer short-circuited.
 */
export type ReturnCheck<C, T> = (ctx: C, out: T, layer: string, nextCalled: boolean) => T;

type Dispatch<C, T> = (ctx: C) => Promise<T>;
type KoaLayer<C> = (ctx: C, next: () => Promise<unknown>) => unknown;

/** What a checked layer knows of its own `next()`: one per layer call. */
interface Frame {
  /** A `next()` of this layer has not settled yet. */
  pending: boolean;
  /** Set when this layer passed its `next()` promise straight back: its caller settles with it. */
  up: Frame | undefined;
}

/**
 * The frame of the checked layer whose `next()` is being dispatched right now. koa-compose calls
 * the next layer synchronously, so the checked layer directly inside takes it at its start: the
 * inner layer reports back when it settles, and the outer one needs no reaction of its own.
 */
let handoff: Frame | undefined;

/** A call settled: its caller's frame, and those of pass-through layers above it, are free again. */
function release(frame: Frame | undefined): void {
  for (let f = frame; f !== undefined; f = f.up) f.pending = false;
}

/**
 * Compose layers around a terminal step into one function, built once per stack. koa-compose
 * dispatches; each checked layer is wrapped so that:
 * - it may call `next()` again once the previous call settled (retry, fallback): the rest of
 *   the stack is dispatched again, through a koa-compose of the layers inside it;
 * - calling `next()` while an earlier call is pending rejects with a clear error;
 * - an error it throws itself is attributed to it (an error it passes on keeps its origin);
 * - what it returns is checked (`undefined` is refused, naming the layer).
 */
export function compose<C, T>(layers: readonly Layer<C, T>[], terminal: Dispatch<C, T>, check?: ReturnCheck<C, T>): Dispatch<C, T> {
  if (layers.length === 0) return terminal;
  const chain: KoaLayer<C>[] = [];
  // The rest of the stack from position i, composed on first use (a retry is rare).
  const rests: (Dispatch<C, T> | undefined)[] = [];
  const rest = (i: number): Dispatch<C, T> => (rests[i] ??= koaCompose(chain.slice(i)) as Dispatch<C, T>);
  layers.forEach((layer, i) => {
    if (layer.trusted === true) return chain.push(layer.fn as KoaLayer<C>);
    // A layer directly inside that is not checked will not report back: then this one watches.
    const inner = layers[i + 1];
    const watches = inner === undefined || inner.trusted === true;
    return chain.push(checked(layer, check, () => rest(i + 1), watches));
  });
  chain.push((ctx) => terminal(ctx));
  return koaCompose(chain) as Dispatch<C, T>;
}

function checked<C, T>(layer: Layer<C, T>, check: ReturnCheck<C, T> | undefined, rest: () => Dispatch<C, T>, watches: boolean): KoaLayer<C> {
  const { fn, name } = layer;
  return (ctx, koaNext) => {
    const caller = handoff;
    handoff = undefined;
    // Both fields set from the start, so all frames share one shape.
    const frame: Frame = { pending: false, up: undefined };
    // The promise the last next() returned; undefined until the first call.
    let last: Promise<T> | undefined;
    const next: Next<T> = () => {
      if (frame.pending) return concurrent(name);
      frame.pending = true;
      handoff = frame;
      const inner = (last === undefined ? koaNext() : rest()(ctx)) as Promise<T>;
      handoff = undefined;
      // The report is the first reaction on the promise, so it runs before this layer resumes.
      if (watches) inner.then(() => release(frame), () => release(frame));
      return (last = inner);
    };
    let returned: Promise<T> | T;
    try {
      returned = fn(ctx, next);
    } catch (error) {
      release(caller);
      return Promise.reject(blame(error, name));
    }
    // `return next()` passes the inner promise straight back: what it holds was checked inside,
    // so this layer costs no promise of its own.
    if (returned === last && returned !== undefined) {
      frame.up = caller;
      return returned;
    }
    return Promise.resolve(returned).then((out: T) => {
      let value = out;
      try {
        if (out === undefined) {
          throw new KoagentError('hook_failed', `${name} returned nothing; a middleware must return the outcome (usually \`return next()\`)`, { layer: name });
        }
        if (check !== undefined) value = check(ctx, out, name, last !== undefined);
      } catch (error) {
        release(caller);
        throw blame(error, name);
      }
      release(caller);
      return value;
    }, (error: unknown) => {
      release(caller);
      throw blame(error, name);
    });
  };
}

function concurrent<T>(name: string): Promise<T> {
  return Promise.reject(blame(new KoagentError('hook_failed',
    `${name} called next() again while its previous next() was still pending; await it before calling again (sequential retries are fine)`,
    { layer: name }), name));
}
