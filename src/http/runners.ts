// Who runs what the handler starts: the handler itself (its agents, in this process) or the
// workers (through their client's queue). Either way a run goes on when the client that started
// it goes away — only a cancel stops it, wherever it runs: this process aborts its own runs at
// once, and finds cancels sent to another process sharing the store in the store's key-values.
import type { Agent } from '../agent/agent.js';
import type { Logger } from '../core/vocabulary/contexts.js';
import { describe, KoagentError } from '../core/vocabulary/errors.js';
import type { AgentEvent } from '../core/vocabulary/events.js';
import type { KeyValueStore } from '../stores/key-values.js';
import type { RunInput } from '../core/vocabulary/messages.js';
import { newRunId, type ApprovalDecision, type RunState } from '../core/vocabulary/state.js';
import type { EventLogStore } from '../stores/run-store.js';
import { HttpError, type Identity } from './identity.js';
import type { HttpQueue } from './options.js';

/** What a run is started with. */
export interface StartRequest {
  agent: Agent<any, any>;
  input: RunInput;
  /** The session as the store keeps it (tenant-scoped). */
  sessionId: string;
  /** A run with a fresh transcript (`run`), or the session's next turn (`send`). */
  fresh: boolean;
  identity: Identity;
  context: unknown;
}

/** Starts, resumes and cancels runs: in this process, or on the workers. */
export interface Runner {
  /** Start a run; resolves with its id once the store holds it (or, on the workers, the queue). */
  start(request: StartRequest): Promise<string>;
  /** Resume `state` (as it was checked) with `decisions`; resolves once the resume is claimed or queued. */
  resume(agent: Agent<any, any> | undefined, state: RunState, decisions: Record<string, ApprovalDecision>, context: unknown): Promise<void>;
  /** Stop the run wherever it runs; a suspended one is never resumed. */
  cancel(runId: string, identity: Identity): Promise<void>;
  /** Whether the run was cancelled. */
  cancelled(runId: string): Promise<boolean>;
  /** Let go of what the runner holds; runs go on (their segments end as they will). */
  close(): Promise<void>;
}

const CANCEL_TTL_MS = 7 * 24 * 3600_000;
const cancelKey = (runId: string) => `koagent.http.cancel:${runId}`;

/** An error of starting or resuming, as the client reads it: refusals of the run itself are 409, bad input 400. */
export function startError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (KoagentError.is(error)) {
    const status = error.code === 'session_busy' || error.code === 'invalid_resume' ? 409 : error.code === 'store_error' ? 503 : 500;
    return new HttpError(status, error.message, { code: error.code });
  }
  if (error instanceof TypeError) return new HttpError(400, error.message);
  return new HttpError(500, describe(error));
}

/** The handler's own runs, in this process. */
export class LocalRunner implements Runner {
  /** The segments running here, by run, each with the controller a cancel aborts. */
  readonly #running = new Map<string, AbortController>();
  readonly #segments = new Set<Promise<void>>();
  #poll: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly store: EventLogStore, private readonly flags: KeyValueStore, private readonly pollMs: number, private readonly logger: Logger) {}

  start({ agent, input, sessionId, fresh, identity, context }: StartRequest): Promise<string> {
    const runId = newRunId();
    const given = { runId, sessionId, context, metadata: { http: { actor: identity.actor, tenant: identity.tenant } } };
    return this.#drive(runId, (options) => (fresh ? agent.run(input, { ...options, ...given }) : agent.send(input, { ...options, ...given }))).then(() => runId);
  }

  async resume(agent: Agent<any, any> | undefined, state: RunState, decisions: Record<string, ApprovalDecision>, context: unknown): Promise<void> {
    if (agent === undefined) throw new HttpError(409, `run ${state.runId} belongs to agent "${state.agentName}", which this handler does not serve`);
    // The state as it was checked: the store's claim refuses it if the run moved past its segment meanwhile.
    await this.#drive(state.runId, (options) => agent.resume(state, decisions, { ...options, context }));
  }

  /**
   * Run one streamed segment to its end, here; resolves once it began (its run is in the store),
   * rejects with what stopped it before that.
   */
  #drive(runId: string, call: (options: { stream: true; store: EventLogStore; signal: AbortSignal; onEvent: (event: AgentEvent) => void }) => AsyncIterable<AgentEvent> & { result: Promise<unknown> }): Promise<void> {
    const controller = new AbortController();
    let began!: () => void;
    let failed!: (error: unknown) => void;
    const started = new Promise<void>((resolve, reject) => ((began = resolve), (failed = reject)));
    const onEvent = (event: AgentEvent) => {
      if (event.type === 'run.start' && event.agentPath === undefined) began();
    };
    let stream: AsyncIterable<AgentEvent> & { result: Promise<unknown> };
    try {
      stream = call({ stream: true, store: this.store, signal: controller.signal, onEvent });
    } catch (error) {
      return Promise.reject(error);
    }
    this.#running.set(runId, controller);
    this.#watchCancels();
    const segment = (async () => {
      try {
        // Read to the end (the events go to the run's log; readers follow it there), whoever listens.
        for await (const _ of stream);
        await stream.result;
      } catch (error) {
        failed(error);
      } finally {
        began();
        if (this.#running.get(runId) === controller) this.#running.delete(runId);
      }
    })();
    this.#segments.add(segment);
    void segment.finally(() => this.#segments.delete(segment));
    return started;
  }

  async cancel(runId: string, identity: Identity): Promise<void> {
    await this.flags.set(cancelKey(runId), { by: identity.actor, at: new Date().toISOString() }, { ttlMs: CANCEL_TTL_MS });
    this.#running.get(runId)?.abort(new KoagentError('timeout', `the run was cancelled through the HTTP API by ${identity.actor.id}`));
  }

  async cancelled(runId: string): Promise<boolean> {
    return (await this.flags.get(cancelKey(runId))) !== undefined;
  }

  /** While runs go on here, look for cancels another process wrote for them. */
  #watchCancels(): void {
    if (this.#poll !== undefined) return;
    this.#poll = setInterval(() => {
      if (this.#running.size === 0) {
        clearInterval(this.#poll);
        this.#poll = undefined;
        return;
      }
      for (const [runId, controller] of this.#running) {
        this.cancelled(runId).then(
          (yes) => yes && controller.abort(new KoagentError('timeout', 'the run was cancelled through the HTTP API (in another process)')),
          (error: unknown) => this.logger.warn(`koagent http: looking for a cancel of run ${runId} failed (${describe(error)}); trying again`),
        );
      }
    }, this.pollMs);
    this.#poll.unref?.();
  }

  async close(): Promise<void> {
    clearInterval(this.#poll);
    this.#poll = undefined;
    await Promise.allSettled([...this.#segments]);
  }
}

/** Runs on the workers, through their client. */
export class QueueRunner implements Runner {
  constructor(private readonly client: HttpQueue) {}

  async start({ agent, input, sessionId, identity, context }: StartRequest): Promise<string> {
    // A fresh run on the workers is the first turn of a new session: the same transcript.
    return this.client.start(agent.name, input, { sessionId, tenant: identity.tenant, stream: true, ...(context !== undefined ? { context } : {}), metadata: { http: { actor: identity.actor, tenant: identity.tenant } } });
  }

  async resume(_agent: Agent<any, any> | undefined, state: RunState, decisions: Record<string, ApprovalDecision>): Promise<void> {
    try {
      await this.client.answer(state.runId, decisions);
    } catch (error) {
      // The client refuses an answer to a run that is not waiting (any more): a stale decision.
      throw error instanceof TypeError ? new HttpError(409, error.message, { refused: 'answered' }) : error;
    }
  }

  async cancel(runId: string): Promise<void> {
    await this.client.cancel(runId);
  }

  async cancelled(runId: string): Promise<boolean> {
    return (await this.client.status(runId))?.status === 'cancelled';
  }

  async close(): Promise<void> {}
}
