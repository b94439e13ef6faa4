import { ownValue, setOwn } from '../vocabulary/json.js';
import type { AssistantMessage, AssistantToolCall, Message, ToolMessage } from '../vocabulary/messages.js';
import type { TokenUsage } from '../vocabulary/model.js';
import type { NestedRun } from '../vocabulary/outcome.js';
import { copyJson } from '../vocabulary/json.js';
import type { LedgerEntry, NestedRunRecord, PendingApproval, RunState, RunStatus, StopReason, Usage } from '../vocabulary/state.js';
import { CallLedger } from './call-ledger.js';
import { decisionRecord } from './decisions.js';
import type { CheckedDecision } from '../vocabulary/decisions.js';
import type { StateObserver, StatePart } from './state-observer.js';
import type { TranscriptWrites } from './transcript-view.js';
import { keptMessage, TranscriptWriter } from './transcript-writer.js';

/** A decision a resume takes: the pending approval it answers (as the human was asked), and the checked decision. */
export interface TakenDecision {
  approval: PendingApproval;
  decision: CheckedDecision;
}

/**
 * The one writer of a run's state: every change a segment makes to it goes through here — the
 * transcript, the reply of a model call, the ledger, held results, pending approvals and
 * decisions, nested runs, hook state, usage and status. One place to read what can change.
 *
 * An observer, when given, is told what each write touched and when a step ends (see
 * `StateObserver`); the methods that end a step return the observer's promise, which the
 * run awaits before it goes on (undefined without an observer: nothing to wait for).
 *
 * The transcript's checked writes are a `TranscriptWriter`'s, and the calls by id a
 * `CallLedger`'s: both owned here, both writing only while this writer is open.
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
  readonly #observer: StateObserver | undefined;
  /** The transcript's checked writes, and the calls by id: their changes reported as this writer's. */
  readonly #transcript: TranscriptWriter;
  readonly #ledger: CallLedger;

  constructor(readonly state: RunState, observer?: StateObserver) {
    this.#observer = observer;
    this.#anyDecision = Object.keys(state.decisions).length > 0;
    this.#anyNested = Object.keys(state.children).length > 0;
    const changed = (part: StatePart, key?: string | number): void => this.#changed(part, key);
    this.#transcript = new TranscriptWriter(state, changed);
    this.#ledger = new CallLedger(state, changed);
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
  // The checks and positions are the transcript writer's; here, only whether a write still happens.

  append(message: Message): void {
    if (!this.#closed) this.#transcript.append(message);
  }

  /** Put `message` at `index` (see `TranscriptWriter.putMessage`). */
  putMessage(index: number, message: unknown): void {
    if (!this.#closed) this.#transcript.putMessage(index, message);
  }

  /** Take the last message off (see `TranscriptWriter.deleteMessage`). */
  deleteMessage(index: number): void {
    if (!this.#closed) this.#transcript.deleteMessage(index);
  }

  /** Shorten the transcript to `length` messages (see `TranscriptWriter.truncate`). */
  truncate(length: number): void {
    if (!this.#closed) this.#transcript.truncate(length);
  }

  /** A change inside a stored message, kept only if it is still one (see `TranscriptWriter.editMessage`). */
  editMessage(message: Message, target: object, key: string | symbol, apply: () => boolean): boolean {
    return this.#closed ? true : this.#transcript.editMessage(message, target, key, apply);
  }

  /** Replace the transcript's contents in place: everyone holding the array sees the new ones. */
  setMessages(messages: readonly Message[]): void {
    if (!this.#closed) this.#transcript.setMessages(messages);
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
    return this.#closed ? message : this.#transcript.placeReply(previous, message);
  }

  /** Take a call's reply out of the transcript (the call failed, or is being retried). */
  withdrawReply(previous: AssistantMessage | undefined): void {
    if (!this.#closed && previous !== undefined) this.#transcript.withdrawReply(previous);
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
        const id = own !== undefined && !this.#ledger.has(own) ? own : `call_${steps}_${i}${own === undefined ? '' : `_${own}`}`;
        this.#ledger.enter(id, 'pending');
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
    return this.#ledger.entryOf(id);
  }

  /** The human decision on call `id` a resume brought, if any. */
  decisionOn(id: string): RunState['decisions'][string] | undefined {
    return this.#anyDecision ? ownValue(this.state.decisions, id) : undefined;
  }

  /** The nested run (a sub-agent's) kept behind call `id`, if any. */
  nestedRun(id: string): NestedRunRecord | undefined {
    return this.#anyNested ? ownValue(this.state.children, id) : undefined;
  }

  /** The result of call `id`, settled and held until its turn ends, if any. */
  heldResult(id: string): ToolMessage | undefined {
    return this.#ledger.heldResult(id);
  }

  /**
   * The tool's `execute` is about to be entered: from now on the call never runs again by
   * itself. A step ends here — the tool is entered once the observer kept this (write-ahead).
   */
  callRunning(id: string): Promise<void> | undefined {
    if (this.#closed) return undefined;
    this.#ledger.enter(id, 'running');
    return this.#stepEnds();
  }

  /**
   * A call found `running` (interrupted) whose tool asks a human before it runs again: it is
   * `pending` once more, and a decision given before the interruption no longer counts.
   */
  reopenCall(id: string): void {
    if (this.#closed) return;
    this.#ledger.enter(id, 'pending');
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
    this.#ledger.enter(id, 'done');
    this.#changed('run');
    if (alone) {
      this.#changed('messages', state.messages.length);
      state.messages.push(message);
    } else {
      this.#ledger.hold(id, message);
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
    this.#changed('messages', state.messages.length);
    for (const call of calls) {
      const message = this.#ledger.heldResult(call.id);
      if (message !== undefined) state.messages.push(message);
    }
    this.#ledger.clearHeld();
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
      this.#ledger.enter(id, 'pending');
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
    setOwn(this.state.children, id, record);
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
   * emptied, and every earlier decision goes. Each is also added to the decision log, which
   * keeps them for good: a record of what was decided, on which arguments, by whom, where and
   * `at` when. An approval with edited arguments is kept as approving those.
   */
  takeDecisions(decisions: ReadonlyMap<string, TakenDecision>, at: string): void {
    const { state } = this;
    state.pendingApprovals = [];
    state.decisions = {};
    for (const nested of Object.values(state.children)) delete nested.decisions;
    const log = (state.decisionLog ??= []);
    // The segment the resume starts: the one in which these calls settle.
    const segment = state.segment + 1;
    for (const [id, { approval, decision }] of decisions) {
      this.#anyDecision = true;
      const { approved, reason, actor, surface } = decision;
      const args = decision.args !== undefined ? copyJson(decision.args) : approval.args;
      setOwn(state.decisions, id, { approved, toolName: approval.toolName, args, ...(reason !== undefined ? { reason } : {}), ...(actor !== undefined ? { actor: { ...actor } } : {}), surface });
      log.push(decisionRecord(approval, decision, segment, at));
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
    const cached = usage?.cachedInputTokens;
    if (typeof cached === 'number' && cached > 0) total.cachedInputTokens = (total.cachedInputTokens ?? 0) + cached;
    const written = usage?.cacheWriteInputTokens;
    if (typeof written === 'number' && written > 0) total.cacheWriteInputTokens = (total.cacheWriteInputTokens ?? 0) + written;
    this.#changed('run');
  }

  /** A layer's own usage counter (`ctx.countUsage`). */
  countUsage(name: string, amount: number): void {
    if (this.#closed) return;
    const total = this.state.usage;
    setOwn(total, name, (ownValue(total, name) ?? 0) + amount);
    this.#changed('run');
  }

  /** Usage spent elsewhere on the run's behalf (a sub-agent's run), added to the run's. */
  addUsage(used: Usage): void {
    if (this.#closed) return;
    const total = this.state.usage;
    // Every counter adds up: koagent's own and those layers counted (a cost, cache hits).
    for (const key of Object.keys(used)) {
      const amount = used[key];
      if (typeof amount === 'number' && amount !== 0) setOwn(total, key, (ownValue(total, key) ?? 0) + amount);
    }
    this.#changed('run');
  }

  /** A hook's or layer's own state, already checked to be plain JSON. */
  setHookState(name: string, value: unknown): void {
    if (this.#closed) return;
    // Hooks choose their names: `__proto__` or `constructor` is a key like any other.
    setOwn(this.state.hookState, name, value);
    this.#changed('hookState', name);
  }
}

