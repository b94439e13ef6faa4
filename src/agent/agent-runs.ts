// Run administration: what an operator does to an agent's stored runs, apart from the agent's
// everyday methods (run, send, stream, resume). `agent.runs` is one of these.
import type { RunResult } from '../core/vocabulary/result.js';
import type { AgentIdentity, RunState } from '../core/vocabulary/state.js';
import { checkState } from '../core/state/state-schema.js';
import type { RunSummary } from '../stores/run-store.js';
import type { AgentStream } from '../features/streaming/agent-stream.js';
import type { OutputSpec } from '../features/structured-output.js';
import type { AgentStore } from '../durable/agent-store.js';
import type { RecoverableRun } from '../durable/recovery.js';
import { outputMissing, type CallRequests } from './call-requests.js';
import type { SegmentRequest } from './run-segment.js';
import { later, streamedCall, wantsStream } from './streamed-call.js';
import { checkAdoptOptions, checkListOptions, checkRecoverOptions, type AdoptedRun, type AdoptRunsOptions, type PendingApprovalsOptions, type RecoverBegun, type RecoveredRun, type RecoverOptions } from './durable-options.js';

/** What the agent lends its run administration: who it is, its stores, its requests, and how it continues a run. */
export interface RunsHost {
  identity: AgentIdentity;
  stored: AgentStore;
  requests: CallRequests;
  /** Continue a stored run's segment (nothing added to its transcript). */
  continue(state: RunState, request: SegmentRequest): Promise<RunResult<any>>;
}

/**
 * The administration of an agent's durable runs (`agent.runs`): finishing the runs whose worker
 * died, listing those waiting for a human or for a lease, and taking over the runs of another
 * version of the agent. Each reads and writes the agent's run store (or the `store` given).
 *
 * @example await agent.runs.recover(); for (const run of await agent.runs.pendingApprovals()) console.log(run.runId);
 */
export class AgentRuns<C = unknown> {
  readonly #host: RunsHost;

  constructor(host: RunsHost) {
    this.#host = host;
  }

  /**
   * Finish the runs of this agent whose worker died: each run that is `running` in the store
   * with an expired lease is claimed (exactly one worker gets it) and continued from its last
   * checkpoint, one after another, until none is left (or `limit` were). A call the ledger has
   * `done` never runs again; one that was `running` follows its tool's `onInterrupted` policy.
   * The run context is not stored: give it again (`context`, or `contextFor(state)` per run).
   * A run whose lease has not expired yet is not taken: `recoverable()` lists them with the time
   * they become claimable, and `{ wait: true }` waits for them. With `{ stream: true }`, it
   * returns an `AgentStream` of the runs it continues, whose `result` is the list. Each run it
   * took comes back with a `status`: `completed` or `suspended` with its `result`, `failed` with
   * its `error`.
   *
   * @example setInterval(() => agent.runs.recover({ contextFor: (state) => contextOf(state.sessionId) }).catch(console.error), 60_000);
   */
  recover(options: RecoverOptions<C> & { stream: true; output?: OutputSpec }): AgentStream<RecoveredRun[]>;
  recover(options?: RecoverOptions<C> & { stream?: false; output?: OutputSpec }): Promise<RecoveredRun[]>;
  recover(options: RecoverOptions<C> & { output?: OutputSpec } = {}): Promise<RecoveredRun[]> | AgentStream<RecoveredRun[]> {
    if (!wantsStream(options)) return later(() => this.#recover(this.#recoverBegun(options)));
    const begun = this.#recoverBegun(options);
    return streamedCall(begun.request, (request) => this.#recover({ ...begun, request }));
  }

  /** The checked options of a `recover` call, and its store: every misuse is refused before anything is claimed. */
  #recoverBegun(options: unknown): RecoverBegun<C> {
    const { limit, contextFor, wait, runId, ...given } = checkRecoverOptions(options);
    const store = this.#host.stored.require(given, 'agent.runs.recover()');
    // Checked before anything is claimed; with contextFor, each run's context as its run comes.
    const request = this.#host.requests.of(given, 'agent.runs.recover(options)', contextFor === undefined);
    return { store, limit, wait, runId, contextFor: contextFor as RecoverBegun<C>['contextFor'], request };
  }

  async #recover({ store, limit, wait, runId, contextFor, request }: RecoverBegun<C>): Promise<RecoveredRun[]> {
    const requestFor = async (state: RunState): Promise<SegmentRequest> => {
      if (contextFor === undefined) return request;
      const misfit = `agent.runs.recover(options): contextFor(state of run ${state.runId}): context does not fit the agent's contextSchema`;
      return { ...request, context: this.#host.requests.context(await contextFor(state), misfit) };
    };
    return this.#host.stored.recover(store, limit, {
      refuse: (state) => (outputMissing(state, request) === undefined ? undefined : `it was started with an output schema of its own; give it again: agent.resume('${state.runId}', {}, { output }), or agent.runs.recover({ output })`),
      run: async (state, durable) => this.#host.continue(state, { ...(await requestFor(state)), store, durable }),
      signal: request.signal,
      wait: wait === true,
      runId,
    });
  }

  /**
   * The runs of this agent that are `running` in the store, each with the time (by the store's
   * clock) its lease runs out: from then on `recover()` takes it, unless its worker renews the
   * lease first (it is alive). What to look at when `recover()` found nothing to do.
   *
   * @example for (const { runId, claimableAt } of await agent.runs.recoverable()) console.log(runId, 'claimable in', claimableAt - Date.now(), 'ms');
   */
  async recoverable(options: PendingApprovalsOptions = {}): Promise<RecoverableRun[]> {
    const { store: given, limit } = checkListOptions(options, 'agent.runs.recoverable(options)');
    return this.#host.stored.recoverable(this.#host.stored.require({ store: given }, 'agent.runs.recoverable()'), limit);
  }

  /**
   * The runs of this agent waiting for a human, from the store, each with its pending approvals:
   * answer them with `agent.resume(runId, decisions)`, in this process or another.
   *
   * @example for (const run of await agent.runs.pendingApprovals()) await agent.resume(run.runId, Object.fromEntries(run.pendingApprovals.map((p) => [p.toolCallId, true])));
   */
  async pendingApprovals(options: PendingApprovalsOptions = {}): Promise<RunSummary[]> {
    const { store: given, limit } = checkListOptions(options, 'agent.runs.pendingApprovals(options)');
    return this.#host.stored.pending(this.#host.stored.require({ store: given }, 'agent.runs.pendingApprovals()'), limit);
  }

  /**
   * Take over a state another agent (or another version of this one) wrote, on purpose: it is
   * checked whole, and comes back as a copy that belongs to this agent, so `resume` accepts it.
   * Its pending calls then run against this agent's tools, by name (a tool it lacks settles the
   * call as `not_found`). Use it to migrate runs after renaming an agent or changing its tools.
   * With a store, `resume` of the adopted state continues the stored run as this agent's.
   *
   * @example const state = await db.load(runId); await agent.resume(agent.runs.adoptState(state), decisions);
   */
  adoptState(state: RunState): RunState {
    const checked = checkState(state);
    const copy = structuredClone(checked);
    const { identity } = this.#host;
    copy.agentName = identity.name;
    copy.agentId = identity.id;
    copy.toolsFingerprint = identity.toolsFingerprint;
    return copy;
  }

  /**
   * `adoptState` for the stored runs of another version of this agent, many at once: after a
   * deploy that changed its tools (or its id, or — with `filter.agentName` — its name), each
   * suspended or failed run of the old version is claimed, made this agent's and given back: a
   * suspended one waits for its approvals, one that `recover` stored failed for belonging to the
   * old version is `running` again for the next `recover` to continue, other failed ones can be
   * retried with `resume`. Runs of this version are left alone.
   *
   * @example await agent.runs.recover(); await agent.runs.adopt(); await agent.runs.recover();
   */
  async adopt(options: AdoptRunsOptions = {}): Promise<AdoptedRun[]> {
    const { store: given, filter = {} } = checkAdoptOptions(options);
    return this.#host.stored.adopt(this.#host.stored.require({ store: given }, 'agent.runs.adopt()'), filter, (state) => this.adoptState(state));
  }
}
