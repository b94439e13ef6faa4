import type { StatePart } from '../core/state/state-observer.js';
import { ownValue } from '../core/vocabulary/json.js';
import type { Message } from '../core/vocabulary/messages.js';
import type { LedgerCall, RunState } from '../core/vocabulary/state.js';
import type { Checkpoint, CheckpointCall } from '../stores/run-store.js';

/**
 * What changed in a run's state since the store last got it, as the state writer reports it
 * (`changed`), so `take()` can write only that, without comparing the whole state.
 *
 * The transcript is followed from the lowest position a write changed; layers and hooks change
 * it through the writer too (`ctx.messages` is its view). The plain array itself reaches code
 * only as a result (`result.messages` of a run layer's `next()`): a change made there is found
 * by the length, or by the last stored message no longer being in its place, and then the
 * whole transcript is written again.
 *
 * @example const journal = new StateJournal(state); writer = new StateWriter(state, observerOf(journal)); store(journal.take());
 */
export class StateJournal {
  /** How many messages the store holds, and the last of them. */
  #stored: number;
  #tail: Message | undefined;
  /** The lowest transcript position a write changed below the stored count. */
  #rewriteFrom = Infinity;
  #dirty = false;
  readonly #parts = new Set<StatePart>();
  readonly #calls = new Set<string>();
  readonly #hooks = new Set<string>();
  /** The ledger's calls by id, as far as `#indexed` of the ledger (which only grows). */
  readonly #ledger = new Map<string, LedgerCall>();
  #indexed = 0;

  /** `state` as the store holds it now: nothing is new yet. */
  constructor(private readonly state: RunState) {
    this.#stored = state.messages.length;
    this.#tail = state.messages[this.#stored - 1];
  }

  /** A write touched `part` (see `StateObserver.changed`). */
  changed(part: StatePart, key?: string | number): void {
    this.#dirty = true;
    if (part === 'messages') {
      if (typeof key === 'number' && key < this.#rewriteFrom) this.#rewriteFrom = key;
    } else if (part === 'calls') this.#calls.add(key as string);
    else if (part === 'hookState') this.#hooks.add(key as string);
    else this.#parts.add(part);
  }

  /**
   * What changed since the last `take()`, as the next checkpoint; undefined when nothing did
   * (unless `always`: then at least the run's small fields). From now on the store is taken
   * to hold it.
   */
  take(always = false): Checkpoint | undefined {
    const { state } = this;
    const messages = state.messages;
    const stored = this.#stored;
    let from = Math.min(this.#rewriteFrom, stored);
    // Changed without the writer below what is stored: write the transcript again.
    if (from === stored && stored > 0 && (messages.length < stored || messages[stored - 1] !== this.#tail)) from = 0;
    const transcript = from < stored || messages.length !== stored;
    if (!always && !this.#dirty && !transcript) return undefined;
    const checkpoint: Checkpoint = {
      status: state.status,
      segment: state.segment,
      steps: state.steps,
      usage: JSON.stringify(state.usage),
      stopReason: state.stopReason,
      error: state.error === undefined ? null : JSON.stringify(state.error),
    };
    if (transcript) checkpoint.messages = { from, items: messages.slice(from).map((message) => JSON.stringify(message)) };
    const parts = this.#parts;
    if (parts.has('output')) checkpoint.output = state.output === undefined ? null : JSON.stringify(state.output);
    if (parts.has('approvals')) checkpoint.pendingApprovals = JSON.stringify(state.pendingApprovals);
    if (parts.has('decisions')) checkpoint.decisions = JSON.stringify(state.decisions);
    if (parts.has('nested')) checkpoint.children = JSON.stringify(state.children);
    if (this.#calls.size > 0) checkpoint.calls = this.#takeCalls();
    if (this.#hooks.size > 0) {
      checkpoint.hookState = [...this.#hooks].map((name) => ({ name, value: JSON.stringify(ownValue(state.hookState, name) ?? null) }));
      this.#hooks.clear();
    }
    this.#stored = messages.length;
    this.#tail = messages[messages.length - 1];
    this.#rewriteFrom = Infinity;
    this.#dirty = false;
    parts.clear();
    return checkpoint;
  }

  /** The ledger rows of the calls that changed: entry, and the result held for the turn. */
  #takeCalls(): CheckpointCall[] {
    const { ledger, settled } = this.state;
    for (; this.#indexed < ledger.length; this.#indexed++) this.#ledger.set(ledger[this.#indexed].id, ledger[this.#indexed]);
    const calls: CheckpointCall[] = [];
    for (const id of this.#calls) {
      const call = this.#ledger.get(id);
      if (call === undefined) continue;
      const held = settled.find((message) => message.toolCallId === id);
      calls.push({ id, entry: call.entry, held: held === undefined ? null : JSON.stringify(held) });
    }
    this.#calls.clear();
    return calls;
  }
}
