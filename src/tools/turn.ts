import type { AssistantMessage, ToolCallPart, ToolMessage } from '../messages.js';
import type { Run } from '../run.js';
import type { PendingApproval, RunState } from '../state.js';
import { endToolSpan, inSpan, toolSpan } from '../tracing.js';
import { callOf, toolContext } from './call.js';
import { errorContent, resultContent, toolError, type ToolFailure, type ToolOutcome } from './outcome.js';

/**
 * Run the tool calls of one model reply through the `tool` stack, up to `toolConcurrency` at a
 * time. Their results enter the transcript together, in the order the model made the calls.
 * If the turn cannot finish (a call waits for a human, or the run fails), the results so far
 * are kept in `state.settled`, so the next segment settles only the rest. Returns true when
 * some call waits for a human.
 */
export async function toolTurn(run: Run, reply: AssistantMessage): Promise<boolean> {
  const { state } = run;
  const calls = reply.toolCalls!;
  const results: (ToolMessage | undefined)[] = calls.map((call) => state.settled[call.id]);
  const todo: number[] = [];
  for (let i = 0; i < calls.length; i++) if (results[i] === undefined) todo.push(i);
  const pending: PendingApproval[] = [];
  try {
    await eachWithLimit(todo, run.setup.toolConcurrency, (i) => settleCall(run, calls[i], i, results, pending));
  } catch (error) {
    keepSettled(run, calls, results);
    throw error;
  }
  if (pending.length > 0) {
    keepSettled(run, calls, results);
    // Keep the model's order, whatever order the calls finished in.
    const position = (p: PendingApproval) => calls.findIndex((c) => c.id === p.toolCallId.split('/')[0]);
    pending.sort((a, b) => position(a) - position(b));
    state.pendingApprovals = pending;
    return true;
  }
  for (const message of results) state.messages.push(message!);
  if (todo.length < calls.length) state.settled = {};
  return false;
}

/** The results of a turn that did not finish, kept in the state for the segment that will. */
function keepSettled(run: Run, calls: ToolCallPart[], results: (ToolMessage | undefined)[]): void {
  calls.forEach((call, i) => {
    if (results[i] !== undefined) run.state.settled[call.id] = results[i];
  });
}

/**
 * Run `fn` over `items`, at most `limit` at once. After a failure no new item starts; those
 * already running finish (and record their results), then the first error is thrown.
 */
function eachWithLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  // The common case, one call, costs no extra promise.
  return items.length === 1 ? fn(items[0]) : pool(items, limit, fn);
}

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

async function settleCall(run: Run, call: ToolCallPart, index: number, results: (ToolMessage | undefined)[], pending: PendingApproval[]): Promise<void> {
  const { state, setup } = run;
  const decision = state.decisions[call.id];
  let outcome: ToolOutcome;
  if (decision !== undefined) {
    run.recordPermission(
      { toolName: decision.toolName ?? call.name, toolCallId: call.id, args: decision.args ?? call.args },
      { decision: decision.approved ? 'allow' : 'deny', source: 'approval', ...(decision.reason !== undefined ? { reason: decision.reason } : {}) },
    );
  }
  if (state.ledger[call.id] === 'running') {
    outcome = toolError('execution', `This call had started when the run was interrupted and may have taken effect; it is not run again (idempotency key ${state.runId}:${call.id})`);
  } else if (run.aborted) {
    outcome = toolError('aborted', 'The run was cancelled before this call ran');
  } else if (decision !== undefined && !decision.approved) {
    outcome = toolError('denied', decision.reason ?? 'A human denied this call', 'approval');
  } else {
    if (run.listening) run.publish({ type: 'tool.start', toolCallId: call.id, toolName: call.name, args: call.args });
    const ctx = toolContext(run, call, decision);
    const span = run.tracing ? (callOf(ctx).span = toolSpan(call.name, call.id, run.span)) : undefined;
    try {
      outcome = await (span === undefined ? setup.stacks.tool(ctx) : inSpan(span, () => setup.stacks.tool(ctx)));
    } catch (error) {
      endToolSpan(span, undefined, error);
      throw error;
    }
    endToolSpan(span, outcome.error);
  }
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
  if (decision !== undefined) delete state.decisions[call.id];
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
