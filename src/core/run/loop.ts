import { segmentOf } from './base-context.js';
import type { RunContext } from '../vocabulary/contexts.js';
import { markOwnError } from '../vocabulary/errors.js';
import type { AssistantMessage } from '../vocabulary/messages.js';
import { ToolCall } from './tool-call.js';
import type { GenerateResult } from '../vocabulary/model.js';
import { ModelCallContext, modelTurn } from './model-call.js';
import type { RunResult } from '../vocabulary/result.js';
import { ToolTurn } from './tool-turn.js';

/**
 * The terminal of the `run` stack: model ↔ tools until a reply has no tool calls, a layer ends
 * the run, a stop condition holds, the signal aborts, or a call waits for a human.
 *
 * The transcript says what comes next, so a resumed or retried segment needs no other
 * bookkeeping: a last reply with tool calls means "settle those calls" (the ledger makes sure
 * none runs twice), a last reply without them means "done", anything else means "ask the model".
 */
export async function runLoop(ctx: RunContext): Promise<RunResult> {
  const segment = segmentOf(ctx);
  const { state } = segment;
  // Run again (a layer sends the model back), the loop reopens how the segment ends.
  segment.end.goOn();
  // The records of the reply kept last: the calls the next turn settles.
  let kept: { reply: AssistantMessage; calls: ToolCall[] } | undefined;
  for (;;) {
    // The segment failed while this loop ran on (an orphaned next()): nothing it does would count.
    if (segment.writer.closed) return segment.end.decide('aborted');
    const last = state.messages[state.messages.length - 1];
    if (last?.role === 'assistant') {
      const calls = last.toolCalls;
      if (calls === undefined || calls.length === 0) return segment.end.decide('final');
      // A turn this segment did not keep the reply of (a resume continues it) makes its records now.
      const records = kept?.reply === last ? kept.calls : calls.map((written) => new ToolCall(segment, written));
      const turn = new ToolTurn(segment, records);
      await turn.settleAll();
      if (turn.end()) return segment.end.decide('approval');
      continue;
    }
    const stop = segment.stopReason();
    if (stop !== undefined) return segment.end.decide(stop);
    const call = modelTurn(segment);
    let reply: GenerateResult | undefined;
    try {
      reply = await segment.stacks.model(call);
      const records = ModelCallContext.keep(call, reply);
      kept = { reply: call.reply!, calls: records };
    } catch (error) {
      // A stack that failed leaves no reply; a failure while keeping the reply leaves it in place.
      if (reply === undefined) ModelCallContext.drop(call);
      if (segment.cancel.aborted) return segment.end.decide('aborted');
      throw error;
    }
    if (segment.end.requested !== undefined) return segment.end.decide('hook_end');
  }
}

/** The loop as the `run` stack's terminal: what it throws is koagent's, not a run layer's. */
export function loopStep(ctx: RunContext): Promise<RunResult> {
  return runLoop(ctx).catch((error: unknown) => {
    throw markOwnError(error);
  });
}
