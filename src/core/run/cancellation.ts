/** Call `abort` with `outer`'s reason when `outer` aborts; returns the function that stops listening. */
export function linkSignal(outer: AbortSignal | undefined, abort: (reason: unknown) => void): () => void {
  if (outer === undefined) return () => undefined;
  if (outer.aborted) {
    abort(outer.reason);
    return () => undefined;
  }
  const onAbort = () => abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  return () => outer.removeEventListener('abort', onAbort);
}

/**
 * A segment's cancellation: its own signal, aborted when the caller's aborts, when the segment
 * fails, or when a run store takes the run away — the one place the flag and the signal change.
 *
 * @example const cancel = new Cancellation(options.signal); cancel.abort(new Error('stop')); cancel.aborted // true
 */
export class Cancellation {
  readonly #controller = new AbortController();
  /** Read on every step: a field, not the signal (cheaper to ask); set only by `abort`. */
  readonly aborted: boolean = false;
  readonly #unlink: () => void;

  constructor(outer: AbortSignal | undefined) {
    this.#unlink = linkSignal(outer, (reason) => this.abort(reason));
  }

  /** What providers, tools and layers are given: aborts with the segment. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    (this as { aborted: boolean }).aborted = true;
    this.#controller.abort(reason);
  }

  /** The segment is over: stop listening to the caller's signal. */
  dispose(): void {
    this.#unlink();
  }
}
