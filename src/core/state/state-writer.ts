import { messageProblem, type AssistantMessage, type AssistantToolCall, type Message, type ToolMessage } from '../vocabulary/messages.js';
import type { TokenUsage } from '../vocabulary/model.js';
import { errorContent, type NestedRun } from '../vocabulary/outcome.js';
import type { ApprovalDecision, LedgerCall, LedgerEntry, NestedRunRecord, PendingApproval, RunState, RunStatus, StopReason, Usage } from '../vocabulary/state.js';
import type { StateObserver, StatePart } from './state-observer.js';
import { ownedCopy, unwrap, type TranscriptWrites } from './transcript-view.js';

/**
 * The one writer of a run's state: every change a segment makes to it goes through here — the
 * transcript, the reply of a model call, the ledger, held results, pending approvals and
 * decisions, nested runs, hook state, usage and status. One place to read what can change.
 *
 * An observer, when given, is told what each write touched and when a step ends (see
 * `StateObserver`); the methods that end a step return the observer's promise, which the
 * run awaits before it goes on (undefined without an observer: nothing to wait for).
 *
 * Once the segment is over (it failed while some orphaned `next()` still ran), `close()` makes
 * every later write a no-op: nothing that outlives a segment may change its state.
 *
 * @example const writer = new StateWriter(state); writer.beginSegment(); writer.append({ role: 'user', content: 'Hi' });
 */
export class StateWriter implements TranscriptWrites {
  #closed = false;
  // Whether the state may hold a human decision or a nested run. Most runs hold neither, and
  // looking a new call id up in an empty object still walks its prototype chain; every change
  // to them is made here, so these are never false wrongly.
  #anyDecision: boolean;
  #anyNested: boolean;
  /** The ledger's calls and the held results, by call id: the state lists them, this finds them. */
  readonly #calls = new Map<string, LedgerCall>();
  readonly #held = new Map<string, ToolMessage>();
  /** The call found or listed last: a call is looked up at each of its steps, most turns have one. */
  #last: LedgerCall | undefined;

  readonly #observer: StateObserver | undefined;

  constructor(readonly state: RunState, observer?: StateObserver) {
    this.#observer = observer;
    this.#anyDecision = Object.keys(state.decisions).length > 0;
    this.#anyNested = Object.keys(state.children).length > 0;
    for (const call of state.ledger) this.#calls.set(call.id, call);
    for (const message of state.settled) this.#held.set(message.toolCallId, message);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** No more writes: the segment is over. */
  close(): void {
    this.#closed = true;
  }

  #changed(part: StatePart, key?: string | number): void {
    this.#observer?.changed(part, key);
  }

  /** A step ends: the observer's promise to await, or undefined when there is none. */
  #stepEnds(): Promise<void> | undefined {
    return this.#observer?.stepEnds();
  }

  // --- segments and status ---------------------------------------------------------------

  /** A segment starts: count it, mark the run running, forget the last segment's error and stop reason. */
  beginSegment(): number {
    const { state } = this;
    state.segment++;
    state.status = 'running';
    delete state.error;
    // A running run has not stopped: a summary must never show `running` beside the last segment's reason.
    delete state.stopReason;
    this.#changed('run');
    return state.segment;
  }

  /** The segment ended without failing: how, and with what output (written once, when the segment closes). */
  end(status: Exclude<RunStatus, 'running' | 'failed'>, stopReason: StopReason, output: unknown): void {
    if (this.#closed) return;
    const { state } = this;
    state.status = status;
    state.stopReason = stopReason;
    state.output = output;
    this.#changed('run');
    this.#changed('output');
  }

  /** The segment failed; the state says with which error, and nothing writes to it after. */
  fail(error: { code: string; message: string; layer?: string }): void {
    if (this.#closed) return;
    this.state.status = 'failed';
    this.state.error = error;
    this.#changed('run');
    this.#closed = true;
  }

  // --- the transcript --------------------------------------------------------------------

  append(message: Message): void {
    if (this.#closed) return;
    this.#changed('messages', this.state.messages.length);
    this.state.messages.push(keptMessage(message));
  }

  // The writes of the transcript's view (`ctx.messages`): each array change a layer makes
  // (an assignment, a push, a splice) arrives as these, and each one is checked.

  /** Put `message` at `index` (at most the end: the transcript has no gaps). */
  putMessage(index: number, message: unknown): void {
    if (this.#closed) return;
    const messages = this.state.messages;
    if (index > messages.length) throw new TypeError(`ctx.messages[${index}] cannot be set: the transcript has ${messages.length} messages and no gaps; push a message to add it at the end`);
    const plain = keptMessage(message);
    const problem = messageProblem(plain, `ctx.messages[${index}]`);
    if (problem !== undefined) throw new TypeError(problem);
    this.#changed('messages', index);
    messages[index] = plain as Message;
  }

  /** Take the last message off (how `pop`, `shift` and `splice` shorten an array); any other would leave a gap. */
  deleteMessage(index: number): void {
    if (this.#closed) return;
    const messages = this.state.messages;
    if (index >= messages.length) return;
    if (index !== messages.length - 1) throw new TypeError(`ctx.messages[${index}] cannot be deleted: the transcript has no gaps; remove messages with splice, or replace the transcript with ctx.setMessages`);
    this.#changed('messages', index);
    messages.length = index;
  }

  /** Shorten the transcript to `length` messages (it cannot grow this way: no gaps). */
  truncate(length: number): void {
    if (this.#closed) return;
    const messages = this.state.messages;
    if (!Number.isInteger(length) || length < 0 || length > messages.length) {
      if (length === messages.length) return;
      throw new TypeError(`ctx.messages.length = ${String(length)}: the transcript can be shortened (to 0..${messages.length}), not grown; push messages to add them`);
    }
    if (length === messages.length) return;
    this.#changed('messages', length);
    messages.length = length;
  }

  /**
   * A change inside a stored message (`apply` sets `target[key]`), as a layer made it in place:
   * kept only if the message is still one, else undone and refused.
   */
  editMessage(message: Message, target: object, key: string | symbol, apply: () => boolean): boolean {
    if (this.#closed) return true;
    const at = this.state.messages.lastIndexOf(message);
    const before = Reflect.getOwnPropertyDescriptor(target, key);
    // Setting an index past an array's end (a push) grows its length too: the undo shrinks it back.
    const length = Array.isArray(target) ? target.length : undefined;
    if (!apply()) return false;
    if (at === -1) return true;
    const problem = messageProblem(message, `ctx.messages[${at}]`);
    if (problem !== undefined) {
      if (before === undefined) Reflect.deleteProperty(target, key);
      else Reflect.defineProperty(target, key, before);
      if (length !== undefined) (target as unknown[]).length = length;
      throw new TypeError(`${problem} (the change was undone)`);
    }
    this.#changed('messages', at);
    return true;
  }

  /** Replace the transcript's contents in place: everyone holding the array sees the new ones. */
  setMessages(messages: readonly Message[]): void {
    const live = this.state.messages;
    if (this.#closed || unwrap(messages) === live) return;
    // Copied first: `messages` may read through to the live array (a view of it).
    const next = messages.map(keptMessage);
    live.length = 0;
    // A loop, not push(...next): spreading a long transcript into arguments can overflow the stack.
    for (const message of next) live.push(message);
    this.#changed('messages', 0);
  }

  /** A model turn starts: the step count the run's `maxSteps` compares with. */
  nextStep(): number {
    this.#changed('run');
    return ++this.state.steps;
  }

  /**
   * Put `message` where the call's reply `previous` is (usually last), or at the end if it has
   * none. Returns the message, which is now the call's reply. `message` is plain data: a
   * provider's reply, or one a layer gave, unwrapped where it was given (`ctx.setReply`).
   */
  placeReply(previous: AssistantMessage | undefined, message: AssistantMessage): AssistantMessage {
    if (this.#closed) return message;
    const messages = this.state.messages;
    if (previous === message && messages[messages.length - 1] === message) return message;
    const at = previous === undefined ? -1 : messages.lastIndexOf(previous);
    this.#changed('messages', at === -1 ? messages.length : at);
    if (at === -1) messages.push(message);
    else messages[at] = message;
    return message;
  }

  /** Take a call's reply out of the transcript (the call failed, or is being retried). */
  withdrawReply(previous: AssistantMessage | undefined): void {
    if (this.#closed || previous === undefined) return;
    const messages = this.state.messages;
    const at = messages.lastIndexOf(previous);
    if (at === -1) return;
    this.#changed('messages', at);
    messages.splice(at, 1);
  }

  /**
   * The reply a model call ends with, as the transcript keeps it: its tool calls given ids
   * unique in the run (some servers repeat `call_0` each turn) and arguments as `bound` makes
   * them (within the run's bounds), and entered in the ledger as `pending` — the ids key the
   * ledger and the idempotency keys, so they must not collide. `message` itself is not
   * changed: where a call needs another id or other arguments, the kept reply is a new object.
   * Returns the kept reply.
   */
  keepReply(previous: AssistantMessage | undefined, given: AssistantMessage, bound: (args: unknown) => unknown = (args) => args): AssistantMessage {
    if (this.#closed) return given;
    // The reply already placed is plain; one a layer put in its place may hold views.
    const message = given === previous ? given : keptMessage(given);
    const calls = message.toolCalls;
    let kept = message;
    if (calls !== undefined) {
      const { steps } = this.state;
      let changed: AssistantToolCall[] | undefined;
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i];
        const own = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
        const id = own !== undefined && !this.#calls.has(own) ? own : `call_${steps}_${i}${own === undefined ? '' : `_${own}`}`;
        this.#enter(id, 'pending');
        const args = bound(call.args);
        if (id !== call.id || args !== call.args) (changed ??= calls.slice())[i] = { ...call, id, args: args as AssistantToolCall['args'] };
      }
      if (changed !== undefined) kept = { ...message, toolCalls: changed };
    }
    return this.placeReply(previous, kept);
  }

  // --- tool calls and the ledger ---------------------------------------------------------

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
  #enter(id: string, entry: LedgerEntry): void {
    this.#changed('calls', id);
    const call = this.#find(id);
    if (call === undefined) this.#list(id, entry);
    else call.entry = entry;
  }

  /** List a call the ledger does not have yet. */
  #list(id: string, entry: LedgerEntry): void {
    const call = { id, entry };
    this.#changed('calls', id);
    this.state.ledger.push(call);
    this.#calls.set(id, call);
    this.#last = call;
  }

  /** The human decision on call `id` a resume brought, if any. */
  decisionOn(id: string): RunState['decisions'][string] | undefined {
    return this.#anyDecision ? this.state.decisions[id] : undefined;
  }

  /** The nested run (a sub-agent's) kept behind call `id`, if any. */
  nestedRun(id: string): NestedRunRecord | undefined {
    return this.#anyNested ? this.state.children[id] : undefined;
  }

  /** The result of call `id`, settled and held until its turn ends, if any. */
  heldResult(id: string): ToolMessage | undefined {
    return this.#held.get(id);
  }

  /**
   * The tool's `execute` is about to be entered: from now on the call never runs again by
   * itself. A step ends here — the tool is entered once the observer kept this (write-ahead).
   */
  callRunning(id: string): Promise<void> | undefined {
    if (this.#closed) return undefined;
    this.#enter(id, 'running');
    return this.#stepEnds();
  }

  /**
   * A call found `running` (interrupted) whose tool asks a human before it runs again: it is
   * `pending` once more, and a decision given before the interruption no longer counts.
   */
  reopenCall(id: string): void {
    if (this.#closed) return;
    this.#enter(id, 'pending');
    this.#useDecision(id);
  }

  /** The human decision on call `id`, if any, is used up. */
  #useDecision(id: string): void {
    if (this.decisionOn(id) === undefined) return;
    delete this.state.decisions[id];
    this.#changed('decisions');
  }

  /**
   * A call settled with `message` as what the model reads: `done` in the ledger, counted, its
   * human decision (if any) used up, and its result held until the turn ends — or, for the
   * turn's only call, in the transcript at once (the turn ends with it). A step ends here.
   */
  callSettled(id: string, message: ToolMessage, alone: boolean): Promise<void> | undefined {
    if (this.#closed) return undefined;
    const { state } = this;
    this.#enter(id, 'done');
    this.#changed('run');
    if (alone) {
      this.#changed('messages', state.messages.length);
      state.messages.push(message);
    } else {
      // One held result a call: settling a held call again replaces its result in place.
      const before = this.#held.get(id);
      if (before === undefined) state.settled.push(message);
      else state.settled[state.settled.indexOf(before)] = message;
      this.#held.set(id, message);
    }
    state.usage.toolCalls++;
    this.#useDecision(id);
    // A settled call needs its nested run no more.
    this.dropNestedRun(id);
    return this.#stepEnds();
  }

  /** Every call of the turn settled: the held results enter the transcript, in the model's order. */
  endTurn(calls: readonly { id: string }[]): void {
    if (this.#closed) return;
    const { state } = this;
    const held = this.#held;
    this.#changed('messages', state.messages.length);
    for (const call of calls) {
      const message = held.get(call.id);
      if (message !== undefined) state.messages.push(message);
    }
    // The held results are in the transcript now: their ledger rows hold nothing any more.
    for (const message of state.settled) this.#changed('calls', message.toolCallId);
    state.settled = [];
    held.clear();
  }

  /** Some calls of the turn wait for a human: the run suspends with them. */
  suspendTurn(pending: PendingApproval[]): void {
    if (this.#closed) return;
    this.state.pendingApprovals = pending;
    this.#changed('run');
    this.#changed('approvals');
  }

  /**
   * Call `id` waits for a human. With `nested`, it waits for a nested run's calls: that run is
   * kept behind the call, with the ids its approvals are listed under here, and the call is
   * `pending` again, so resuming runs it (and its tool continues the nested run). A step ends here.
   */
  callWaits(id: string, nested?: NestedRun): Promise<void> | undefined {
    if (this.#closed) return undefined;
    if (nested !== undefined) {
      this.keepNestedRun(id, { state: nested.state, approvals: nested.ids });
      this.#enter(id, 'pending');
    }
    return this.#stepEnds();
  }

  /**
   * Keep `record` as the nested run behind call `id`, in place of the one kept before: the
   * decisions on that one's approvals are used up with it.
   */
  keepNestedRun(id: string, record: NestedRunRecord): void {
    if (this.#closed) return;
    this.#forget(id);
    this.state.children[id] = record;
    this.#anyNested = true;
    this.#changed('nested');
  }

  /** The nested run behind call `id` is over: it goes, with the decisions on its approvals. */
  dropNestedRun(id: string): void {
    if (this.#closed || !this.#forget(id)) return;
    delete this.state.children[id];
    this.#changed('nested');
  }

  /** Use up the decisions on the approvals of the nested run behind `id`; false when there is none. */
  #forget(id: string): boolean {
    const kept = this.nestedRun(id);
    if (kept === undefined) return false;
    for (const listed of Object.keys(kept.approvals)) this.#useDecision(listed);
    return true;
  }

  // --- resume ----------------------------------------------------------------------------

  /**
   * The decisions a resume brings, each kept under the id of the pending approval it answers
   * (a nested run's are read by its tool when the call runs again); the pending list is
   * emptied, and every earlier decision goes.
   */
  takeDecisions(decisions: ReadonlyMap<string, { approval: PendingApproval; decision: ApprovalDecision; approved: boolean }>): void {
    const { state } = this;
    state.pendingApprovals = [];
    state.decisions = {};
    for (const nested of Object.values(state.children)) delete nested.decisions;
    for (const [id, { approval, decision, approved }] of decisions) {
      const reason = typeof decision === 'object' ? decision.reason : undefined;
      this.#anyDecision = true;
      state.decisions[id] = { approved, toolName: approval.toolName, args: approval.args, ...(reason !== undefined ? { reason: String(reason) } : {}) };
    }
    for (const part of ['run', 'approvals', 'decisions', 'nested'] as const) this.#changed(part);
  }

  // --- usage and hook state --------------------------------------------------------------

  /** One model call's tokens, added to the run's usage. */
  countModelCall(usage: TokenUsage | undefined): void {
    if (this.#closed) return;
    const total = this.state.usage;
    total.modelCalls++;
    const input = usage?.inputTokens ?? 0;
    const output = usage?.outputTokens ?? 0;
    total.inputTokens += input;
    total.outputTokens += output;
    total.totalTokens += input + output;
    this.#changed('run');
  }

  /** Usage spent elsewhere on the run's behalf (a sub-agent's run), added to the run's. */
  addUsage(used: Usage): void {
    if (this.#closed) return;
    const total = this.state.usage;
    for (const key of USAGE_KEYS) total[key] += used[key];
    this.#changed('run');
  }

  /** A hook's or layer's own state, already checked to be plain JSON. */
  setHookState(name: string, value: unknown): void {
    if (this.#closed) return;
    this.state.hookState[name] = value;
    this.#changed('hookState', name);
  }
}

/**
 * A message as the transcript keeps it: one of the state's own (a view's target) as it is, so
 * a message moved by a splice is still itself; any other a copy the state alone holds (see
 * `ownedCopy`), so its giver cannot change it later behind the checks.
 */
function keptMessage<M>(message: M): M {
  const own = unwrap(message);
  return own !== message ? own : ownedCopy(message);
}

const USAGE_KEYS = ['inputTokens', 'outputTokens', 'totalTokens', 'modelCalls', 'toolCalls'] as const;

/**
 * The transcript a new run starts from: `history` (the agent's opening messages, or a
 * session's transcript so far), then `added`. Calls the history's last reply made and never
 * settled (a layer ended that run after the reply) are settled first as not run: a model
 * cannot be sent a call without its result. A new array; `history` is not changed.
 *
 * @example const messages = startingTranscript(session.messages, [{ role: 'user', content: 'And tomorrow?' }]);
 */
export function startingTranscript(history: readonly Message[], added: readonly Message[]): Message[] {
  const messages = history.slice();
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant' && last.toolCalls !== undefined) {
    const error = { kind: 'aborted', message: 'Not run: the run ended before this call' } as const;
    for (const call of last.toolCalls) messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: errorContent(error), metadata: { error: { ...error } } });
  }
  for (const message of added) messages.push(keptMessage(message));
  return messages;
}
