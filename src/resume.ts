import { KoagentError } from './errors.js';
import { checkState, type ApprovalDecision, type RunState } from './state.js';

const bad = (what: string) => new KoagentError('invalid_resume', `agent.resume(): ${what}`);

/**
 * Check a state and decisions handed to `resume`, and build the state the next segment starts
 * from — without touching the caller's object. Every misuse is refused here, before anything
 * runs: another agent's state, a completed or running run, a missing, unknown or malformed
 * decision, a decision for a sub-agent call the state does not hold.
 *
 * A decision for a suspended sub-agent's call (`<our call id>/<its call id>`) is routed to that
 * sub-agent's state, which its tool resumes when our call runs again.
 */
export function nextSegment(state: RunState, decisions: Record<string, ApprovalDecision>, agentName: string): RunState {
  const checked = checkState(state);
  if (checked.agentName !== agentName) throw bad(`this state belongs to agent "${checked.agentName}", not "${agentName}"; resume it with that agent`);
  if (checked.status === 'completed') throw bad(`run ${checked.runId} has completed (${checked.stopReason}); start a new one with agent.run() or agent.send()`);
  if (checked.status === 'running') throw bad(`run ${checked.runId} is still running; resume the state of its result or of its RunFailedError`);
  if (typeof decisions !== 'object' || decisions === null) throw bad('decisions must be an object mapping each pending toolCallId to true, false or { approved, reason }');
  const pending = new Map(checked.pendingApprovals.map((p) => [p.toolCallId, p]));
  const ids = () => [...pending.keys()].join(', ') || 'none';
  for (const id of Object.keys(decisions)) {
    if (!pending.has(id)) throw bad(`there is no pending approval with toolCallId "${id}" (pending: ${ids()})`);
  }
  const next = structuredClone(checked);
  next.pendingApprovals = [];
  next.decisions = {};
  for (const [id, call] of pending) {
    const decision = decisions[id];
    if (decision === undefined) throw bad(`no decision for pending call "${id}" (${call.toolName}); give true, false or { approved, reason } for each of: ${ids()}`);
    const approved = typeof decision === 'boolean' ? decision : decision?.approved;
    if (typeof approved !== 'boolean') throw bad(`the decision for "${id}" must be true, false or { approved: boolean, reason?: string }`);
    const slash = id.indexOf('/');
    if (slash !== -1) {
      const child = next.children[id.slice(0, slash)];
      if (child === undefined) throw bad(`pending call "${id}" names a sub-agent call that the state does not hold`);
      (child.decisions ??= {})[id.slice(slash + 1)] = decision;
      continue;
    }
    const reason = typeof decision === 'object' ? decision.reason : undefined;
    next.decisions[id] = { approved, toolName: call.toolName, args: call.args, ...(reason !== undefined ? { reason: String(reason) } : {}) };
  }
  return next;
}

/** The key that tells segments apart: resuming the same one twice is refused. */
export function segmentKey(state: RunState): string {
  return `${state.runId}#${state.segment}`;
}
