import { blame, errorOrigin, KoagentError } from '../vocabulary/errors.js';

/**
 * Called with what a checked layer returned. It may return a replacement (e.g. to stamp who
 * settled a tool call) or throw to reject it. `nextCalled` is false when the layer short-circuited.
 */
export type ReturnCheck<C, T> = (ctx: C, out: T, layer: string, nextCalled: boolean) => T;

/**
 * A layer whose promise was not checked when it settled: what it returned, and what its
 * `next()` returned. A stack call's marks are listed innermost first (inner layers return first).
 */
export interface Mark {
  name: string;
  returned: PromiseLike<unknown>;
  next: PromiseLike<unknown>;
}

/** What a layer returned, checked: `undefined` is refused, naming the layer, then `check` has its say. */
export function checkedValue<C, T>(out: T, ctx: C, name: string, check: ReturnCheck<C, T> | undefined, nextCalled: boolean): T {
  if (out === undefined) {
    throw new KoagentError('hook_failed', `${name} returned nothing; a middleware must return the outcome (usually \`return next()\`)`, { layer: name });
  }
  return check === undefined ? out : check(ctx, out, name, nextCalled);
}

/**
 * The stack's result, checked once. A bad value, or an error nobody has claimed, is traced back
 * to the marked layer that produced it. A good value is handed on as it is (not from an `async`
 * function, whose promise of its own would delay every stack call).
 */
export function verified<C, T>(result: Promise<T>, ctx: C, marks: readonly Mark[], check: ReturnCheck<C, T> | undefined): Promise<T> {
  return result.then((out) => {
    try {
      return checkedValue(out, ctx, '(a layer)', check, true);
    } catch (problem) {
      return blameProducer(ctx, out, marks, check, problem);
    }
  }, (error: unknown) => traceError(error, marks));
}

async function blameProducer<C, T>(ctx: C, out: T, marks: readonly Mark[], check: ReturnCheck<C, T> | undefined, problem: unknown): Promise<never> {
  const culprit = await producer(marks, (state) => 'value' in state && state.value === out);
  if (culprit !== undefined) {
    try {
      checkedValue(out, ctx, culprit, check, true);
    } catch (error) {
      throw blame(error, culprit);
    }
  }
  throw problem;
}

async function traceError(error: unknown, marks: readonly Mark[]): Promise<never> {
  if (errorOrigin(error) === undefined) {
    const culprit = await producer(marks, (state) => 'error' in state && state.error === error);
    if (culprit !== undefined) throw blame(error, culprit);
  }
  throw error;
}

/** The innermost marked layer whose own promise came to `matches` while its `next()` did not. */
async function producer(marks: readonly Mark[], matches: (state: Settled) => boolean): Promise<string | undefined> {
  for (const { name, returned, next } of marks) {
    if (matches(await stateOf(returned)) && !matches(await stateOf(next))) return name;
  }
  return undefined;
}

type Settled = { value: unknown } | { error: unknown } | { pending: true };
const PENDING = Symbol('pending');

/** How a promise stands now, without waiting for it: a settled one's reaction is queued before the marker's. */
export function stateOf(promise: PromiseLike<unknown>): Promise<Settled> {
  return Promise.race([promise, PENDING]).then(
    (value): Settled => (value === PENDING ? { pending: true } : { value }),
    (error: unknown): Settled => ({ error }),
  );
}
