import koaCompose from 'koa-compose';
import { blame, KoagentError } from '../vocabulary/errors.js';

import type { Layer, Next, ReturnCheck } from '../vocabulary/layer.js';

export type { Layer, LayerFn, Next, ReturnCheck } from '../vocabulary/layer.js';

type Dispatch<C, T> = (ctx: C) => Promise<T>;

/**
 * Compose layers around a terminal step into one function, built once per stack. koa-compose
 * dispatches; each layer is wrapped once, here, with what it needs:
 * - its name for blame: an error its own code throws is attributed to it where it is thrown (an
 *   error that passes through it already has its origin, and keeps it);
 * - the check of what it returns, applied when it settles the call or returns after `next()`;
 * - re-entry: `next()` again once the previous call settled (a retry, a fallback) dispatches
 *   the rest of the stack again; a `next()` while an earlier one is pending is refused.
 */
export function compose<C, T>(layers: readonly Layer<C, T>[], terminal: Dispatch<C, T>): Dispatch<C, T> {
  // The rest of the stack after each layer, composed the first time a layer calls next() again.
  const rests: Dispatch<C, T>[] = [];
  const dispatch = (from: number) => koaCompose(chain.slice(from)) as unknown as Dispatch<C, T>;
  const chain: koaCompose.Middleware<C>[] = layers.map((layer, i) => wrap(layer, () => (rests[i] ??= dispatch(i + 1))));
  chain.push((ctx) => terminal(ctx));
  return dispatch(0);
}

function wrap<C, T>({ name, fn, self, check }: Layer<C, T>, rest: () => Dispatch<C, T>): koaCompose.Middleware<C> {
  return (ctx, koaNext) => {
    // What the last next() returned, and whether the layer's own code is still running (before
    // its first await): a second next() then is concurrent with the first, whatever that holds.
    let last: Promise<T> | undefined;
    let running = true;
    const next: Next<T> = () => {
      if (last === undefined) return (last = koaNext() as Promise<T>);
      return (last = running ? concurrent(name) : again(last, name, () => rest()(ctx)));
    };
    let returned: unknown;
    try {
      returned = fn.call(self, ctx, next);
    } catch (error) {
      return Promise.reject(blame(error, name));
    } finally {
      running = false;
    }
    // `return next()` hands back the inner layers' own promise: nothing of this layer's is in it.
    if (returned === last && last !== undefined) return last;
    const settle = (out: T): T => {
      try {
        return checked(out, ctx, name, check, last !== undefined);
      } catch (error) {
        throw blame(error, name);
      }
    };
    if (typeof (returned as PromiseLike<T> | undefined)?.then !== 'function') {
      try {
        return Promise.resolve(settle(returned as T));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return Promise.resolve(returned as PromiseLike<T>).then(settle, (error: unknown) => {
      throw blame(error, name);
    });
  };
}

/** What a layer returned, checked: `undefined` is refused, naming the layer, then its own check has its say. */
function checked<C, T>(out: T, ctx: C, name: string, check: ReturnCheck<C, T> | undefined, nextCalled: boolean): T {
  if (out === undefined) {
    throw new KoagentError('hook_failed', `${name} returned nothing; a middleware must return the outcome (usually \`return next()\`)`, { layer: name });
  }
  return check === undefined ? out : check(ctx, out, name, nextCalled);
}

/** A later `next()`: allowed once the previous one settled, and then the rest of the stack runs again. */
async function again<T>(previous: Promise<T>, name: string, dispatch: () => Promise<T>): Promise<T> {
  return (await settledYet(previous)) ? dispatch() : concurrent(name);
}

/** Whether `promise` has settled by now: a settled one's reaction is queued before the marker's. */
function settledYet(promise: Promise<unknown>): Promise<boolean> {
  const pending = {};
  return Promise.race([promise, pending]).then((value) => value !== pending, () => true);
}

function concurrent<T>(name: string): Promise<T> {
  const problem = `${name} called next() again while its previous next() was still pending; await it before calling again (sequential retries are fine)`;
  return Promise.reject(blame(new KoagentError('hook_failed', problem, { layer: name }), name));
}
