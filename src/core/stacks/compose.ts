import koaCompose from 'koa-compose';
import { blame, KoagentError } from '../vocabulary/errors.js';
import { checkedValue, stateOf, verified, type Mark, type ReturnCheck } from './culprit.js';

/** `next()` for a layer: runs everything inside it and resolves to the inner outcome. */
export type Next<T> = () => Promise<T>;

/** A function of one hook point: code before `await next()` is "before", code after is "after". */
export type LayerFn<C, T> = (ctx: C, next: Next<T>) => Promise<T> | T;

/**
 * One layer of a stack. A user's layer is checked on every call; koagent's own steps are
 * `trusted`: called as they are. A trusted step passes the context on (`next(ctx)`), and calls
 * `next` synchronously when user layers are inside it.
 */
export type Layer<C, T> = CheckedLayer<C, T> | TrustedLayer<C, T>;

/** A user's layer: checked on every call. `self` is what `this` is when `fn` runs (its object). */
export interface CheckedLayer<C, T> {
  name: string;
  fn: LayerFn<C, T>;
  self?: unknown;
  trusted?: false;
}

/** One of koagent's own steps. */
export interface TrustedLayer<C, T> {
  name: string;
  fn: (ctx: C, next: (ctx: C) => Promise<T>) => Promise<T>;
  trusted: true;
}

type Dispatch<C, T> = (ctx: C) => Promise<T>;

/** One call of a stack, as koa-compose hands it down: the context, and the layers marked so far. */
type StackCall<C> = { readonly ctx: C; marks: Mark[] | undefined };

/**
 * Compose layers around a terminal step into one function, built once per stack. koa-compose
 * dispatches; each checked layer is wrapped so that:
 * - it may call `next()` again once the previous call is over (retry, fallback): the rest of
 *   the stack is dispatched again; a `next()` while an earlier one is pending is refused;
 * - an error it throws itself is blamed on it (an error it passes on keeps its origin);
 * - what it returns is checked: at once when it settles the call itself; with the stack's result
 *   when it awaits its `next()` (and blamed if that is bad); never when it returns `next()`.
 */
export function compose<C, T>(layers: readonly Layer<C, T>[], terminal: Dispatch<C, T>, check?: ReturnCheck<C, T>): Dispatch<C, T> {
  if (layers.every((layer) => layer.trusted === true)) return chainSteps(layers as TrustedLayer<C, T>[], terminal);
  // The rest of the stack after each layer, composed the first time a layer calls next() again.
  const rests: Dispatch<StackCall<C>, T>[] = [];
  const rest = (i: number) => (rests[i] ??= koaCompose(chain.slice(i)) as Dispatch<StackCall<C>, T>);
  const chain = layers.map((layer, i): koaCompose.Middleware<StackCall<C>> => (layer.trusted === true
    ? (call, next) => layer.fn(call.ctx, next as () => Promise<T>)
    : wrap(layer, check, () => rest(i + 1))));
  chain.push((call) => terminal(call.ctx));
  const dispatch = koaCompose(chain) as Dispatch<StackCall<C>, T>;
  return (ctx) => {
    const call: StackCall<C> = { ctx, marks: undefined };
    const result = dispatch(call);
    return call.marks === undefined ? result : verified(result, ctx, call.marks, check);
  };
}

/** koagent's own steps alone: each calls the next directly, and there is nothing to check. */
function chainSteps<C, T>(steps: readonly TrustedLayer<C, T>[], terminal: Dispatch<C, T>): Dispatch<C, T> {
  return steps.reduceRight<Dispatch<C, T>>((next, { fn }) => (ctx) => fn(ctx, next), terminal);
}

/** A checked layer as a koa-compose layer, with a `next` of its own on every call. */
function wrap<C, T>({ name, fn, self }: CheckedLayer<C, T>, check: ReturnCheck<C, T> | undefined, rest: () => Dispatch<StackCall<C>, T>): koaCompose.Middleware<StackCall<C>> {
  return (call, koaNext) => {
    // What the last next() returned, and whether the layer's own code is still running (before
    // its first await): a second next() then is concurrent with the first, whatever that holds.
    let last: Promise<T> | undefined;
    let running = true;
    const next: Next<T> = () => {
      if (last === undefined) return (last = koaNext() as Promise<T>);
      return (last = running ? concurrent(name) : again(last, name, rest(), call));
    };
    try {
      const returned: unknown = fn.call(self, call.ctx, next);
      // `return next()` hands back the inner promise: nothing of this layer's is in it.
      if (returned === last && last !== undefined) return last;
      if (typeof (returned as PromiseLike<T> | undefined)?.then !== 'function') {
        return Promise.resolve(checkedValue(returned as T, call.ctx, name, check, last !== undefined));
      }
      const promise = returned as Promise<T>;
      const marks = (call.marks ??= []);
      if (last !== undefined) {
        marks.push({ name, returned: promise, next: last });
        return promise;
      }
      const mark = () => marks.push({ name, returned: promise, next: last! });
      // It returned before calling next(): it may settle the call itself, checked when it does.
      return promise.then((out) => {
        if (last === undefined) return checkedValue(out, call.ctx, name, check, false);
        mark();
        return out;
      }, (error: unknown) => {
        if (last === undefined) throw blame(error, name);
        mark();
        throw error;
      });
    } catch (error) {
      return Promise.reject(blame(error, name));
    } finally {
      running = false;
    }
  };
}

/** A later `next()`: allowed once the previous one is over, and then the rest is dispatched again. */
async function again<C, T>(previous: Promise<T>, name: string, rest: Dispatch<StackCall<C>, T>, call: StackCall<C>): Promise<T> {
  return 'pending' in (await stateOf(previous)) ? concurrent(name) : rest(call);
}

function concurrent<T>(name: string): Promise<T> {
  const problem = `${name} called next() again while its previous next() was still pending; await it before calling again (sequential retries are fine)`;
  return Promise.reject(blame(new KoagentError('hook_failed', problem, { layer: name }), name));
}
