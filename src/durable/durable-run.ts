// A run held by this worker in a store: its lease, kept alive while a segment runs, and the
// checkpoints of the segment's state. The core sees only a StateObserver; the store sees only
// checkpoints and leases.
import type { StateObserver } from '../core/state/state-observer.js';
import type { Logger } from '../core/vocabulary/contexts.js';
import { describe, KoagentError } from '../core/vocabulary/errors.js';
import type { EventListener } from '../core/vocabulary/events.js';
import type { RunState } from '../core/vocabulary/state.js';
import { hasEventLog, type Checkpoint, type Lease, type RunStore } from '../stores/run-store.js';
import { checkedClock, systemClock } from '../stores/clock.js';
import { Checkpoints, storeFailure, type CheckpointSink } from './checkpoints.js';
import { EventLogWriter, type SegmentEnd } from './event-log.js';
import { StateJournal } from './journal.js';

/**
 * One run held by this worker in a store: where its segment's checkpoints go, and the lease
 * that lets them be written. While the segment runs, the lease is renewed every third of its
 * duration; if a renewal finds it lost, the segment is cancelled and writes nothing more.
 *
 * @example const observer = durable.observe(state); const segment = new Segment(core, state, { ...options, observer }); durable.watch((why) => segment.abort(why));
 */
export class DurableRun implements CheckpointSink {
  /** Cancels the next renewal, while the segment runs. */
  #cancel: (() => void) | undefined;
  #checkpoints: Checkpoints | undefined;
  /** The segment's event log, when it keeps one (`openLog`). */
  #log: EventLogWriter | undefined;
  /** The writes of this run, one after another: a checkpoint never overtakes an append of earlier events. */
  #writes: Promise<unknown> = Promise.resolve();

  constructor(readonly store: RunStore, readonly lease: Lease, readonly logger: Logger) {}

  write(checkpoint: Checkpoint, final: boolean): Promise<void> {
    // The events so far go with the checkpoint, in its transaction: the log agrees with the state it stores.
    if (this.#log !== undefined) checkpoint.events = this.#log.take();
    return this.#serially(() => this.store.checkpoint(this.lease, checkpoint, final));
  }

  #serially<T>(write: () => Promise<T>): Promise<T> {
    const written = this.#writes.then(write);
    this.#writes = written.catch(() => undefined);
    return written;
  }

  /**
   * Log this segment's events in the run's log: the listener to give the segment. A segment
   * that `continues` the run (a resume, a retry, a recovery) first takes back what the log
   * shows past the run's last checkpoint (see `EventLogWriter.retract`).
   */
  async openLog(continues: boolean): Promise<EventListener> {
    const { store } = this;
    if (!hasEventLog(store)) throw new TypeError(`koagent: the run store (${store.kind}) keeps no event log`);
    const log = new EventLogWriter(() => this.#append());
    if (continues) log.retract(await storeCall(() => store.eventTail(this.lease.runId), `reading the event log of run ${this.lease.runId}`));
    this.#log = log;
    return log.listener;
  }

  /** Whether the run's event log has any event: a segment that continues it logs by default. */
  async hasLog(): Promise<boolean> {
    const { store } = this;
    if (!hasEventLog(store)) return false;
    const { runId } = this.lease;
    return (await storeCall(() => store.readEvents(runId, { limit: 1 }), `reading the event log of run ${runId}`)).last > 0;
  }

  /** Append the events waiting, between checkpoints; a failure fails the segment at its next step end, as a lost checkpoint does. */
  #append(): void {
    const log = this.#log;
    const { store } = this;
    if (log === undefined || !hasEventLog(store)) return;
    const events = log.take();
    if (events.length === 0) return;
    if (this.#checkpoints?.failure !== undefined) return log.close();
    this.#serially(() => store.appendEvents(this.lease, events)).catch((error: unknown) => {
      log.close();
      this.#checkpoints?.poison(storeFailure(error));
    });
  }

  /** The observer of a segment's state writer: `state`, as the store holds it now, is checkpointed from here on. */
  observe(state: RunState): StateObserver {
    return (this.#checkpoints = new Checkpoints(new StateJournal(state), this));
  }

  /** The segment has started: keep the lease alive until `stop()`; `abort` the segment if it is lost. */
  watch(abort: (reason: unknown) => void): void {
    const { store, lease } = this;
    const clock = checkedClock(store.clock ?? systemClock, `the clock of the ${store.kind} store`);
    const every = Math.max(5, Math.floor(store.leaseMs / 3));
    let renewing = false;
    const renew = () => {
      // On the store's clock, the next renewal is set first: a renewal that hangs does not stop the others.
      this.#cancel = clock.setTimer(every, renew, { background: true });
      if (renewing) return;
      renewing = true;
      store.renew(lease).then(
        (held) => {
          if (held) return;
          const lost = new KoagentError('lease_lost', `run ${lease.runId}: its lease was lost while the segment ran (another worker claimed the run after this one could not renew it in time); this worker stops the run and writes nothing more`);
          this.#checkpoints?.poison(lost);
          abort(lost);
        },
        // A store that does not answer for a moment: the next renewal tries again, and a
        // checkpoint that cannot be written fails the segment by itself.
        (error: unknown) => this.logger.warn(`koagent: renewing the lease of run ${lease.runId} failed (${describe(error)}); trying again`, error),
      ).finally(() => (renewing = false));
    };
    // A lease being renewed must not keep the process alive by itself (a background timer).
    this.#cancel = clock.setTimer(every, renew, { background: true });
  }

  /**
   * The segment is over: store its end (after any write under way) and give the lease back.
   * With `end`, a segment that logs its events logs its `run.end` last, in that same
   * transaction: a reader that sees it knows the end is stored.
   */
  finish(end?: SegmentEnd): Promise<void> {
    if (this.#checkpoints === undefined) return Promise.reject(new Error('koagent: DurableRun.finish() before observe(): no segment of this run was checkpointed'));
    if (end !== undefined) this.#log?.end(end, this.lease.runId);
    return this.#checkpoints.finish();
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#log?.close();
  }
}

/** A store call whose failure is a `store_error` that says what was being done. */
export async function storeCall<T>(call: () => Promise<T>, what: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (KoagentError.is(error)) throw error;
    throw new KoagentError('store_error', `The run store failed while ${what}: ${describe(error)}`, { cause: error });
  }
}
