// What the routes read and show: a run the asker may see (its tenant's; another's is 404, as one
// that does not exist, so ids of other tenants' runs tell nothing), and a run as JSON.
import type { Agent } from '../agent/agent.js';
import { lastAssistantText } from '../core/vocabulary/messages.js';
import type { PendingApproval, RunState } from '../core/vocabulary/state.js';
import type { EventLogStore, RunSummary } from '../stores/run-store.js';
import { approvalDigest, type Refusals } from './decisions.js';
import { HttpError, owns, sessionOwner, type Identity } from './identity.js';
import type { HttpQueue } from './options.js';
import type { Runner } from './runners.js';

/** A run as the asker may see it: stored, or (on the workers) still waiting in the queue for its first segment. */
export type OwnedRun = { state: RunState } | { queued: { status: string } };

/** What the routes share. */
export interface Parts {
  store: EventLogStore;
  agents: ReadonlyMap<string, Agent<any, any>>;
  client?: HttpQueue;
  runner: Runner;
  refusals: Refusals;
  heartbeatMs: number;
  context(identity: Identity, request: Request): unknown;
}

/** Run `runId` when `identity`'s tenant owns it; a 404 otherwise. */
export async function ownedRun(parts: Parts, runId: string, identity: Identity): Promise<OwnedRun> {
  const missing = () => new HttpError(404, `there is no run ${runId} (or it belongs to another tenant)`);
  const state = await parts.store.loadRun(runId);
  if (state !== undefined) {
    if (!owns(identity, state.sessionId)) throw missing();
    return { state };
  }
  // On the workers a run is in the queue before it is in the store: the queue knows its tenant.
  const queued = await parts.client?.status(runId);
  if (queued === undefined || queued.tenant !== identity.tenant) throw missing();
  return { queued: { status: queued.status } };
}

/** The agent a request names (`agent`), or the only one; a 404 naming those served otherwise. */
export function agentNamed(parts: Parts, name: unknown, fallback?: string): Agent<any, any> {
  const wanted = name ?? fallback ?? (parts.agents.size === 1 ? [...parts.agents.keys()][0] : undefined);
  const served = [...parts.agents.keys()].map((n) => JSON.stringify(n)).join(', ');
  if (wanted === undefined) throw new HttpError(400, `name the agent: { "agent": ${served.split(', ')[0]}, … } (this handler serves ${served})`);
  const agent = typeof wanted === 'string' ? parts.agents.get(wanted) : undefined;
  if (agent === undefined) throw new HttpError(404, `this handler serves no agent named ${JSON.stringify(wanted)}; it serves ${served}`);
  return agent;
}

/** A pending approval with the digest a decision on it must bring back. */
export function pendingView(runId: string, segment: number, pending: PendingApproval): PendingApproval & { digest: string } {
  return { ...pending, digest: approvalDigest(runId, segment, pending) };
}

/** A stored run as JSON: its status, output, pending approvals (with digests), decisions and refusals, and the offset of its last event. */
export async function runView(parts: Parts, state: RunState): Promise<Record<string, unknown>> {
  const [page, refused, cancelled] = await Promise.all([parts.store.readEvents(state.runId, { limit: 1 }), parts.refusals.of(state.runId), parts.runner.cancelled(state.runId)]);
  return {
    runId: state.runId,
    sessionId: sessionOwner(state.sessionId).sessionId,
    agent: state.agentName,
    status: state.status,
    ...(state.stopReason !== undefined ? { stopReason: state.stopReason } : {}),
    segment: state.segment,
    steps: state.steps,
    usage: state.usage,
    ...(state.status === 'completed' ? { output: state.output ?? null, text: lastAssistantText(state.messages) } : {}),
    ...(state.error !== undefined ? { error: state.error } : {}),
    pendingApprovals: state.pendingApprovals.map((p) => pendingView(state.runId, state.segment, p)),
    decisionLog: state.decisionLog ?? [],
    refusedDecisions: refused,
    cancelled,
    lastEvent: page.last,
    messages: state.messages,
  };
}

/** A run of a session's list. */
export function summaryView(run: RunSummary): Record<string, unknown> {
  return {
    runId: run.runId,
    agent: run.agentName,
    status: run.status,
    ...(run.stopReason !== undefined ? { stopReason: run.stopReason } : {}),
    segment: run.segment,
    steps: run.steps,
    pendingApprovals: run.pendingApprovals.map((p) => pendingView(run.runId, run.segment, p)),
    ...(run.error !== undefined ? { error: run.error } : {}),
    createdAt: new Date(run.createdAt).toISOString(),
    updatedAt: new Date(run.updatedAt).toISOString(),
  };
}
