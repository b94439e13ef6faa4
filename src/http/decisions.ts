// Decisions over HTTP, bound to what the human saw: each pending approval is served with a digest
// of the run, its segment, the call and its arguments, and a decision must bring it back. One
// for another call, other arguments or an earlier segment (a replay, a stale page) is refused —
// and the refusal is kept in the store's key-values beside the run, with who sent it and why.
import { createHash } from 'node:crypto';
import type { KeyValueStore } from '../stores/key-values.js';
import type { ApprovalDecision, PendingApproval, RunState } from '../core/vocabulary/state.js';
import type { Agent } from '../agent/agent.js';
import { argumentIssues } from '../tools/argument-issues.js';
import { HttpError, type Identity } from './identity.js';

/**
 * The digest a decision on `approval` must carry: of the run, the segment it waits in, the call,
 * the tool and the arguments (JSON with sorted keys), as base64url SHA-256.
 */
export function approvalDigest(runId: string, segment: number, approval: PendingApproval): string {
  const text = JSON.stringify([runId, segment, approval.toolCallId, approval.toolName, sorted(approval.args)]);
  return createHash('sha256').update(text).digest('base64url');
}

/** A JSON value with its objects' keys in order, so a digest does not depend on key order. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted((value as Record<string, unknown>)[key])]));
}

/** One decision as a client sends it: the verdict, the digest of what it saw, and (approving) edited arguments. */
export interface SentDecision {
  approved: boolean;
  digest: string;
  reason?: string;
  args?: unknown;
}

/**
 * Why a decision was refused: its call is not pending, its digest is of other arguments or an
 * earlier state, the run is not waiting, was cancelled, or another answer resumed it first.
 *
 * @example if (refused.reason === 'digest') showAgain(await (await fetch(`/runs/${runId}`)).json());
 */
export type RefusalReason = 'not_suspended' | 'not_pending' | 'digest' | 'cancelled' | 'answered';

/**
 * A refused decision as the store keeps it (`GET /runs/:runId` lists them as `refusedDecisions`).
 *
 * @example for (const r of run.refusedDecisions) console.warn(`${r.at} ${r.actor.id}: ${r.reason} on ${r.toolCallId}`);
 */
export interface RefusedDecision {
  toolCallId: string;
  approved: boolean;
  reason: RefusalReason;
  message: string;
  actor: { id: string; name?: string };
  surface: string;
  /** The run's segment and status when it was refused. */
  segment: number;
  status: string;
  at: string;
}

/** Refusals kept per run at most (later ones are counted, not kept). */
const KEPT = 100;
/** How long a refusal is kept (90 days). */
const TTL_MS = 90 * 24 * 3600_000;

/** The refusals of runs, kept in the store's key-values. */
export class Refusals {
  constructor(private readonly values: KeyValueStore) {}

  /** Keep one refusal of run `runId`; a failure to keep it is reported, never in place of the refusal. */
  async record(runId: string, refused: RefusedDecision): Promise<void> {
    const n = await this.values.add(`koagent.http.refusals:${runId}`, 1, { ttlMs: TTL_MS });
    if (n <= KEPT) await this.values.set(`koagent.http.refusal:${runId}:${n}`, refused, { ttlMs: TTL_MS });
  }

  /** The refusals kept of run `runId`, oldest first. */
  async of(runId: string): Promise<RefusedDecision[]> {
    const count = Number((await this.values.get(`koagent.http.refusals:${runId}`)) ?? 0);
    const kept = await Promise.all(Array.from({ length: Math.min(count, KEPT) }, (_, i) => this.values.get(`koagent.http.refusal:${runId}:${i + 1}`)));
    return kept.filter((r): r is RefusedDecision => r !== undefined && r !== null);
  }
}

/**
 * The decisions to resume `state` with, each on the record as given by `identity` through the
 * API, or the refusal of them all: the first decision that does not fit the run as it is now
 * refuses the request (and is recorded); nothing is resumed.
 */
export async function bindDecisions(state: RunState, sent: Record<string, SentDecision>, identity: Identity, agent: Agent<any, any> | undefined, refusals: Refusals, cancelled: boolean): Promise<Record<string, ApprovalDecision>> {
  const refuse = async (toolCallId: string, decision: SentDecision, reason: RefusalReason, message: string): Promise<never> => {
    await refusals.record(state.runId, { toolCallId, approved: decision.approved, reason, message, actor: identity.actor, surface: identity.surface, segment: state.segment, status: state.status, at: new Date().toISOString() });
    throw new HttpError(409, message, { refused: reason, toolCallId });
  };
  const decisions: Record<string, ApprovalDecision> = {};
  for (const [toolCallId, decision] of Object.entries(sent)) {
    if (cancelled) await refuse(toolCallId, decision, 'cancelled', `run ${state.runId} was cancelled: its approvals are not answered any more`);
    if (state.status !== 'suspended') await refuse(toolCallId, decision, 'not_suspended', `run ${state.runId} is ${state.status}, not waiting for approval: the decision is stale (someone answered it already, or the page is out of date)`);
    const pending = state.pendingApprovals.find((p) => p.toolCallId === toolCallId);
    if (pending === undefined) await refuse(toolCallId, decision, 'not_pending', `run ${state.runId} has no pending call ${toolCallId} (pending: ${state.pendingApprovals.map((p) => p.toolCallId).join(', ')})`);
    if (decision.digest !== approvalDigest(state.runId, state.segment, pending!)) {
      await refuse(toolCallId, decision, 'digest', `the decision on ${toolCallId} was given for other arguments or an earlier state of run ${state.runId} (its digest does not match the call as it waits now); read the run again and decide on what it shows`);
    }
    decisions[toolCallId] = { approved: decision.approved, ...(decision.reason !== undefined ? { reason: decision.reason } : {}), ...(decision.args !== undefined ? { args: editedArgs(pending!, decision.args, agent) } : {}), actor: identity.actor, surface: identity.surface };
  }
  const missing = state.pendingApprovals.filter((p) => decisions[p.toolCallId] === undefined).map((p) => p.toolCallId);
  if (missing.length > 0) throw new HttpError(422, `answer every pending call of run ${state.runId} in one request: ${missing.join(', ')} ${missing.length > 1 ? 'have' : 'has'} no decision`, { missing });
  return decisions;
}

/** Edited arguments, checked against the tool's schema when the handler has the agent. */
function editedArgs(pending: PendingApproval, args: unknown, agent: Agent<any, any> | undefined): unknown {
  if ((pending.path?.length ?? 0) > 0) throw new HttpError(422, `${pending.toolName} is a call of sub-agent ${pending.path!.join(' › ')}: its arguments cannot be edited; approve or deny it as it is`);
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new HttpError(422, `the edited arguments of ${pending.toolCallId} must be a JSON object of ${pending.toolName}'s arguments`);
  const tool = agent?.tools.get(pending.toolName);
  const issues = tool === undefined ? [] : argumentIssues(tool, args);
  if (issues.length > 0) throw new HttpError(422, `the edited arguments of ${pending.toolCallId} do not fit ${pending.toolName}'s schema: ${issues.join('; ')}`, { issues });
  return args;
}
