import koaCompose from 'koa-compose';
import { blame, errorOrigin, KoagentError } from '../vocabulary/errors.js';

/** `next()` for a layer: runs everything inside it and resolves to the inner outcome. */
export type Next<T> = () => Promise<T>;

/** A function of one hook point: code before `await next()` is "before", code after is "after". */
export type LayerFn<C, T> = (ctx: C, next: Next<T>) => Promise<T> | T;

/**
 * One layer of a stack. A user's layer is checked on every call; koagent's own steps are
 * `trusted`: called as they are, at no cost beyond the dispatch. A trusted step may pass the
 * context to `next` (`next(ctx)`), which lets koagent chain a stack of its own steps without a
 * closure per call. A trusted step with user layers inside it calls `next` synchronously.
 */
export type Layer<C, T> = CheckedLayer<C, T> | TrustedLayer<C, T>;

/** A user's layer: checked on every call. `self` is what `this` is when `fn` runs (its object). */
export interface CheckedLayer<C, T> {
  name: string;
  fn: LayerFn<C, T>;
  self?: unknown;
  /** Set when `fn` is the data property of that name on `self` (own or inherited): it is called as that method. */
  method?: HookPoint;
  trusted?: false;
}

/** The names under which a middleware object holds its layer functions. */
export type HookPoint = 'run' | 'model' | 'tool';

/** One of koagent's own steps. */
export interface TrustedLayer<C, T> {
  name: string;
  fn: (ctx: C, next: (ctx: C) => Promise<T>) => Promise<T>;
  trusted: true;
}

/**
 * Called with what a checked layer returned. It may return a replacement (e.g. to stamp who
 * settled a tool call) or throw to reject it. `nextCalled` is false when the layer short-circuited.
 */
export type ReturnCheck<C, T> = (ctx: C, out: T, layer: string, nextCalled: boolean) => T;

type Dispatch<C, T> = (ctx: C) => Promise<T>;
type KoaLayer<C> = (ctx: C, next: () => Promise<unknown>) => unknown;

/**
 * Of one stack call, the layers whose promise was not checked when it resolved, innermost first:
 * `name, returned, next` triples. The call's result is checked once; only when it fails do these
 * say who is to blame.
 */
type Records = unknown[];

/** The records of the stack call being dispatched now (koa-compose enters layers synchronously). */
let records: Records | undefined;

/**
 * Compose layers around a terminal step into one function, built once per stack. koa-compose
 * dispatches; each checked layer is wrapped so that:
 * - it may call `next()` again once the previous call is over (retry, fallback): the rest of
 *   the stack is dispatched again, through a koa-compose of the layers inside it;
 * - calling `next()` while an earlier call is pending rejects with a clear error;
 * - an error it throws itself is attributed to it (an error it passes on keeps its origin);
 * - what it returns is checked (`undefined` is refused, naming the layer).
 *
 * A layer that settles the call itself is checked at once. One that awaits its `next()` (the
 * usual `const out = await next(); …; return out;`) costs no promise of its own: the stack's
 * result is checked when it is known, and a bad value or an error is traced back to the layer
 * that produced it, innermost first.
 */
export function compose<C, T>(layers: readonly Layer<C, T>[], terminal: Dispatch<C, T>, check?: ReturnCheck<C, T>): Dispatch<C, T> {
  // koagent's own steps alone (no user layer): each calls the next directly, nothing to check.
  if (layers.every((layer) => layer.trusted === true)) return chainSteps(layers as TrustedLayer<C, T>[], terminal);
  const chain: KoaLayer<C>[] = [];
  // The rest of the stack from position i, composed on first use (a retry is rare).
  const rests: (Dispatch<C, T> | undefined)[] = [];
  const rest = (i: number): Dispatch<C, T> => (rests[i] ??= koaCompose(chain.slice(i)) as Dispatch<C, T>);
  layers.forEach((layer, i) => {
    // koa-compose's `next` takes no argument and ignores one, so `next(ctx)` works here too.
    if (layer.trusted === true) chain.push(layer.fn as unknown as KoaLayer<C>);
    else chain.push((layer.fn instanceof AsyncFunction ? checkedAsync : checked)(layer, check, () => rest(i + 1)));
  });
  chain.push((ctx) => terminal(ctx));
  const dispatch = koaCompose(chain) as Dispatch<C, T>;
  return (ctx) => {
    const mine: Records = [];
    const outer = records;
    records = mine;
    const result = dispatch(ctx);
    records = outer;
    // Only pass-through layers (or none) were met: nothing they could have made needs a check.
    if (mine.length === 0) return result;
    return result.then((out) => verify(ctx, out, mine, check), (error: unknown) => traceError(error, mine));
  };
}

function chainSteps<C, T>(steps: readonly TrustedLayer<C, T>[], terminal: Dispatch<C, T>): Dispatch<C, T> {
  let inner = terminal;
  for (let i = steps.length - 1; i >= 0; i--) {
    const { fn } = steps[i];
    const next = inner;
    inner = (ctx) => fn(ctx, next);
  }
  return inner;
}

function checked<C, T>(layer: CheckedLayer<C, T>, check: ReturnCheck<C, T> | undefined, rest: () => Dispatch<C, T>): KoaLayer<C> {
  const { fn, name, self, method } = layer;
  const own = self as Partial<Record<HookPoint, LayerFn<C, T>>>;
  return (ctx, koaNext) => {
    // The promise the last next() returned; undefined until the first call.
    let last: Promise<T> | undefined;
    // The layer's own code runs (before its first await). A second next() then cannot follow a
    // finished first one: it is concurrent, whatever the first holds. (A flag, not a sentinel in
    // `returned`: storing a boolean costs no write barrier, and `returned` stays off the heap.)
    let running = true;
    // This stack call's records, taken when the layer returns (pass-through layers never need them).
    let mine: Records | undefined;
    const next: Next<T> = () => {
      if (last !== undefined) return (last = running ? concurrent(name) : again(last, name, rest(), ctx, mine!));
      if (running) return (last = koaNext() as Promise<T>);
      // Called after an await: what runs inside records into this stack call's list.
      const outer = records;
      records = mine;
      last = koaNext() as Promise<T>;
      records = outer;
      return last;
    };
    let returned: unknown;
    try {
      // Called as a method of its object when it is one: V8 inlines that call, and with it the
      // `next` made above (about half this wrapper's cost); a call through `fn` it does not.
      // Comparing with `fn` keeps what the stack was built with authoritative.
      returned =
        method === 'tool' && own.tool === fn ? own.tool(ctx, next)
        : method === 'model' && own.model === fn ? own.model(ctx, next)
        : method === 'run' && own.run === fn ? own.run(ctx, next)
        : fn.call(self, ctx, next);
    } catch (error) {
      running = false;
      return Promise.reject(blame(error, name));
    }
    running = false;
    // `return next()` passes the inner promise straight back: it can hold nothing this layer made.
    if (returned === last && returned !== undefined) return returned;
    if (typeof (returned as PromiseLike<T> | undefined)?.then !== 'function') {
      // A value, not a promise: checked now.
      try {
        return Promise.resolve(checkedValue(returned as T, ctx, name, check, last !== undefined));
      } catch (error) {
        return Promise.reject(blame(error, name));
      }
    }
    const promise = returned as Promise<T>;
    const list = (mine = records!);
    if (last === undefined) return settlesLater(promise, list, name, ctx, check, () => last);
    // It awaits the next() it called: checked with the stack's result.
    list.push(name, promise, last);
    return promise;
  };
}

/** The class of `async` functions: a layer written `async (ctx, next) => { … }` is one. */
const AsyncFunction = (async () => undefined).constructor;

/**
 * The wrapper of a layer that is an `async` function, the way most layers are written. Such a
 * call returns a promise of its own, never `next()`'s and never a value, so only that path of
 * `checked` is here. It is code of its own so that V8's type feedback for async layers stays
 * apart from that of layers that hand `next()`'s promise back: with one wrapper for both, each
 * kind cost a third more once the other had run (see the performance page).
 */
function checkedAsync<C, T>(layer: CheckedLayer<C, T>, check: ReturnCheck<C, T> | undefined, rest: () => Dispatch<C, T>): KoaLayer<C> {
  const { fn, name, self, method } = layer;
  const own = self as Partial<Record<HookPoint, LayerFn<C, T>>>;
  return (ctx, koaNext) => {
    let last: Promise<T> | undefined;
    let running = true;
    let mine: Records | undefined;
    const next: Next<T> = () => {
      if (last !== undefined) return (last = running ? concurrent(name) : again(last, name, rest(), ctx, mine!));
      if (running) return (last = koaNext() as Promise<T>);
      const outer = records;
      records = mine;
      last = koaNext() as Promise<T>;
      records = outer;
      return last;
    };
    let promise: Promise<T>;
    try {
      promise = (
        method === 'tool' && own.tool === fn ? own.tool(ctx, next)
        : method === 'model' && own.model === fn ? own.model(ctx, next)
        : method === 'run' && own.run === fn ? own.run(ctx, next)
        : fn.call(self, ctx, next)) as Promise<T>;
    } catch (error) {
      // Not the function's own error (it would reject): a getter put in its place, say.
      running = false;
      return Promise.reject(blame(error, name));
    }
    running = false;
    const list = (mine = records!);
    if (last === undefined) return settlesLater(promise, list, name, ctx, check, () => last);
    list.push(name, promise, last);
    return promise;
  };
}

/**
 * A layer's promise, returned before the layer called `next()`: it may settle the call itself,
 * which is checked as it comes. It is marked now, so the stack's result is checked too (the
 * layer may still call `next()`); `lastNext` says, when it settles, what that `next()` returned.
 */
function settlesLater<C, T>(promise: Promise<T>, list: Records, name: string, ctx: C, check: ReturnCheck<C, T> | undefined, lastNext: () => Promise<T> | undefined): Promise<T> {
  list.push(EAGER, promise, undefined);
  return promise.then((out) => {
    const last = lastNext();
    if (last === undefined) return checkedValue(out, ctx, name, check, false);
    list.push(name, promise, last);
    return out;
  }, (error: unknown) => {
    const last = lastNext();
    if (last === undefined) throw blame(error, name);
    list.push(name, promise, last);
    throw error;
  });
}

function checkedValue<C, T>(out: T, ctx: C, name: string, check: ReturnCheck<C, T> | undefined, nextCalled: boolean): T {
  if (out === undefined) throw nothing(name);
  return check === undefined ? out : check(ctx, out, name, nextCalled);
}

function nothing(name: string): KoagentError {
  return new KoagentError('hook_failed', `${name} returned nothing; a middleware must return the outcome (usually \`return next()\`)`, { layer: name });
}

/**
 * The stack's result, checked; a bad one is traced back to the layer that returned it. A good
 * one is returned as it is, not from an async function: a promise of its own, resolved with the
 * result, would cost every stack call two more turns of the microtask queue.
 */
function verify<C, T>(ctx: C, out: T, mine: Records, check: ReturnCheck<C, T> | undefined): T | Promise<never> {
  try {
    return checkedValue(out, ctx, '(a layer)', check, true);
  } catch (problem) {
    return blameProducer(ctx, out, mine, check, problem);
  }
}

async function blameProducer<C, T>(ctx: C, out: T, mine: Records, check: ReturnCheck<C, T> | undefined, problem: unknown): Promise<never> {
  const culprit = await producer(mine, (state) => 'value' in state && state.value === out);
  if (culprit === undefined) throw problem;
  try {
    checkedValue(out, ctx, culprit, check, true);
  } catch (error) {
    throw blame(error, culprit);
  }
  throw problem;
}

/** The stack failed: an error nobody has claimed is blamed on the layer that threw it. */
async function traceError(error: unknown, mine: Records): Promise<never> {
  if (errorOrigin(error) === undefined) {
    const culprit = await producer(mine, (state) => 'error' in state && state.error === error);
    if (culprit !== undefined) throw blame(error, culprit);
  }
  throw error;
}

/** A placeholder record of a layer that had not called next() when it returned its promise. */
const EAGER = Symbol('eager');

type Settled = { value: unknown } | { error: unknown } | { pending: true };
const PENDING = Symbol('pending');
const pendingMarker = Promise.resolve(PENDING);

/** How a promise stands now, without waiting for it: a resolved or rejected one's reaction is queued before the marker's. */
function stateOf(promise: Promise<unknown>): Promise<Settled> {
  return Promise.race([promise, pendingMarker]).then(
    (value): Settled => (value === PENDING ? { pending: true } : { value }),
    (error: unknown): Settled => ({ error }),
  );
}

/** The innermost recorded layer whose own promise came to `matches` while its next() did not. */
async function producer(mine: Records, matches: (state: Settled) => boolean): Promise<string | undefined> {
  for (let i = 0; i < mine.length; i += 3) {
    if (mine[i] === EAGER) continue;
    if (matches(await stateOf(mine[i + 1] as Promise<unknown>)) && !matches(await stateOf(mine[i + 2] as Promise<unknown>))) return mine[i] as string;
  }
  return undefined;
}

/**
 * A later `next()`: allowed once the previous one is over, and then the rest of the stack is
 * dispatched again. `Promise.race` tells whether it is: a finished promise's reaction is queued
 * before the marker's.
 */
async function again<C, T>(previous: Promise<T>, name: string, rest: Dispatch<C, T>, ctx: C, mine: Records): Promise<T> {
  if ('pending' in (await stateOf(previous))) return concurrent(name);
  const outer = records;
  records = mine;
  const result = rest(ctx);
  records = outer;
  return result;
}

function concurrent<T>(name: string): Promise<T> {
  return Promise.reject(blame(new KoagentError('hook_failed',
    `${name} called next() again while its previous next() was still pending; await it before calling again (sequential retries are fine)`,
    { layer: name }), name));
}
