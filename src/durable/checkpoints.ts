import type { StateObserver, StatePart } from '../core/state/state-observer.js';
import { describe, KoagentError, markOwnError } from '../core/vocabulary/errors.js';
import type { Checkpoint } from '../stores/run-store.js';
import type { StateJournal } from './journal.js';

/**
 * Where a durable segment's checkpoints go: a run store, holding the run's lease. Each
 * `write` is one transaction; it rejects when the store failed or the lease is lost (another
 * worker claimed the run), and then nothing of that checkpoint was written.
 *
 * @example const sink: CheckpointSink = { write: (checkpoint, final) => store.checkpoint(lease, checkpoint, final) };
 */
export interface CheckpointSink {
  /** Write one checkpoint; `final` when the segment is over (the lease is given back). */
  write(checkpoint: Checkpoint, final: boolean): Promise<void>;
}

const DONE = Promise.resolve();

/**
 * The checkpoints of one durable segment, written one at a time and in order: the observer of
 * the segment's state writer. Each change goes to the journal; each step end (before a tool
 * executes, for the ledger's write-ahead `running`, and after each call settles or waits)
 * flushes; `finish()` writes the segment's end.
 *
 * A flush asked for while a write is under way waits for it, then writes everything that
 * changed meanwhile in one transaction (callers waiting together share it). After a failed
 * write, every later flush fails with the same error: a checkpoint is a difference from the
 * one before, so none may be written after one that was lost. The run then stays in the store
 * as of its last good checkpoint, which is what recovery continues from.
 */
export class Checkpoints implements StateObserver {
  #writing: Promise<void> | undefined;
  #next: Promise<void> | undefined;
  #failure: unknown;
  #finished = false;

  constructor(private readonly journal: StateJournal, private readonly sink: CheckpointSink) {}

  changed(part: StatePart, key?: string | number): void {
    this.journal.changed(part, key);
  }

  stepEnds(): Promise<void> {
    return this.flush();
  }

  /** Store what changed so far; resolves once it is stored. */
  flush(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#finished) return Promise.reject(markOwnError(new KoagentError('store_error', 'koagent: this run segment is over; nothing of it may be stored any more')));
    if (this.#next !== undefined) return this.#next;
    if (this.#writing !== undefined) {
      // Cleared either way: a queued flush that stayed set after a failed write would keep
      // finish() waiting on it for ever.
      const next = this.#writing.then(
        () => {
          this.#next = undefined;
          return this.#write(false);
        },
        (error: unknown) => {
          this.#next = undefined;
          throw error;
        },
      );
      this.#next = next;
      return next;
    }
    return this.#write(false);
  }

  /** The segment is over: store its end (after any write under way) and give the lease back. */
  async finish(): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure;
    if (this.#finished) return;
    while (this.#writing !== undefined || this.#next !== undefined) await (this.#next ?? this.#writing)!.catch(() => undefined);
    if (this.#failure !== undefined) throw this.#failure;
    this.#finished = true;
    await this.#write(true);
  }

  /** A write failed, or the lease was lost: no checkpoint of this segment is stored after now. */
  get failure(): unknown {
    return this.#failure;
  }

  /** Stop writing: a renewal found the lease lost. */
  poison(error: unknown): void {
    this.#failure ??= error;
  }

  #write(final: boolean): Promise<void> {
    const checkpoint = this.journal.take(final);
    if (checkpoint === undefined) return DONE;
    let written: Promise<void>;
    try {
      written = this.sink.write(checkpoint, final);
    } catch (error) {
      written = Promise.reject(error);
    }
    const writing = written.then(
      () => {
        if (this.#writing === writing) this.#writing = undefined;
      },
      (error: unknown) => {
        if (this.#writing === writing) this.#writing = undefined;
        this.#failure ??= storeFailure(error);
        throw this.#failure;
      },
    );
    this.#writing = writing;
    return writing;
  }
}

/** What a store's failure becomes: a koagent error (its own code kept), raised by koagent itself. */
export function storeFailure(error: unknown): unknown {
  const failure = KoagentError.is(error)
    ? error
    : new KoagentError('store_error', `The run store failed: ${describe(error)}; the run stays as of its last checkpoint`, { cause: error });
  return markOwnError(failure);
}
