import type { ToolCall } from './tool-call.js';
import { contentProblem } from '../vocabulary/content.js';
import type { AssistantToolCall, ToolMessage } from '../vocabulary/messages.js';
import { errorContent, resultContent, toolError, type ToolFailure, type ToolOutcome } from '../vocabulary/outcome.js';
import type { Segment } from './segment.js';
import type { PendingApproval } from '../vocabulary/state.js';
import { ToolCallContext } from './tool-context.js';

/**
 * The tool calls of one model reply, sent through the `tool` stack up to `toolConcurrency` at a
 * time. Each settled call's result is written to the state at once (held until the turn ends),
 * so a segment that cannot finish the turn — a call waits for a human, or the run fails —
 * leaves the next one only the rest to settle. The results enter the transcript together, in
 * the order the model made the calls; a reply's only call goes there at once.
 *
 * @example const turn = new ToolTurn(segment, reply.toolCalls, false); await turn.settleAll(); const waits = turn.end();
 */
export class ToolTurn {
  /** Indexes of the calls this segment must settle (an earlier one may have settled some). */
  private readonly todo: number[] = [];
  /** Calls that wait for a human, with their position in the reply (made on the first one). */
  private pending: { at: number; approval: PendingApproval }[] | undefined;

  constructor(private readonly segment: Segment, private readonly calls: ToolCall[]) {
    for (let i = 0; i < calls.length; i++) if (segment.writer.heldResult(calls[i].id) === undefined) this.todo.push(i);
  }

  /**
   * Call `i` settled with `outcome`: its result is written, or its request for a human kept.
   * Returns the writer's step end to await (undefined when there is nothing to wait for).
   */
  settle(i: number, outcome: ToolOutcome): Promise<void> | undefined {
    const { segment } = this;
    const call = this.calls[i].written;
    if (outcome.requiresApproval !== true) return written(segment, call, outcome, this.calls.length === 1);
    const pending = (this.pending ??= []);
    // A nested run behind the call waits: its approvals are listed as the run's own, as it gives them.
    const { nested } = outcome;
    for (const approval of nested?.approvals ?? [ownApproval(call, outcome)]) {
      pending.push({ at: i, approval });
      if (segment.bus.listening) segment.bus.publish({ type: 'approval.requested', ...approval });
    }
    return segment.writer.callWaits(call.id, nested);
  }

  /** Settle every call left, up to `toolConcurrency` at a time. */
  settleAll(): Promise<void> {
    const { segment, calls } = this;
    return pool(this.todo, segment.agent.toolConcurrency, async (i) => this.settle(i, await callOutcome(segment, calls[i])));
  }

  /**
   * Every call settled: the results enter the transcript, or, if some call waits for a human,
   * the run suspends with them. Returns true when some call waits.
   */
  end(): boolean {
    const { writer } = this.segment;
    if (this.pending !== undefined) {
      // Keep the model's order, whatever order the calls finished in (a stable sort).
      writer.suspendTurn(this.pending.sort((a, b) => a.at - b.at).map((p) => p.approval));
      return true;
    }
    if (this.calls.length > 1) writer.endTurn(this.calls);
    return false;
  }
}

/**
 * A call settled, its result written (`alone`: the reply's only call, straight into the
 * transcript) and its end published. Returns the writer's step end to await.
 */
function written(segment: Segment, call: AssistantToolCall, outcome: ToolOutcome, alone: boolean): Promise<void> | undefined {
  const message = toolMessage(call, outcome);
  const stepEnd = segment.writer.callSettled(call.id, message, alone);
  if (segment.bus.listening) {
    const error = message.metadata?.error as ToolFailure | undefined;
    if (error !== undefined) segment.bus.publish({ type: 'tool.error', toolCallId: call.id, toolName: call.name, error: { ...error } });
    else segment.bus.publish({ type: 'tool.done', toolCallId: call.id, toolName: call.name, result: message.content, ...replaced(outcome) });
  }
  return stepEnd;
}

/**
 * Run `fn` over `items`, at most `limit` at once. After a failure no new item starts; those
 * already running finish (and record their results), then the first error is thrown.
 */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  // One item (a reply's only call, the usual turn) needs no workers to share it.
  if (items.length === 1) return fn(items[0]);
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
 * running, the run was cancelled, a human denied it, or its arguments are no JSON object.
 * Not async, so the stack's own promise is what the caller awaits.
 */
export function callOutcome(segment: Segment, record: ToolCall): ToolOutcome | Promise<ToolOutcome> {
  const call = record.written;
  if (segment.writer.entryOf(call.id) === 'running') {
    const interrupted = interruptedCall(segment, call);
    if (interrupted !== undefined) return interrupted;
  }
  const { decision } = record;
  if (decision !== undefined) {
    segment.bus.permission(
      { toolName: decision.toolName ?? call.name, toolCallId: call.id, args: decision.args ?? call.args },
      { decision: decision.approved ? 'allow' : 'deny', source: 'approval', ...(decision.reason !== undefined ? { reason: decision.reason } : {}) },
    );
  }
  if (segment.cancel.aborted) return toolError('aborted', 'The run was cancelled before this call ran');
  // A human said no: the approval step settles it alone, where spans and the layer trace see it.
  if (decision !== undefined && !decision.approved) return segment.stacks.denied(new ToolCallContext(segment, record));
  if (record.problem !== undefined) return toolError('validation', `Invalid arguments for ${call.name}: ${record.problem}`);
  return segment.stacks.tool(new ToolCallContext(segment, record));
}

/**
 * A call that was running when its run was interrupted ran zero or one times. Its tool's
 * policy decides: `rerun` goes on (undefined: the call runs again, with the same idempotency
 * key), `report` settles it with an error telling the model the outcome is unknown, `ask`
 * makes it `pending` again and asks a human whether to run it.
 */
function interruptedCall(segment: Segment, call: AssistantToolCall): ToolOutcome | undefined {
  const key = `${segment.state.runId}:${call.id}`;
  switch (segment.agent.interruptPolicy(call.name)) {
    case 'rerun':
      return undefined;
    case 'ask':
      segment.writer.reopenCall(call.id);
      return {
        result: undefined,
        requiresApproval: true,
        approval: { toolName: call.name, args: call.args, reason: `This call had started when the run was interrupted and may have taken effect (idempotency key ${key}); approve to run it again, deny to tell the model it did not complete` },
      };
    default:
      return toolError('execution', `This call had started when the run was interrupted and may have taken effect; it is not run again (idempotency key ${key})`);
  }
}

/** What a call that needs a human asks them: the tool and the arguments the layers produced. */
function ownApproval(call: AssistantToolCall, outcome: ToolOutcome): PendingApproval {
  const ask = outcome.approval ?? { toolName: call.name, args: call.args };
  return { toolCallId: call.id, toolName: ask.toolName, args: ask.args, ...(ask.reason !== undefined ? { reason: ask.reason } : {}) };
}

function replaced(outcome: ToolOutcome): { replacedBy?: string; replacedByHook?: string } {
  return outcome.replacedBy === undefined ? {} : { replacedBy: outcome.replacedBy, replacedByHook: outcome.replacedBy };
}

/** The transcript entry for a settled call: what the model reads, and why, in metadata. */
export function toolMessage(call: AssistantToolCall, outcome: ToolOutcome): ToolMessage {
  let error = outcome.error;
  let content: ToolMessage['content'] = '';
  if (error === undefined && outcome.content !== undefined) {
    const problem = typeof outcome.content === 'string' ? undefined : contentProblem(outcome.content, 'tool', `the content given for ${call.name}`);
    if (problem === undefined) content = outcome.content;
    else error = { kind: 'execution', message: problem };
  } else if (error === undefined) {
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
