// Approvals from the page: the pending calls of every suspended run, and the answers to them.
// An answer resumes the run through the studio's store with the agent the studio was given, exactly
// once: the studio lets one resume of a run's segment go ahead at a time, and the store's claim
// refuses a second resume of the segment from any process. Given the workers' queue, the studio
// sends the answer there instead, and a worker runs the next segment.
import type { Agent } from '../agent/agent.js';
import { ownValue, setOwn, type ApprovalDecision, type DecisionActor, type PendingApproval, type RunState } from '../api.js';
import { checkDecision } from '../core/vocabulary/decisions.js';
import type { RunStore } from '../stores/run-store.js';
import { argumentIssues } from '../tools/argument-issues.js';

/**
 * One pending approval as the page lists it: the call and the arguments the layers produced,
 * with the tool's JSON schema when the studio has the agent.
 *
 * @example const pending: PendingRow[] = await (await fetch(`${url}api/approvals`, { headers })).json();
 */
export interface PendingRow extends PendingApproval {
  runId: string;
  agentName: string;
  sessionId: string;
  /** The tool's parameters (JSON schema), when the studio was started with the agent. */
  schema?: Record<string, unknown>;
  /** Whether the studio can resume this run (it has an agent of that name). */
  canResume: boolean;
  /** Decisions already given on this run's other approvals, waiting for the rest. */
  decided: string[];
}

/** What the page asked for one pending call. */
export interface DecisionRequest {
  approved: boolean;
  reason?: string;
  /** Approve with these arguments instead (checked against the tool's schema). */
  args?: unknown;
  /** Who decides, kept with the decision (a name, or `{ id, name? }`); the decision is recorded as given through the studio. */
  actor?: string | DecisionActor;
}

/**
 * Where the studio sends answers instead of resuming runs itself: the workers' queue
 * (`createClient` of `koagent/worker` is one), so a free worker runs the next segment.
 *
 * @example await startStudio({ store: client.store, queue: client });
 *
 * @inline
 */
export interface StudioQueue {
  /** Queue the run's resume with these decisions; throws (a TypeError) when the run was answered already. */
  answer(runId: string, decisions: Record<string, ApprovalDecision>): Promise<void>;
}

/** An answer to the page: an HTTP status and a JSON body. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const NO_AGENTS = 'the studio was started without agents, so it cannot resume runs; start it with --agents <module> (startStudio({ agents })) to approve from the page';

/**
 * The approvals the page shows and answers.
 *
 * @example const answer = await approvals.decide(runId, toolCallId, { approved: true });
 */
export class Approvals {
  readonly #store: RunStore;
  readonly #agents: ReadonlyMap<string, Agent<any, any>>;
  /** Decisions given on runs with several pending calls, until each call has one: by run, at its segment. */
  readonly #partial = new Map<string, { segment: number; decisions: Record<string, ApprovalDecision> }>();
  /** Runs whose resume this studio started and that have not left their segment yet. */
  readonly #resuming = new Set<string>();
  /** Resumes still running, so `close` can wait for them. */
  readonly #running = new Set<Promise<unknown>>();

  readonly #queue: StudioQueue | undefined;

  constructor(store: RunStore, agents: readonly Agent<any, any>[], queue?: StudioQueue) {
    this.#store = store;
    this.#agents = new Map(agents.map((agent) => [agent.name, agent]));
    this.#queue = queue;
  }

  /** Every pending approval of the suspended runs, the latest run first. */
  async list(): Promise<PendingRow[]> {
    const runs = await this.#store.listRuns({ status: 'suspended', limit: 500 });
    return runs.flatMap((run) => {
      const agent = this.#agents.get(run.agentName);
      const partial = this.#partial.get(run.runId);
      const decided = partial?.segment === run.segment ? Object.keys(partial.decisions) : [];
      return run.pendingApprovals.map((pending) => {
        const tool = (pending.path?.length ?? 0) === 0 ? agent?.tools.get(pending.toolName) : undefined;
        return { ...pending, runId: run.runId, agentName: run.agentName, sessionId: run.sessionId, ...(tool ? { schema: tool.spec.parameters } : {}), canResume: agent !== undefined || this.#queue !== undefined, decided };
      });
    });
  }

  /** Answer one pending call; the run resumes once each of its pending calls has an answer. */
  async decide(runId: string, toolCallId: string, request: DecisionRequest): Promise<Answer> {
    if (typeof request !== 'object' || request === null || typeof request.approved !== 'boolean') {
      return { status: 400, body: { error: 'send { approved: true | false, reason?: string, args?: object }' } };
    }
    const state = await this.#store.loadRun(runId);
    if (state === undefined) return { status: 404, body: { error: `there is no run ${runId} in the store` } };
    if (state.status !== 'suspended') return { status: 409, body: { error: `run ${runId} is ${state.status}: it has no approval to answer (someone answered it already, or it never waited)` } };
    const pending = state.pendingApprovals.find((p) => p.toolCallId === toolCallId);
    if (pending === undefined) return { status: 404, body: { error: `run ${runId} has no pending approval ${toolCallId}` } };
    const agent = this.#agents.get(state.agentName);
    if (agent === undefined && this.#queue === undefined) return { status: 409, body: { error: NO_AGENTS.replace('without agents', this.#agents.size === 0 ? 'without agents' : `without an agent named "${state.agentName}"`) } };
    const decision = this.#decision(agent, pending, request);
    if ('status' in decision) return decision;
    const key = `${runId}#${state.segment}`;
    if (this.#resuming.has(key)) return { status: 409, body: { error: `run ${runId} is being resumed already (another answer got there first)` } };
    const partial = this.#partial.get(runId);
    const decisions = partial?.segment === state.segment ? partial.decisions : {};
    setOwn(decisions, toolCallId, decision.decision);
    const waiting = state.pendingApprovals.filter((p) => ownValue(decisions, p.toolCallId) === undefined).map((p) => p.toolCallId);
    if (waiting.length > 0) {
      this.#partial.set(runId, { segment: state.segment, decisions });
      return { status: 202, body: { resumed: false, waitingFor: waiting, message: `answer the run's other pending calls too (${waiting.join(', ')}); it resumes when each has an answer` } };
    }
    this.#partial.delete(runId);
    if (this.#queue !== undefined) return this.#enqueue(this.#queue, state, decisions, key);
    return this.#resume(agent!, state, decisions, key);
  }

  /** Send the answer to the workers' queue, which lets one answer of a segment through. */
  async #enqueue(queue: StudioQueue, state: RunState, decisions: Record<string, ApprovalDecision>, key: string): Promise<Answer> {
    this.#resuming.add(key);
    try {
      await queue.answer(state.runId, decisions);
    } catch (error) {
      return { status: 409, body: { error: (error as Error)?.message ?? String(error) } };
    } finally {
      this.#resuming.delete(key);
    }
    return { status: 202, body: { resumed: true, queued: true, runId: state.runId, status: 'queued' } };
  }

  /**
   * The decision to give resume, on the record as given through the studio (by `actor`, when
   * the request names one), or why the request is refused (edited arguments that fail the
   * tool's schema, an actor that is none).
   */
  #decision(agent: Agent<any, any> | undefined, pending: PendingApproval, request: DecisionRequest): { decision: ApprovalDecision } | Answer {
    const made = this.#arguments(agent, pending, request);
    if ('status' in made) return made;
    const decision = { ...made.decision, surface: 'studio', ...(request.actor !== undefined ? { actor: request.actor } : {}) };
    try {
      checkDecision(pending.toolCallId, decision, (message) => new TypeError(message));
    } catch (error) {
      return { status: 400, body: { error: (error as Error).message } };
    }
    return { decision };
  }

  /** The decision's verdict, reason and arguments, or why the request is refused. */
  #arguments(agent: Agent<any, any> | undefined, pending: PendingApproval, request: DecisionRequest): { decision: Exclude<ApprovalDecision, boolean> } | Answer {
    const reason = typeof request.reason === 'string' && request.reason.trim() !== '' ? request.reason.trim() : undefined;
    if (!request.approved) return { decision: { approved: false, ...(reason ? { reason } : {}) } };
    // A reason given with an approval is kept on the record (the model reads only a denial's).
    if (request.args === undefined) return { decision: { approved: true, ...(reason ? { reason } : {}) } };
    if ((pending.path?.length ?? 0) > 0) return { status: 400, body: { error: `${pending.toolName} is a call of sub-agent ${pending.path!.join(' › ')}: its arguments cannot be edited here; approve or deny it as it is` } };
    if (agent === undefined) {
      // Answered through the queue without the agent: no schema to check against, only JSON.
      if (typeof request.args !== 'object' || request.args === null || Array.isArray(request.args)) return { status: 422, body: { error: `the edited arguments must be a JSON object of ${pending.toolName}'s arguments` } };
      return { decision: { approved: true, args: request.args, ...(reason ? { reason } : {}) } };
    }
    const tool = agent.tools.get(pending.toolName);
    if (tool === undefined) return { status: 409, body: { error: `agent "${agent.name}" has no tool ${pending.toolName} to check the arguments against` } };
    const issues = argumentIssues(tool, request.args);
    if (issues.length > 0) {
      return { status: 422, body: { error: `the edited arguments do not fit ${pending.toolName}'s schema: ${issues.join('; ')}`, issues } };
    }
    // The JSON the page sent, not zod's output: the call is approved as the human wrote it.
    return { decision: { approved: true, args: request.args, ...(reason ? { reason } : {}) } };
  }

  /** Resume the run; answer once the store shows its next segment claimed, or the resume was refused. */
  async #resume(agent: Agent<any, any>, state: RunState, decisions: Record<string, ApprovalDecision>, key: string): Promise<Answer> {
    this.#resuming.add(key);
    let settled: { error?: unknown } | undefined;
    // Through the store the studio shows, as `koagent runs approve` does: an agent made without a store of its own resumes too.
    const resume = agent.resume(state.runId, decisions, { store: this.#store }).then(
      () => (settled = {}),
      (error: unknown) => (settled = { error }),
    );
    this.#running.add(resume);
    void resume.finally(() => {
      this.#running.delete(resume);
      this.#resuming.delete(key);
    });
    // The run leaves its segment when the claim is written; a refused resume settles first.
    for (;;) {
      if (settled !== undefined) break;
      const now = await this.#store.loadRun(state.runId).catch(() => undefined);
      if (now !== undefined && now.segment > state.segment) break;
      await Promise.race([resume, new Promise((resolve) => setTimeout(resolve, 25))]);
    }
    const failed = settled?.error;
    const now = await this.#store.loadRun(state.runId).catch(() => undefined);
    if (failed !== undefined && (now === undefined || now.segment === state.segment)) {
      return { status: 409, body: { error: (failed as Error)?.message ?? String(failed) } };
    }
    return { status: 202, body: { resumed: true, runId: state.runId, status: now?.status ?? 'running' } };
  }

  /** Wait for the resumes this studio started. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#running]);
  }
}
