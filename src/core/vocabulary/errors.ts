import type { RunState } from './state.js';

const MARK = Symbol.for('koagent.error');

/**
 * The machine-readable reasons a run or a call to the API can fail, as the keys of this
 * interface. The run machinery's are here; a part of koagent that fails in ways of its own
 * adds its codes where it is written, by declaration merging (the run stores do).
 *
 * @example const code: keyof ErrorCodes = 'hook_failed';
 *
 * @inline
 */
export interface ErrorCodes {
  hook_failed: true;
  model_error: true;
  invalid_reply: true;
  invalid_resume: true;
  invalid_output: true;
  session_busy: true;
  tool_exception: true;
  timeout: true;
  store_error: true;
  internal: true;
}

/**
 * Machine-readable reasons a run or a call to the API can fail (`ErrorCodes` lists them).
 *
 * @example if (KoagentError.is(error) && error.code === 'invalid_resume') return respond(409, error.message);
 */
export type ErrorCode = keyof ErrorCodes;

/**
 * The one error base class of koagent. Recognise it with `KoagentError.is(e)`, which works
 * across copies of the package (a marker, not `instanceof`).
 *
 * @example if (KoagentError.is(err) && err.code === 'hook_failed') console.error(err.layer);
 */
export class KoagentError extends Error {
  readonly code: ErrorCode;
  /** The middleware layer or hook the error is attributed to, when there is one. */
  readonly layer?: string;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; layer?: string } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'KoagentError';
    this.code = code;
    if (options.layer !== undefined) this.layer = options.layer;
    Object.defineProperty(this, MARK, { value: true });
  }

  /** True for an error of koagent's (any subclass, from any copy of the package): a marker, not `instanceof`. */
  static is(value: unknown): value is KoagentError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
  }
}

/**
 * A run that failed. It rejects `run`, `send`, `resume` and `stream().result`, and carries the
 * run's state at the failure, which `agent.resume(error.state)` can continue (a retry).
 *
 * @example try { await agent.run('Hi'); } catch (error) { if (error instanceof RunFailedError) await agent.resume(error.state); }
 */
export class RunFailedError extends KoagentError {
  readonly runId: string;
  readonly state: RunState;

  constructor(code: ErrorCode, message: string, state: RunState, options: { cause?: unknown; layer?: string } = {}) {
    super(code, message, options);
    this.name = 'RunFailedError';
    this.runId = state.runId;
    this.state = state;
  }
}

// Who threw what: set where a layer or the model throws, read where the exception leaves the
// run. The thrown object keeps its identity for outer layers' try/catch; the origin rides on it
// under a key no one else reads, hidden from its enumeration and its JSON.
export type ErrorOrigin = { kind: 'layer' | 'provider' | 'koagent'; name: string };
const ORIGIN: unique symbol = Symbol('koagent.errorOrigin');

/**
 * Attribute `error` to `name`, unless its origin is already known (the first attribution wins):
 * a run it fails reports `name` as `RunFailedError.layer`. koagent does this for every layer;
 * a layer that hosts hooks of its own uses it to name the hook that threw. A thrown primitive
 * comes back wrapped in a `KoagentError` whose `cause` is the value.
 *
 * @example try { await check(ctx); } catch (error) { throw blame(error, check.name); }
 */
export function blame(error: unknown, name: string): unknown {
  return mark(error, { kind: 'layer', name });
}

/**
 * Record that koagent itself raised `error` (a terminal step, e.g. a tool exception the agent's
 * policy turns into a failure), so a layer that passes it on is not blamed for it.
 */
export function markOwnError<E>(error: E): E {
  return mark(error, { kind: 'koagent', name: 'koagent' }) as E;
}

/** Record that `error` came from the model provider `name`. */
export function markProviderError(error: unknown, name: string): unknown {
  return mark(error, { kind: 'provider', name });
}

function mark(error: unknown, origin: ErrorOrigin): unknown {
  if (typeof error === 'object' && error !== null) {
    if (ORIGIN in error) return error;
    if (Object.isExtensible(error)) {
      Object.defineProperty(error, ORIGIN, { value: origin });
      return error;
    }
  }
  // A primitive (or a frozen object) cannot carry it, so it is wrapped once; its value stays reachable as `cause`.
  const code = origin.kind === 'provider' ? 'model_error' : origin.kind === 'layer' ? 'hook_failed' : 'internal';
  const wrapped = new KoagentError(code, `${origin.name} threw ${describe(error)}`, { cause: error, layer: origin.kind === 'layer' ? origin.name : undefined });
  Object.defineProperty(wrapped, ORIGIN, { value: origin });
  return wrapped;
}

/** Where an error came from, if koagent saw it arise. */
export function errorOrigin(error: unknown): ErrorOrigin | undefined {
  return typeof error === 'object' && error !== null ? (error as { [ORIGIN]?: ErrorOrigin })[ORIGIN] : undefined;
}

export function describe(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * Turn what escaped the run stack into the one error a failed run rejects with. `thrownBy`:
 * the layer an error still on its way out of the stack came from, when koagent has not
 * attributed it yet (it would, as it leaves the stack): the failure then names that layer.
 */
export function runFailure(error: unknown, state: RunState, thrownBy?: string): RunFailedError {
  let origin = errorOrigin(error);
  if (origin === undefined && thrownBy !== undefined) {
    // Nothing shared is marked: a primitive is wrapped anew, an object keeps no attribution.
    if (typeof error !== 'object' || error === null) error = blame(error, thrownBy);
    origin = { kind: 'layer', name: thrownBy };
  }
  const layer = origin?.kind === 'layer' ? origin.name : undefined;
  if (KoagentError.is(error) && error.code !== 'hook_failed') {
    const blame = error.layer ?? layer;
    // A subclass (e.g. ProviderError: status, retryable) is itself the cause, not what it wraps.
    const cause = Object.getPrototypeOf(error) === KoagentError.prototype ? error.cause ?? error : error;
    return new RunFailedError(error.code, error.message, state, { cause, ...(blame !== undefined ? { layer: blame } : {}) });
  }
  if (layer !== undefined) {
    // A thrown primitive (even `undefined`) arrives wrapped, with the value itself as its cause.
    const cause = KoagentError.is(error) && error.layer === layer && 'cause' in error ? error.cause : error;
    return new RunFailedError('hook_failed', `${layer} failed: ${describe(error)}`, state, { cause, layer });
  }
  if (origin?.kind === 'provider') {
    return new RunFailedError('model_error', `The model provider ${origin.name} failed: ${describe(error)}`, state, { cause: error });
  }
  return new RunFailedError('internal', describe(error), state, { cause: error });
}

/**
 * What the run state keeps of a failure (`state.error`).
 *
 * @example state.error = failureRecord(runFailure(error, state));
 */
export function failureRecord(failure: KoagentError): { code: string; message: string; layer?: string } {
  return { code: failure.code, message: failure.message, ...(failure.layer !== undefined ? { layer: failure.layer } : {}) };
}
