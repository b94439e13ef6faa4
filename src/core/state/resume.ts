import { KoagentError } from '../vocabulary/errors.js';
import { ownValue } from '../vocabulary/json.js';
import { checkDecision } from '../vocabulary/decisions.js';
import { checkState } from './state-schema.js';
import type { AgentIdentity, ApprovalDecision, RunState } from '../vocabulary/state.js';
import { StateWriter, type TakenDecision } from './state-writer.js';

const bad = (what: string) => new KoagentError('invalid_resume', `agent.resume(): ${what}`);

/**
 * Check a state and decisions handed to `resume`, and build the state the next segment starts
 * from — without touching the caller's object. Every misuse is refused here, before anything
 * runs: another agent's state, a completed or running run, a missing, unknown or malformed
 * decision. Each decision is kept under the id of the approval it answers: one that a nested
 * run (a sub-agent's) listed is read by that run's tool when its call runs again — and each is
 * added to the run's decision log, for good.
 */
export function nextSegment(state: RunState, decisions: Record<string, ApprovalDecision>, agent: AgentIdentity): RunState {
  const checked = checkState(state);
  if (checked.agentName !== agent.name) throw bad(`this state belongs to agent "${checked.agentName}", not "${agent.name}"; resume it with that agent`);
  if (checked.agentId !== agent.id || checked.toolsFingerprint !== agent.toolsFingerprint) {
    const what = checked.agentId !== agent.id ? `id "${checked.agentId}", not "${agent.id}"` : 'other tools (its calls name tools, or arguments, this agent may not have)';
    throw bad(`this state belongs to another agent named "${agent.name}" (${what}); resume it with the agent that ran it, or take it over on purpose with agent.runs.adoptState(state)`);
  }
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
    if (!held.has(id)) throw bad(`pending approval "${id}" names a call that the state does not hold (no tool call of its last reply, and no nested run, a sub-agent's, waiting under it); resume the state the run returned, unchanged`);
  }
  const taken = new Map<string, TakenDecision>();
  for (const [id, approval] of pending) {
    // The caller's own answer for this id: an id such as `constructor` reads nothing inherited.
    const given = ownValue(decisions, id);
    if (given === undefined) throw bad(`no decision for pending call "${id}" (${approval.toolName}); give true, false or { approved, reason } for each of: ${ids()}`);
    const decision = checkDecision(id, given, bad);
    if (decision.args !== undefined && (!decision.approved || (approval.path?.length ?? 0) > 0)) {
      throw bad(`the decision for "${id}" carries args, which only an approval of the run's own call takes (${decision.approved ? 'this one is a sub-agent\'s' : 'it denies the call'})`);
    }
    taken.set(id, { approval, decision });
  }
  const next = structuredClone(checked);
  new StateWriter(next).takeDecisions(taken, new Date().toISOString());
  return next;
}

/** The ids a pending approval may have: the calls of the last reply, and the ids the approvals of waiting nested runs are listed under. */
function heldCalls(state: RunState): Set<string> {
  const ids = new Set<string>();
  const last = state.messages[state.messages.length - 1];
  if (last?.role === 'assistant') for (const call of last.toolCalls ?? []) ids.add(call.id);
  for (const nested of Object.values(state.children)) for (const id of Object.keys(nested.approvals ?? {})) ids.add(id);
  return ids;
}

/** The key that tells segments apart: resuming the same one twice is refused. */
export function segmentKey(state: RunState): string {
  return `${state.runId}#${state.segment}`;
}
