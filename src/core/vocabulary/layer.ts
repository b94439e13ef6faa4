// The shape of one layer of a stack: what every hook point's layers, koagent's own steps included, are.

/** `next()` for a layer: runs everything inside it and resolves to the inner outcome. */
export type Next<T> = () => Promise<T>;

/** A function of one hook point: code before `await next()` is "before", code after is "after". */
export type LayerFn<C, T> = (ctx: C, next: Next<T>) => Promise<T> | T;

/**
 * Checks what a layer returned: returns it (or a stamped copy, e.g. who settled a tool call),
 * or throws to refuse it. `nextCalled` is false when the layer settled the call itself.
 */
export type ReturnCheck<C, T> = (ctx: C, out: T, layer: string, nextCalled: boolean) => T;

/**
 * One layer of a stack — a user's middleware, a dialect's hooks or one of koagent's own steps:
 * every layer is this, and is wrapped the same way when its stack is composed.
 *
 * @example const timer: Layer<ToolContext, ToolOutcome> = { name: 'timer', fn: async (ctx, next) => next() };
 */
export interface Layer<C, T> {
  /** Who is blamed for what the layer throws or returns wrongly. */
  readonly name: string;
  readonly fn: LayerFn<C, T>;
  /** What `this` is when `fn` runs (the middleware object the function came from). */
  readonly self?: unknown;
  /** The check of what it returns (a user's layer gets its hook point's; koagent's steps none). */
  readonly check?: ReturnCheck<C, T>;
}
