import type { ToolContext } from '../context.js';
import type { ToolCallPart, ToolMessage } from '../messages.js';
import type { Run } from '../run.js';
import type { PendingApproval, RunState } from '../state.js';
import { endToolSpan, inSpan, toolSpan } from '../tracing.js';
import { callOf, toolContext } from './call.js';
import { errorContent, resultContent, toolError, type ToolFailure, type ToolOutcome } from './outcome.js';

/**
 * The tool calls of one model reply, settled through the `tool` stack up to `toolConcurrency`
 * at a time. Their results enter the transcript together, in the order the model made the calls.
 * If the turn cannot finish (a call waits for a human, or the run fails), the results so far
 * are kept in `state.settled`, so the next segment settles only the rest.
 *
 * The loop drives it, so that a turn of one call (the common case) costs no async function of
 * its own: the loop awaits that call's stack directly.
 *
 * @example const turn = new ToolTurn(run, reply.toolCalls); await turn.settleAll(); const waiting = turn.end();
 */
export class ToolTurn {
  /** Results in call order; those an earlier segment settled are there from the start. */
  private readonly results: (ToolMessage | undefined)[] = [];
  /** Indexes of the calls this segment must settle. */
  private readonly todo: number[] = [];
  private readonly pending: PendingApproval[] = [];

  constructor(private readonly run: Run, private readonly calls: ToolCallPart[]) {
    const held = run.state.settled;
    for (let i = 0; i < calls.length; i++) {
      const result = held[calls[i].id];
      this.results.push(result);
      if (result === undefined) this.todo.push(i);
    }
  }

  /** The one call left to settle, when exactly one is. */
  only(): number | undefined {
    return this.todo.length === 1 ? this.todo[0] : undefined;
  }

  /** Call `i` through the `tool` stack (not async: the caller awaits the stack's own promise). */
  outcome(i: number): ToolOutcome | Promise<ToolOutcome> {
    return callOutcome(this.run, this.calls[i]);
  }

  /** Call `i` has its final outcome. */
  settle(i: number, outcome: ToolOutcome): void {
    record(this.run, this.calls[i], i, outcome, this.results, this.pending);
  }

  /** Settle every call left, up to `toolConcurrency` at a time. */
  settleAll(): Promise<void> {
    return pool(this.todo, this.run.setup.toolConcurrency, async (i) => this.settle(i, await this.outcome(i)));
  }

  /** The turn cannot finish in this segment: keep what settled for the one that will (a resume or a retry). */
  hold(): void {
    const { calls, results } = this;
    for (let i = 0; i < calls.length; i++) {
      const result = results[i];
      if (result !== undefined) this.run.state.settled[calls[i].id] = result;
    }
  }

  /**
   * Every call settled: the results enter the transcript, or, if some call waits for a human,
   * are held for the next segment. Returns true when some call waits.
   */
  end(): boolean {
    const { state } = this.run;
    const { calls, pending } = this;
    if (pending.length > 0) {
      this.hold();
      // Keep the model's order, whatever order the calls finished in.
      const position = (p: PendingApproval) => calls.findIndex((c) => c.id === p.toolCallId.split('/')[0]);
      pending.sort((a, b) => position(a) - position(b));
      state.pendingApprovals = pending;
      return true;
    }
    for (const message of this.results) state.messages.push(message!);
    if (this.todo.length < calls.length) state.settled = {};
    return false;
  }
}

/**
 * Run `fn` over `items`, at most `limit` at once. After a failure no new item starts; those
 * already running finish (and record their results), then the first error is thrown.
 */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

/**
 * Send one call through the `tool` stack, unless it must not run: it was interrupted while
 * running, the run was cancelled, or a human denied it. Not async, so the stack's own promise
 * is what the turn awaits.
 */
function callOutcome(run: Run, call: ToolCallPart): ToolOutcome | Promise<ToolOutcome> {
  const { state } = run;
  const decision = state.decisions[call.id];
  if (decision !== undefined) {
    run.recordPermission(
      { toolName: decision.toolName ?? call.name, toolCallId: call.id, args: decision.args ?? call.args },
      { decision: decision.approved ? 'allow' : 'deny', source: 'approval', ...(decision.reason !== undefined ? { reason: decision.reason } : {}) },
    );
  }
  if (state.ledger[call.id] === 'running') {
    return toolError('execution', `This call had started when the run was interrupted and may have taken effect; it is not run again (idempotency key ${state.runId}:${call.id})`);
  }
  if (run.aborted) return toolError('aborted', 'The run was cancelled before this call ran');
  if (decision !== undefined && !decision.approved) return toolError('denied', decision.reason ?? 'A human denied this call', 'approval');
  if (run.listening) run.publish({ type: 'tool.start', toolCallId: call.id, toolName: call.name, args: call.args });
  const ctx = toolContext(run, call, decision);
  return run.tracing ? tracedOutcome(run, call, ctx) : run.setup.stacks.tool(ctx);
}

/** The `tool` stack inside the call's span, when the run's span records. */
async function tracedOutcome(run: Run, call: ToolCallPart, ctx: ToolContext): Promise<ToolOutcome> {
  const span = (callOf(ctx).span = toolSpan(call.name, call.id, run.span));
  let outcome: ToolOutcome;
  try {
    outcome = await inSpan(span, () => run.setup.stacks.tool(ctx));
  } catch (error) {
    endToolSpan(span, undefined, error);
    throw error;
  }
  endToolSpan(span, outcome.error);
  return outcome;
}

/** A call's outcome is final: its result joins the turn's, or its request for approval the turn's pending list. */
function record(run: Run, call: ToolCallPart, index: number, outcome: ToolOutcome, results: (ToolMessage | undefined)[], pending: PendingApproval[]): void {
  const { state } = run;
  if (outcome.requiresApproval === true) {
    if (outcome.child !== undefined) return suspendChild(run, call, outcome.child, pending);
    const ask = outcome.approval ?? { toolName: call.name, args: call.args };
    const entry: PendingApproval = { toolCallId: call.id, toolName: ask.toolName, args: ask.args, ...(ask.reason !== undefined ? { reason: ask.reason } : {}) };
    pending.push(entry);
    if (run.listening) run.publish({ type: 'approval.requested', ...entry });
    return;
  }
  const message = toolMessage(call, outcome);
  results[index] = message;
  state.ledger[call.id] = 'done';
  state.usage.toolCalls++;
  if (state.decisions[call.id] !== undefined) delete state.decisions[call.id];
  if (run.listening) {
    const error = message.metadata?.error as ToolFailure | undefined;
    if (error !== undefined) run.publish({ type: 'tool.error', toolCallId: call.id, toolName: call.name, kind: error.kind, message: error.message, ...(error.by !== undefined ? { by: error.by } : {}) });
    else run.publish({ type: 'tool.done', toolCallId: call.id, toolName: call.name, result: message.content, ...replaced(outcome) });
  }
}

/**
 * A sub-agent behind this call is waiting for a human: keep its state, and offer its pending
 * calls as ours, their ids prefixed with this call's (`<call id>/<its call id>`) so they stay
 * unique. The call is not settled; resuming runs it again, which resumes the sub-agent.
 */
function suspendChild(run: Run, call: ToolCallPart, child: RunState, pending: PendingApproval[]): void {
  run.state.children[call.id] = { state: child };
  run.state.ledger[call.id] = 'pending';
  for (const p of child.pendingApprovals) {
    const entry: PendingApproval = { ...p, toolCallId: `${call.id}/${p.toolCallId}`, path: [child.agentName, ...(p.path ?? [])] };
    pending.push(entry);
    // Under the id `resume` takes here (the sub-agent announced it under its own id).
    if (run.listening) run.publish({ type: 'approval.requested', ...entry });
  }
}

function replaced(outcome: ToolOutcome): { replacedBy?: string; replacedByHook?: string } {
  return outcome.replacedBy === undefined ? {} : { replacedBy: outcome.replacedBy, replacedByHook: outcome.replacedBy };
}

/** The transcript entry for a settled call: what the model reads, and why, in metadata. */
export function toolMessage(call: ToolCallPart, outcome: ToolOutcome): ToolMessage {
  let error = outcome.error;
  let content = '';
  if (error === undefined) {
    try {
      content = resultContent(outcome.result);
    } catch (problem) {
      const source = outcome.replacedBy === undefined ? `${call.name} returned a result` : `the result ${outcome.replacedBy} gave for ${call.name}`;
      error = { kind: 'execution', message: `${source} that cannot be sent to the model: ${(problem as Error).message}` };
    }
  }
  if (error !== undefined) {
    return { role: 'tool', toolCallId: call.id, name: call.name, content: errorContent(error), metadata: { error: { ...error } } };
  }
  const message: ToolMessage = { role: 'tool', toolCallId: call.id, name: call.name, content };
  if (outcome.replacedBy !== undefined) message.metadata = replaced(outcome);
  return message;
}
