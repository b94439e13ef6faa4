import type { ToolMessage } from '../vocabulary/messages.js';
import type { LedgerCall, LedgerEntry, RunState } from '../vocabulary/state.js';
import type { StatePart } from './state-observer.js';

/**
 * The run's tool calls, by call id, for the state writer: each call's ledger entry
 * (`state.ledger`) and the results settled and held until their turn ends (`state.settled`).
 * The state lists them; this finds them without a scan, and reports each change to a call.
 * The state writer owns one, and alone decides whether a write still happens (it is not closed).
 *
 * @example const ledger = new CallLedger(state, (part, key) => observer.changed(part, key)); ledger.enter('call_1', 'running');
 */
export class CallLedger {
  readonly #state: Pick<RunState, 'ledger' | 'settled'>;
  readonly #changed: (part: StatePart, key: string) => void;
  readonly #calls = new Map<string, LedgerCall>();
  readonly #held = new Map<string, ToolMessage>();
  /** The call found or listed last: a call is looked up at each of its steps, most turns have one. */
  #last: LedgerCall | undefined;

  constructor(state: Pick<RunState, 'ledger' | 'settled'>, changed: (part: StatePart, key: string) => void) {
    this.#state = state;
    this.#changed = changed;
    for (const call of state.ledger) this.#calls.set(call.id, call);
    for (const message of state.settled) this.#held.set(message.toolCallId, message);
  }

  /** Whether the ledger lists call `id`. */
  has(id: string): boolean {
    return this.#calls.has(id);
  }

  /** Call `id`'s ledger entry, or undefined when the run has no such call. */
  entryOf(id: string): LedgerEntry | undefined {
    return this.#find(id)?.entry;
  }

  #find(id: string): LedgerCall | undefined {
    const last = this.#last;
    if (last !== undefined && last.id === id) return last;
    const call = this.#calls.get(id);
    if (call !== undefined) this.#last = call;
    return call;
  }

  /** Set call `id`'s ledger entry, listing the call if it is new. */
  enter(id: string, entry: LedgerEntry): void {
    this.#changed('calls', id);
    const call = this.#find(id);
    if (call === undefined) this.#list(id, entry);
    else call.entry = entry;
  }

  /** List a call the ledger does not have yet. */
  #list(id: string, entry: LedgerEntry): void {
    const call = { id, entry };
    this.#state.ledger.push(call);
    this.#calls.set(id, call);
    this.#last = call;
  }

  /** The result of call `id`, settled and held until its turn ends, if any. */
  heldResult(id: string): ToolMessage | undefined {
    return this.#held.get(id);
  }

  /** Hold `message` as call `id`'s result until its turn ends: one a call, so settling it again replaces it in place. */
  hold(id: string, message: ToolMessage): void {
    const settled = this.#state.settled;
    const before = this.#held.get(id);
    if (before === undefined) settled.push(message);
    else settled[settled.indexOf(before)] = message;
    this.#held.set(id, message);
  }

  /** The held results are in the transcript now: none is held any more, and their ledger rows hold nothing. */
  clearHeld(): void {
    for (const message of this.#state.settled) this.#changed('calls', message.toolCallId);
    this.#state.settled = [];
    this.#held.clear();
  }
}
