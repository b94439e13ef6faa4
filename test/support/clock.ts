// A clock the test moves by hand, for the stores, the durable runs and the worker (their `clock`
// option): leases expire, and lease renewals and recovery's waits fall due, when the test says
// so, not after a real wait.
import { systemClock, type Clock } from '../../src/store.js';
import { nextTurn } from './waits.js';

/** A clock of `manualClock()`: a `Clock`, and the hands that move it. */
export interface ManualClock extends Clock {
  /**
   * Move the time on by `ms`, running each timer that falls due on the way, in order, at its own
   * time, each followed by a turn of the event loop (what it started settles before the next one runs).
   */
  advance(ms: number): Promise<void>;
  /**
   * Move the time on by `ms` without running the timers that fall due meanwhile, as a process whose
   * event loop stalled would miss them: they run at the next `advance` (`advance(0)` runs them alone).
   */
  jump(ms: number): void;
  /** How many timers are set and not yet run or cancelled. */
  readonly timers: number;
  /** Resolves with the length of the next timer set from now on: someone began a wait on the clock. */
  nextTimer(): Promise<number>;
}

/**
 * A clock that stands still until the test moves it. It starts at a fixed time (a date in 2027),
 * so nothing can pass for a reading of the real clock.
 *
 * @example const clock = manualClock(); const store = memoryStore({ leaseMs: 1000, clock }); …; await clock.advance(1001);
 */
export function manualClock(start = 1_800_000_000_000): ManualClock {
  let time = start;
  let made = 0;
  const timers = new Map<number, { due: number; callback: () => void }>();
  let told: ((ms: number) => void)[] = [];
  const due = (until: number) => {
    let next: [number, { due: number; callback: () => void }] | undefined;
    for (const entry of timers) if (entry[1].due <= until && (next === undefined || entry[1].due < next[1].due)) next = entry;
    return next;
  };
  return {
    now: () => time,
    setTimer(ms, callback) {
      if (!(ms >= 0)) throw new TypeError(`manualClock: setTimer(ms) needs a number of milliseconds ≥ 0, not ${String(ms)}`);
      // Ids grow, and the Map keeps them in that order: timers due at one time run in the order they were set.
      const id = ++made;
      timers.set(id, { due: time + ms, callback });
      const waiting = told;
      told = [];
      for (const tell of waiting) tell(ms);
      return () => void timers.delete(id);
    },
    async advance(ms) {
      const end = time + ms;
      for (let next = due(end); next !== undefined; next = due(end)) {
        const [id, timer] = next;
        timers.delete(id);
        time = Math.max(time, timer.due);
        timer.callback();
        await nextTurn();
      }
      time = end;
      await nextTurn();
    },
    jump(ms) {
      time += ms;
    },
    get timers() {
      return timers.size;
    },
    nextTimer() {
      return new Promise((resolve) => told.push(resolve));
    },
  };
}

/**
 * The real clock, `ms` ahead of it (behind, for a negative `ms`), its timers the system's: for a
 * store shared with a process that goes by the real clock, when the test needs the two to
 * disagree (a lease already out by one of them) rather than to wait for time to pass.
 *
 * @example const recovering = sqliteStore({ path, clock: offsetClock(60_000) }); // the dead worker's lease is out by it
 */
export function offsetClock(ms: number): Clock {
  return { ...systemClock, now: () => Date.now() + ms };
}
