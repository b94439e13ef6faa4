// Followers of run event logs waiting in this process (`waitForEvents`): woken when this process
// appends to the run's log, when another process does (PostgreSQL: a NOTIFY; SQLite: found by
// polling the run's row), or when they time out.

/** One wait: `done` resolves when it is woken, times out or is cancelled. */
export interface Waiting {
  done: Promise<void>;
  cancel(): void;
}

/**
 * The waiters of one store, by run.
 *
 * @example const waiting = waiters.wait(runId, 1000); await waiting.done; // another part calls waiters.wake(runId)
 */
export class EventWaiters {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** Wait until `runId` is woken, `ms` pass, or `signal` aborts (at once if it has). */
  wait(runId: string, ms: number, signal?: AbortSignal): Waiting {
    let cancel = () => undefined as void;
    const done = new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        const set = this.#waiting.get(runId);
        set?.delete(finish);
        if (set?.size === 0) this.#waiting.delete(runId);
        resolve();
      };
      const timer = setTimeout(finish, Math.max(0, ms));
      cancel = finish;
      if (signal?.aborted === true) return finish();
      signal?.addEventListener('abort', finish, { once: true });
      let set = this.#waiting.get(runId);
      if (set === undefined) this.#waiting.set(runId, (set = new Set()));
      set.add(finish);
    });
    return { done, cancel: () => cancel() };
  }

  /** Wake every wait on `runId`. */
  wake(runId: string): void {
    const set = this.#waiting.get(runId);
    if (set === undefined) return;
    for (const finish of [...set]) finish();
  }

  /** Wake every wait (the store closes). */
  wakeAll(): void {
    for (const runId of [...this.#waiting.keys()]) this.wake(runId);
  }
}

/**
 * The body of every store's `waitForEvents`: resolve once `arrived()` (the run has an event after
 * the follower's offset, or is gone) holds, `timeoutMs` passed or `signal` aborted. Between
 * looks it waits on `waiters`, at most `pollMs` (a store that no notice reaches from other
 * processes looks again that often). The wait starts before each look, so a wake-up between
 * the look and the wait is not missed.
 */
export async function waitForArrival(waiters: EventWaiters, runId: string, arrived: () => Promise<boolean>, options: { signal: AbortSignal | undefined; timeoutMs: number; pollMs: number }): Promise<void> {
  const { signal, timeoutMs, pollMs } = options;
  const deadline = Date.now() + timeoutMs;
  const aborted = () => signal?.aborted === true;
  for (;;) {
    const left = deadline - Date.now();
    const waiting = waiters.wait(runId, Math.min(pollMs, Math.max(0, left)), signal);
    try {
      if ((await arrived()) || aborted() || left <= 0) return;
      await waiting.done;
    } finally {
      waiting.cancel();
    }
    if (aborted()) return;
  }
}
