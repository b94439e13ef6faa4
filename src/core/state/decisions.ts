// Human decisions as the run keeps them for good: what was decided on which call, with which
// arguments, why, by whom, through which surface, and when (the checks are the vocabulary's).
import { copyJson } from '../vocabulary/json.js';
import type { CheckedDecision } from '../vocabulary/decisions.js';
import type { DecisionRecord, PendingApproval, RunState } from '../vocabulary/state.js';

/**
 * The record of one decision on `approval` (the pending call as the human was asked about it),
 * taken at `at` for the segment `segment`.
 */
export function decisionRecord(approval: PendingApproval, decision: CheckedDecision, segment: number, at: string): DecisionRecord {
  return {
    toolCallId: approval.toolCallId,
    toolName: approval.toolName,
    decision: decision.approved ? 'approved' : 'denied',
    args: copyJson(approval.args),
    ...(decision.args !== undefined ? { editedArgs: copyJson(decision.args) } : {}),
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    ...(decision.actor !== undefined ? { actor: { ...decision.actor } } : {}),
    surface: decision.surface,
    at,
    segment,
    ...((approval.path?.length ?? 0) > 0 ? { path: [...approval.path!] } : {}),
  };
}

/**
 * The decision a human gave on call `toolCallId` for the segment `state` is in now (what that
 * call is settling on), if there is one.
 *
 * @example const decided = decisionIn(ctx.state, ctx.toolCallId); if (decided?.editedArgs !== undefined) audit(decided);
 */
export function decisionIn(state: Readonly<RunState>, toolCallId: string): DecisionRecord | undefined {
  const log = state.decisionLog;
  if (log === undefined) return undefined;
  for (let i = log.length - 1; i >= 0; i--) {
    const record = log[i];
    if (record.segment < state.segment) return undefined;
    if (record.toolCallId === toolCallId && record.segment === state.segment) return record;
  }
  return undefined;
}
