import type { AssistantMessage, Message, ToolMessage } from '../core/vocabulary/messages.js';
import type { TokenUsage } from '../core/vocabulary/model.js';
import type { ApprovalDecision, LedgerEntry, PendingApproval, RunState, RunStatus, StopReason, Usage } from '../core/vocabulary/state.js';
import { StateWriter } from '../core/state/state-writer.js';
import type { Checkpoint, CheckpointCall } from '../stores/run-store.js';

/**
 * The state writer of a run that has a store: every change goes through `StateWriter` as
 * always, and is also noted here, so `take()` can say what changed since the last checkpoint
 * without comparing the whole state. Runs without a store use the plain `StateWriter`, so they
 * pay nothing for this.
 *
 * The transcript is followed by its length and its last stored message: appends that bypass
 * the writer (a hook pushing to `ctx.messages`) are found by the length, and a change that
 * bypassed it below the stored part (a splice) by the last stored message no longer being in
 * its place — then the whole transcript is written again. Editing a stored message object in
 * place is not seen: replace the transcript with `ctx.setMessages` instead.
 */
export class JournaledWriter extends StateWriter {
  /** How many messages the store holds, and the last of them. */
  #stored: number;
  #tail: Message | undefined;
  /** The lowest transcript position a writer call changed below the stored count. */
  #rewriteFrom = Infinity;
  #dirty = false;
  #output = false;
  #pending = false;
  #decisions = false;
  #children = false;
  readonly #calls = new Set<string>();
  readonly #hooks = new Set<string>();
  readonly #store: (() => Promise<void>) | undefined;

  /** `state` as the store holds it now: nothing is new yet. `store` writes what changed (the segment's checkpoints). */
  constructor(state: RunState, store?: () => Promise<void>) {
    super(state);
    this.#stored = state.messages.length;
    this.#tail = state.messages[this.#stored - 1];
    this.#store = store;
  }

  override stored(): Promise<void> | undefined {
    return this.#store?.();
  }

  override beginSegment(): number {
    this.#dirty = true;
    return super.beginSegment();
  }

  override end(status: Exclude<RunStatus, 'running' | 'failed'>, stopReason: StopReason, output: unknown): void {
    if (!this.closed) this.#dirty = this.#output = true;
    super.end(status, stopReason, output);
  }

  override reopen(): void {
    if (!this.closed) this.#dirty = this.#output = true;
    super.reopen();
  }

  override fail(error: { code: string; message: string; layer?: string }): void {
    if (!this.closed) this.#dirty = true;
    super.fail(error);
  }

  override setMessages(messages: readonly Message[]): void {
    if (!this.closed && messages !== this.state.messages) this.#rewriteFrom = 0;
    super.setMessages(messages);
  }

  override nextStep(): number {
    this.#dirty = true;
    return super.nextStep();
  }

  override placeReply(previous: AssistantMessage | undefined, message: AssistantMessage): AssistantMessage {
    if (!this.closed && previous !== undefined && previous !== message) this.#changedAt(this.state.messages.lastIndexOf(previous));
    return super.placeReply(previous, message);
  }

  override withdrawReply(previous: AssistantMessage | undefined): void {
    if (!this.closed && previous !== undefined) this.#changedAt(this.state.messages.lastIndexOf(previous));
    super.withdrawReply(previous);
  }

  override keepReply(previous: AssistantMessage | undefined, message: AssistantMessage): void {
    super.keepReply(previous, message);
    if (this.closed || message.toolCalls === undefined) return;
    for (const call of message.toolCalls) this.#call(call.id);
  }

  override callRunning(id: string): void {
    if (!this.closed) this.#call(id);
    super.callRunning(id);
  }

  override callSettled(id: string, message: ToolMessage, alone: boolean): void {
    if (!this.closed) {
      this.#call(id);
      if (this.decisionOn(id) !== undefined) this.#decisions = true;
      if (this.childOf(id) !== undefined) this.#children = true;
    }
    super.callSettled(id, message, alone);
  }

  override endTurn(calls: readonly { id: string }[]): void {
    // The held results move into the transcript: their ledger rows hold nothing any more.
    if (!this.closed) for (const held of this.state.settled) this.#call(held.toolCallId);
    super.endTurn(calls);
  }

  override suspendTurn(pending: PendingApproval[]): void {
    if (!this.closed) this.#dirty = this.#pending = true;
    super.suspendTurn(pending);
  }

  override suspendChild(id: string, child: unknown, approvals: Record<string, string>): void {
    if (!this.closed) {
      this.#call(id);
      this.#children = true;
    }
    super.suspendChild(id, child, approvals);
  }

  override keepFailedChild(id: string, child: unknown): void {
    if (!this.closed) this.#dirty = this.#children = true;
    super.keepFailedChild(id, child);
  }

  override dropChild(id: string): void {
    if (!this.closed && this.childOf(id) !== undefined) this.#dirty = this.#children = true;
    super.dropChild(id);
  }

  override reopenCall(id: string): void {
    if (!this.closed) {
      this.#call(id);
      this.#decisions = true;
    }
    super.reopenCall(id);
  }

  override takeDecisions(decisions: ReadonlyMap<string, { approval: PendingApproval; decision: ApprovalDecision; approved: boolean }>): void {
    this.#dirty = this.#pending = this.#decisions = this.#children = true;
    super.takeDecisions(decisions);
  }

  override countModelCall(usage: TokenUsage | undefined): void {
    this.#dirty = true;
    super.countModelCall(usage);
  }

  override addUsage(used: Usage): void {
    this.#dirty = true;
    super.addUsage(used);
  }

  override setHookState(name: string, value: unknown): void {
    if (!this.closed) {
      this.#dirty = true;
      this.#hooks.add(name);
    }
    super.setHookState(name, value);
  }

  #call(id: string): void {
    this.#dirty = true;
    this.#calls.add(id);
  }

  #changedAt(index: number): void {
    if (index !== -1 && index < this.#rewriteFrom) this.#rewriteFrom = index;
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
    let from = this.#rewriteFrom < stored ? this.#rewriteFrom : stored;
    // Changed behind the writer's back below what is stored: write the transcript again.
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
    if (transcript) {
      const items: string[] = [];
      for (let i = from; i < messages.length; i++) items.push(JSON.stringify(messages[i]));
      checkpoint.messages = { from, items };
    }
    if (this.#output) checkpoint.output = state.output === undefined ? null : JSON.stringify(state.output);
    if (this.#pending) checkpoint.pendingApprovals = JSON.stringify(state.pendingApprovals);
    if (this.#decisions) checkpoint.decisions = JSON.stringify(state.decisions);
    if (this.#children) checkpoint.children = JSON.stringify(state.children);
    if (this.#calls.size > 0) {
      const calls: CheckpointCall[] = [];
      for (const id of this.#calls) {
        const entry = this.entryOf(id);
        if (entry === undefined) continue;
        const held = this.heldResult(id);
        calls.push({ id, entry, held: held === undefined ? null : JSON.stringify(held) });
      }
      checkpoint.calls = calls;
      this.#calls.clear();
    }
    if (this.#hooks.size > 0) {
      checkpoint.hookState = [...this.#hooks].map((name) => ({ name, value: JSON.stringify(state.hookState[name] ?? null) }));
      this.#hooks.clear();
    }
    this.#stored = messages.length;
    this.#tail = messages[messages.length - 1];
    this.#rewriteFrom = Infinity;
    this.#dirty = this.#output = this.#pending = this.#decisions = this.#children = false;
    return checkpoint;
  }
}
