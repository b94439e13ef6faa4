import type { RunContext } from './context.js';
import { lastAssistantText } from './messages.js';
import type { GenerateResult } from './model.js';
import { dropReply, keepReply, modelTurn } from './model-call.js';
import type { RunResult } from './result.js';
import { runOf, type Run } from './run.js';
import type { StopReason } from './state.js';
import { ToolTurn } from './tools/turn.js';

/**
 * The terminal of the `run` stack: model ↔ tools until a reply has no tool calls, a layer ends
 * the run, a limit is reached, the signal aborts, or a call waits for a human.
 *
 * The transcript says what comes next, so a resumed or retried segment needs no other
 * bookkeeping: a last reply with tool calls means "settle those calls" (the ledger makes sure
 * none runs twice), a last reply without them means "done", anything else means "ask the model".
 *
 * Each turn's stack is awaited here, not inside an async helper: every async level between the
 * loop and a stack would cost a promise and a microtask per step (see `npm run bench`).
 */
export async function runLoop(ctx: RunContext): Promise<RunResult> {
  const run = runOf(ctx);
  const { state, setup } = run;
  for (;;) {
    const last = state.messages[state.messages.length - 1];
    if (last?.role === 'assistant') {
      if (last.toolCalls === undefined || last.toolCalls.length === 0) return finish(run, 'final');
      const turn = new ToolTurn(run, last.toolCalls);
      try {
        // A turn of one call (the common case) needs no pool.
        const only = turn.only();
        if (only !== undefined) turn.settle(only, await turn.outcome(only));
        else await turn.settleAll();
      } catch (error) {
        turn.hold();
        throw error;
      }
      if (turn.end()) return finish(run, 'approval');
      continue;
    }
    if (run.aborted) return finish(run, 'aborted');
    if (state.steps >= setup.maxSteps) return finish(run, 'max_steps');
    const limit = limitReached(run);
    if (limit !== undefined) return finish(run, limit);
    const call = modelTurn(run);
    let reply: GenerateResult | undefined;
    try {
      reply = await setup.stacks.model(call);
      keepReply(run, call, reply);
    } catch (error) {
      // A stack that failed leaves no reply; a failure while keeping the reply leaves it in place.
      if (reply === undefined) dropReply(run, call);
      if (run.aborted) return finish(run, 'aborted');
      throw error;
    }
    if (run.end !== undefined) return finish(run, 'hook_end');
  }
}

/** The first per-run budget the run has used up, checked between steps. */
function limitReached({ state, setup }: Run): StopReason | undefined {
  const { limits } = setup;
  const { usage } = state;
  if (limits.modelCalls !== undefined && usage.modelCalls >= limits.modelCalls) return 'limit:model_calls';
  if (limits.toolCalls !== undefined && usage.toolCalls >= limits.toolCalls) return 'limit:tool_calls';
  if (limits.tokens !== undefined && usage.totalTokens >= limits.tokens) return 'limit:tokens';
  return undefined;
}

/** Close the segment: record how it stopped in the state and build the result. */
export function finish(run: Run, stopReason: StopReason): RunResult {
  const { state } = run;
  const status = stopReason === 'approval' ? 'suspended' : 'completed';
  const text = lastAssistantText(state.messages);
  const output = stopReason === 'hook_end' ? run.end!.output : text;
  // A failed segment already recorded how it ended; a loop orphaned in it only reports.
  if (!run.over) {
    state.status = status;
    state.stopReason = stopReason;
    state.output = output;
  }
  return {
    runId: state.runId,
    sessionId: state.sessionId,
    status,
    stopReason,
    text,
    output,
    messages: state.messages,
    usage: state.usage,
    pendingApprovals: state.pendingApprovals,
    state,
  };
}
