import { KoagentError } from './errors.js';
import type { ApprovalDecision, PendingApproval, RunState } from './state.js';
import { StateWriter } from './state-writer.js';

const bad = (what: string) => new KoagentError('invalid_resume', `agent.resume(): ${what}`);

const FIELDS: [keyof RunState, string][] = [
  ['runId', 'string'], ['sessionId', 'string'], ['agentName', 'string'], ['status', 'string'], ['segment', 'number'],
  ['messages', 'array'], ['steps', 'number'], ['usage', 'object'], ['pendingApprovals', 'array'], ['decisions', 'object'],
  ['settled', 'object'], ['ledger', 'object'], ['hookState', 'object'], ['children', 'object'],
];

const STATUSES = new Set<string>(['running', 'completed', 'suspended', 'failed']);

/** Check a state handed to `resume` (it may come from a database), naming the first bad field. */
export function checkState(value: unknown): RunState {
  const refuse = (what: string) => new KoagentError('invalid_resume', `resume(state): ${what}; pass the \`state\` of a RunResult or of a RunFailedError, unchanged`);
  if (typeof value !== 'object' || value === null) throw refuse('state is not an object');
  const state = value as RunState;
  if (state.version !== 1) throw refuse(`state.version is ${JSON.stringify(state.version)}, expected 1`);
  for (const [field, type] of FIELDS) {
    const v = state[field];
    const ok = type === 'array' ? Array.isArray(v) : type === 'object' ? typeof v === 'object' && v !== null && !Array.isArray(v) : typeof v === type;
    if (!ok) throw refuse(`state.${field} should be ${type === 'array' ? 'an array' : `a${type === 'object' ? 'n' : ''} ${type}`}`);
  }
  if (!STATUSES.has(state.status)) throw refuse(`state.status is ${JSON.stringify(state.status)}, expected one of ${[...STATUSES].join(', ')}`);
  state.pendingApprovals.forEach((p, i) => {
    if (typeof p !== 'object' || p === null || typeof p.toolCallId !== 'string' || typeof p.toolName !== 'string') {
      throw refuse(`state.pendingApprovals[${i}] should be { toolCallId: string, toolName: string, args }`);
    }
  });
  return state;
}

/**
 * Check a state and decisions handed to `resume`, and build the state the next segment starts
 * from — without touching the caller's object. Every misuse is refused here, before anything
 * runs: another agent's state, a completed or running run, a missing, unknown or malformed
 * decision. A decision for an approval that came from a child run (a sub-agent) is routed to
 * it by the route the state keeps, which its tool resumes when the call runs again.
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
  const held = heldCalls(checked);
  for (const id of pending.keys()) {
    if (!held.has(id)) throw bad(`pending approval "${id}" names a call that the state does not hold (no tool call of its last reply, and no sub-agent run waiting under it); resume the state the run returned, unchanged`);
  }
  const taken = new Map<string, { approval: PendingApproval; decision: ApprovalDecision; approved: boolean }>();
  for (const [id, approval] of pending) {
    const decision = decisions[id];
    if (decision === undefined) throw bad(`no decision for pending call "${id}" (${approval.toolName}); give true, false or { approved, reason } for each of: ${ids()}`);
    const approved = typeof decision === 'boolean' ? decision : decision?.approved;
    if (typeof approved !== 'boolean') throw bad(`the decision for "${id}" must be true, false or { approved: boolean, reason?: string }`);
    taken.set(id, { approval, decision, approved });
  }
  const next = structuredClone(checked);
  new StateWriter(next).takeDecisions(taken);
  return next;
}

/** The ids a pending approval may have: the calls of the last reply, and the approvals of waiting child runs. */
function heldCalls(state: RunState): Set<string> {
  const ids = new Set<string>();
  const last = state.messages[state.messages.length - 1];
  if (last?.role === 'assistant') for (const call of last.toolCalls ?? []) ids.add(call.id);
  for (const child of Object.values(state.children)) for (const id of Object.keys(child.approvals ?? {})) ids.add(id);
  return ids;
}

/** The key that tells segments apart: resuming the same one twice is refused. */
export function segmentKey(state: RunState): string {
  return `${state.runId}#${state.segment}`;
}
