// The time leases, expiries and retention go by, and the timers set on it (lease renewals,
// recovery's waits). The system clock by default; a test gives a clock it moves by hand, so a
// lease expires when the test says so rather than after a real wait.
import { z } from 'zod';

/**
 * A clock: milliseconds since the epoch, and timers on that time. A store takes one
 * (`clock` option) for its leases, its key-value expiries and its retention; the agent's
 * durable runs take their store's, for lease renewals and `recover({ wait: true })`; a worker
 * takes one for its holds and slots. The default is `systemClock`. A test gives a clock of its
 * own and moves it: leases expire, and timers fall due, when the test says so.
 *
 * @example const store = memoryStore({ clock: { ...systemClock, now: () => Date.now() + 60_000 } }); // a minute ahead
 */
export interface Clock {
  /** Milliseconds since the epoch: a finite number (a fraction is rounded down). */
  now(): number;
  /**
   * Call `callback` once `ms` milliseconds have passed by this clock; the function returned
   * cancels the call. `background`: the timer alone does not keep the process alive (a lease
   * renewal does not; a wait someone awaits does).
   */
  setTimer(ms: number, callback: () => void, options?: { background?: boolean }): () => void;
}

/**
 * The real clock: `Date.now()` and Node's timers. What every store, durable run and worker
 * uses unless given another.
 *
 * @example const store = memoryStore({ clock: systemClock });
 */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer(ms: number, callback: () => void, options?: { background?: boolean }): () => void {
    const timer = setTimeout(callback, ms);
    if (options?.background === true) timer.unref?.();
    return () => clearTimeout(timer);
  },
});

const CLOCK_SHAPE = 'an object { now(): number, setTimer(ms, callback, options?) } (systemClock, or one of your own)';

/** What `value` lacks to be a clock, or undefined when it is one. */
function clockProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return '';
  const missing = (['now', 'setTimer'] as const).filter((name) => typeof (value as Clock)[name] !== 'function');
  return missing.length === 0 ? undefined : ` (it has no ${missing.join(' and no ')} method)`;
}

/** The schema of a `clock` option: an object with the two methods. */
export const clockSchema = z.custom<Clock>((value) => clockProblem(value) === undefined, {
  error: (issue) => `must be ${CLOCK_SHAPE}${clockProblem(issue.input) ?? ''}`,
});

/**
 * `clock` as the code that uses it reads it: each reading checked, so a clock that answers
 * something other than a finite number fails at once, naming `where`, instead of writing a
 * lease that never expires (NaN) or always has. The system clock is used as it is.
 */
export function checkedClock(clock: Clock, where: string): Clock {
  if (clock === systemClock) return clock;
  return {
    now() {
      const now = clock.now();
      if (typeof now !== 'number' || !Number.isFinite(now)) throw new TypeError(`${where}: clock.now() must return milliseconds since the epoch, a finite number (got ${describeValue(now)})`);
      return Math.floor(now);
    },
    setTimer(ms, callback, options) {
      const cancel = clock.setTimer(ms, callback, options);
      if (typeof cancel !== 'function') throw new TypeError(`${where}: clock.setTimer() must return a function that cancels the timer (got ${describeValue(cancel)})`);
      return cancel;
    },
  };
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : String(value);
}
