import koaCompose from 'koa-compose';
import { blame, KoagentError } from '../vocabulary/errors.js';
import type { Layer, Next, ReturnCheck } from '../vocabulary/layer.js';

type Dispatch<C, T> = (ctx: C) => Promise<T>;

/**
 * Layers around a terminal, built once per stack; koa-compose dispatches. Each layer (anyone's) is
 * wrapped once with its name for blame (what its own code throws is its), its return check, and
 * re-entry: `next()` again once the last one settled runs the rest again (while pending: refused).
 */
export function compose<C, T>(layers: readonly Layer<C, T>[], terminal: Dispatch<C, T>): Dispatch<C, T> {
  // No layers: the terminal alone (a sync throw rejects, as with koa-compose). With layers, the rest
  // of the stack after each is composed the first time it calls next() again.
  if (layers.length === 0) return (ctx) => { try { return terminal(ctx); } catch (error) { return Promise.reject(error); } };
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
        if (out === undefined) throw new KoagentError('hook_failed', `${name} returned nothing; a middleware must return the outcome (usually \`return next()\`)`, { layer: name });
        return check === undefined ? out : check(ctx, out, name, last !== undefined);
      } catch (error) {
        throw blame(error, name);
      }
    };
    if (typeof (returned as PromiseLike<T> | undefined)?.then === 'function') {
      return Promise.resolve(returned as PromiseLike<T>).then(settle, (error: unknown) => Promise.reject(blame(error, name)));
    }
    try {
      return Promise.resolve(settle(returned as T));
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/** A later `next()`: allowed once the previous one settled (a settled promise wins a race with a fresh value), and then the rest runs again. */
async function again<T>(previous: Promise<T>, name: string, dispatch: () => Promise<T>): Promise<T> {
  const pending = {};
  const settled = await Promise.race([previous, pending]).then((value) => value !== pending, () => true);
  return settled ? dispatch() : concurrent(name);
}

const concurrent = <T>(name: string): Promise<T> =>
  Promise.reject(blame(new KoagentError('hook_failed', `${name} called next() again while its previous next() was still pending; await it before calling again (sequential retries are fine)`, { layer: name }), name));
