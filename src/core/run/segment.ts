import type { RunVariables, SubagentInfo } from '../vocabulary/contexts.js';
import type { EmittedEvent, EventListener, PermissionListener } from '../vocabulary/events.js';
import type { Message } from '../vocabulary/messages.js';
import type { RunState, StopCondition, StopReason } from '../vocabulary/state.js';
import type { StateObserver } from '../state/state-observer.js';
import { StateWriter } from '../state/state-writer.js';
import { stateView, transcriptView } from '../state/transcript-view.js';
import type { AgentCore, Stacks } from './agent-core.js';
import { Cancellation } from './cancellation.js';
import { EventBus } from './event-bus.js';
import { SegmentEnd } from './segment-end.js';

/** How one segment runs: who listens, where it sits (a sub-agent), its mode. */
export interface SegmentOptions {
  metadata: Record<string, unknown>;
  /** The run's context object (`ctx.context`): the caller's, never stored. */
  context: unknown;
  signal?: AbortSignal;
  listeners: readonly EventListener[];
  permissionListeners: readonly PermissionListener[];
  subagent?: SubagentInfo;
  /** Which stacks the segment runs on (see `AgentCore.stacks`): the core only passes it on. */
  mode: number;
  /** Stop conditions of this segment only (the call's `stopWhen`), checked after the agent's. */
  stopWhen?: readonly StopCondition[];
  /** Told what each change to the state touched, and when a step ends (a run kept outside the process). */
  observer?: StateObserver;
  /** The segment's variables to begin with (`ctx.runVar`): what its caller hands its layers. */
  runVar?: RunVariables;
}

/** The fields every context of a segment shares, built once per segment. */
export interface ContextBase {
  readonly context: unknown;
  readonly agentId: string;
  readonly agentName: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly metadata: Record<string, unknown>;
  readonly signal: AbortSignal;
  readonly subagent?: SubagentInfo;
  readonly emit?: <T extends string>(event: EmittedEvent<T>) => void;
}

/** The stop reason of the first condition that holds, if one does. */
function firstStop(conditions: readonly StopCondition[], state: RunState): StopReason | undefined {
  for (const condition of conditions) {
    const verdict = condition(state);
    if (verdict === true) return 'stop_when';
    if (typeof verdict === 'string') return verdict;
  }
  return undefined;
}

/**
 * One segment of a run in progress, the parts its contexts share: the state it advances
 * (through its writer), its cancellation, its events, how it ends, the stacks of its mode, and
 * its variables. Each part is a piece of its own; the segment only puts them together.
 *
 * @example const segment = new Segment(agent, state, options); const result = await segment.stacks.run(ctx);
 */
export class Segment {
  readonly writer: StateWriter;
  /**
   * What the contexts show of the state: the transcript (every change through it is the
   * writer's), and the state, read-only (its transcript too, and the end as decided).
   */
  readonly views: { readonly transcript: Message[]; readonly state: RunState };
  readonly cancel: Cancellation;
  readonly bus: EventBus;
  readonly end: SegmentEnd;
  readonly base: ContextBase;
  readonly stacks: Stacks;
  #runVar: RunVariables | undefined;

  constructor(readonly agent: AgentCore, readonly state: RunState, readonly options: SegmentOptions) {
    this.writer = new StateWriter(state, options.observer);
    this.#runVar = options.runVar;
    this.end = new SegmentEnd(state, () => this.runVar);
    this.views = { transcript: transcriptView(this.writer, false), state: stateView(state, transcriptView(this.writer, true), () => this.end.shown()) };
    this.cancel = new Cancellation(options.signal);
    this.bus = new EventBus(state.runId, options.listeners, options.permissionListeners, options.subagent?.path, agent.logger);
    this.stacks = agent.stacks(options.mode);
    const base: ContextBase = {
      context: options.context,
      agentId: agent.id,
      agentName: agent.name,
      runId: state.runId,
      sessionId: state.sessionId,
      metadata: options.metadata,
      signal: this.cancel.signal,
    };
    // `emit` and `subagent` exist only when they apply: hooks test for them with `in` or `?.`.
    if (options.subagent !== undefined) (base as { subagent?: SubagentInfo }).subagent = options.subagent;
    if (this.bus.listening) (base as { emit?: unknown }).emit = (event: EmittedEvent) => this.bus.publish(event);
    this.base = base;
  }

  /** What layers keep for the rest of this segment (`ctx.runVar`), made when first asked for. */
  get runVar(): RunVariables {
    return (this.#runVar ??= Object.create(null) as RunVariables);
  }

  /** Why the segment must stop before the next model turn, if it must: cancelled, or a stop condition. */
  stopReason(): StopReason | undefined {
    if (this.cancel.aborted) return 'aborted';
    return firstStop(this.agent.stopWhen, this.state) ?? (this.options.stopWhen === undefined ? undefined : firstStop(this.options.stopWhen, this.state));
  }

  /** The segment starts: the state counts it and says the run is running. Returns its number. */
  begin(): number {
    return this.writer.beginSegment();
  }

  /**
   * The run stack returned `result`: the segment is over without failing, and its end goes into
   * the state — the one place a run's status and stop reason are written when a segment ends.
   */
  close(result: Parameters<SegmentEnd['closing']>[0]): void {
    const { status, stopReason, output } = this.end.closing(result);
    this.writer.end(status, stopReason, output);
  }

  /**
   * The segment failed with `error`: the state says so, nothing writes to it after, and
   * whatever of it still runs (an orphaned `next()`) is cancelled.
   */
  fail(error: { code: string; message: string; layer?: string }, cause: unknown): void {
    this.end.failed();
    this.writer.fail(error);
    this.cancel.abort(cause);
  }
}
