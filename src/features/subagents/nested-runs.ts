// What the sub-agent tool does with the runs it starts inside a lead's call. The core only knows
// that a call's outcome may carry a nested run: it keeps the run behind the call, lists its
// approvals, and keeps a resume's decisions under the ids they were listed under. This module
// picks those ids, hands a sub-agent's run the decisions meant for it, keeps a failed run for a
// retry of the call, and lets a completed one go.
import { setOwn } from '../../core/vocabulary/json.js';
import type { NestedRunHost } from '../../core/run/nested-run.js';
import type { RunVariables } from '../../core/vocabulary/contexts.js';
import type { NestedRun } from '../../core/vocabulary/outcome.js';
import type { ApprovalDecision, PendingApproval, RunState } from '../../core/vocabulary/state.js';

/** What a call continues: the sub-agent's run kept behind it, and the decisions on its approvals, by its own ids. */
export interface Continuation {
  state: RunState;
  decisions: Record<string, ApprovalDecision>;
}

/**
 * The sub-agent run kept behind call `callId`, to continue, if there is one: it waited for a
 * human, or failed in an earlier attempt of this call. A resume keeps each decision under the
 * id the lead listed the approval under; the lead's state maps that id to the sub-agent's own
 * (the id itself is never read: the model wrote it).
 */
export function continuation(lead: NestedRunHost): Continuation | undefined {
  const kept = lead.kept();
  if (kept === undefined) return undefined;
  // A state a resume wrote before decisions stayed with the lead has them here, routed already.
  const decisions: Record<string, ApprovalDecision> = { ...kept.decisions };
  for (const [listed, own] of Object.entries(kept.approvals)) {
    const decision = lead.decisionOn(listed);
    // Who decided, and where, go along: the sub-agent's run keeps the decision as given.
    if (decision !== undefined) {
      const { approved, reason, actor, surface } = decision;
      setOwn(decisions, own, { approved, ...(reason !== undefined ? { reason } : {}), ...(actor !== undefined ? { actor } : {}), ...(surface !== undefined ? { surface } : {}) });
    }
  }
  return { state: kept.state as RunState, decisions };
}

// The ids picked in a lead's segment (in its `ctx.runVar`): two calls of one turn may list their
// approvals while neither is kept in the lead's state yet.
const LISTED: unique symbol = Symbol('koagent.listedApprovals');

declare module '../../core/vocabulary/contexts.js' {
  interface RunVariables {
    /** @internal koagent's own slot. */
    [LISTED]?: Set<string>;
  }
}

/**
 * The sub-agent run behind call `callId` waits for a human: the nested run the call waits with.
 * Its approvals are listed as the lead's own, each under an id unique in the lead's run
 * (`<call id>/<its id>` where that is free, else with `#2`, `#3` …), mapped to its own id.
 */
export function waitingRun(lead: NestedRunHost, vars: RunVariables, callId: string, state: RunState, approvals: readonly PendingApproval[]): NestedRun {
  const taken = (vars[LISTED] ??= new Set());
  const ids: Record<string, string> = {};
  const listed = approvals.map((p) => {
    let id = `${callId}/${p.toolCallId}`;
    for (let n = 2; lead.holdsCall(id) || taken.has(id); n++) id = `${callId}/${p.toolCallId}#${n}`;
    taken.add(id);
    setOwn(ids, id, p.toolCallId);
    return { ...p, toolCallId: id };
  });
  return { state, approvals: listed, ids };
}
