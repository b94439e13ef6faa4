// An agent's side of run stores: which store a call uses, and the agent object as a worker
// that holds leases. The agent's methods hand their store work to it.
import type { Logger } from '../core/vocabulary/contexts.js';
import type { Message } from '../core/vocabulary/messages.js';
import type { AgentIdentity, ApprovalDecision, RunState } from '../core/vocabulary/state.js';
import type { RunStore, RunSummary } from '../stores/run-store.js';
import { adoptRuns, type AdoptedRun, type AdoptFilter } from './adopt.js';
import { claimForResume, startRun, startSessionRun } from './claims.js';
import { workerId } from '../core/vocabulary/state.js';
import { storeCall, type DurableRun } from './durable-run.js';
import { leasedRuns, recoverRuns, type RecoverableRun, type RecoveredRun, type RecoveryPlan } from './recovery.js';

/**
 * An agent's side of run stores: which store a call uses, and the agent object as a worker that
 * holds leases (its `owner` name). The agent's methods hand their store work to it.
 */
export class AgentStore {
  #owner: string | undefined;

  /** This agent object's name as a worker, made when a store first needs it (a run without one never does). */
  get owner(): string {
    return (this.#owner ??= workerId());
  }

  constructor(private readonly store: RunStore | undefined, readonly identity: AgentIdentity, readonly logger: Logger) {}

  /** The store a call uses: its own, else the agent's; none for a sub-agent's run (its parent's call holds it). */
  for(request: { store?: RunStore; subagent?: unknown }): RunStore | undefined {
    return request.subagent !== undefined ? undefined : request.store ?? this.store;
  }

  /** The store a call that needs one uses, or a `TypeError` saying how to give one. */
  require(request: { store?: RunStore }, what: string): RunStore {
    const store = request.store ?? this.store;
    if (store === undefined) throw new TypeError(`${what} needs a run store: createAgent({ store }) with memoryStore(), sqliteStore() from koagent/sqlite or postgresStore() from koagent/postgres, or { store } in this call's options`);
    return store;
  }

  start(store: RunStore, state: RunState): Promise<DurableRun> {
    return startRun(store, { state, owner: this.owner }, this.logger);
  }

  startSession(store: RunStore, sessionId: string, opening: () => Message[], added: Message[], runId?: string): Promise<{ state: RunState; durable: DurableRun }> {
    return startSessionRun(store, sessionId, { identity: this.identity, owner: this.owner, logger: this.logger, opening, added, runId });
  }

  claim(store: RunStore, given: RunState | string, decisions: Record<string, ApprovalDecision>, refuse: (next: RunState) => string | undefined): Promise<{ state: RunState; durable: DurableRun }> {
    return claimForResume(store, given, decisions, this.identity, this.owner, this.logger, refuse);
  }

  recover(store: RunStore, limit: number | undefined, how: RecoveryPlan): Promise<RecoveredRun[]> {
    return recoverRuns(store, this.identity, this.owner, this.logger, limit, how);
  }

  /** Take over the stored runs of another version of this agent that `filter` names. */
  adopt(store: RunStore, filter: AdoptFilter, adopt: (state: RunState) => RunState): Promise<AdoptedRun[]> {
    return adoptRuns(store, this.identity, this.owner, this.logger, filter, adopt);
  }

  /** The running runs of this agent, each with the time `recover` may claim it. */
  recoverable(store: RunStore, limit: number | undefined): Promise<RecoverableRun[]> {
    return leasedRuns(store, this.identity.name, limit);
  }

  /** The suspended runs of this agent, each with its pending approvals. */
  pending(store: RunStore, limit: number | undefined): Promise<RunSummary[]> {
    return storeCall(() => store.listRuns({ agentName: this.identity.name, status: 'suspended', limit }), 'listing suspended runs');
  }
}

