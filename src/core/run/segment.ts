import type { InterruptPolicy, Logger, ModelContext, RunContext, RunVariables, SubagentInfo, ToolContext } from '../vocabulary/contexts.js';
import type { AgentEvent, EmittedEvent, EventListener, PermissionListener, PermissionRecord } from '../vocabulary/events.js';
import { failureRecord, runFailure } from '../vocabulary/errors.js';
import { copyJson } from '../vocabulary/json.js';
import { lastAssistantText, type Message } from '../vocabulary/messages.js';
import type { NamedMiddleware } from '../vocabulary/middleware.js';
import type { GenerateOptions, GenerateResult, ModelProvider, ToolSpec } from '../vocabulary/model.js';
import type { ToolOutcome } from '../vocabulary/outcome.js';
import type { RunResult } from '../vocabulary/result.js';
import type { EndReason, RunState, StopCondition, StopReason } from '../vocabulary/state.js';
import type { StateObserver } from '../state/state-observer.js';
import { StateWriter } from '../state/state-writer.js';
import { stateView, transcriptView, type EndingFields } from '../state/transcript-view.js';
import type { ArgumentBounds } from './arguments.js';
import type { ToolExceptionPolicy } from '../vocabulary/tool-exception.js';

/** One provider call inside the model stack (a turn's, or a side call's): the `provider` stack's context. */
export interface ProviderCall {
  readonly segment: Segment;
  readonly provider: ModelProvider;
  readonly request: GenerateOptions;
  readonly purpose: string;
  /** The turn's model context; undefined for a side call (`ctx.generate`). */
  readonly turn: ModelContext | undefined;
}

/**
 * The composed stacks of one agent in one mode: the three hook points, and the provider calls
 * inside the model stack (koagent's own layers only: the features of that mode).
 */
export interface Stacks {
  run(ctx: RunContext): Promise<RunResult>;
  model(ctx: ModelContext): Promise<GenerateResult>;
  tool(ctx: ToolContext): Promise<ToolOutcome>;
  /** A call a human denied: settled by the approval step alone, inside the features' layers (spans, the layer trace). */
  denied(ctx: ToolContext): Promise<ToolOutcome>;
  provider(call: ProviderCall): Promise<GenerateResult>;
}

/** What the core needs of its agent, built once by the agent's build step. */
export interface AgentCore {
  readonly id: string;
  readonly name: string;
  /** The agent's model: every turn, and side calls that name no provider. */
  readonly provider: ModelProvider;
  readonly toolSpecs: readonly ToolSpec[];
  readonly modelSettings: Readonly<Record<string, unknown>>;
  readonly toolConcurrency: number;
  /** How deep and large a model's arguments for one call may be. */
  readonly argumentBounds: ArgumentBounds;
  readonly stopWhen: readonly StopCondition[];
  readonly onToolException: ToolExceptionPolicy;
  /** What a call of this tool found `running` (interrupted) does when the run continues. */
  interruptPolicy(toolName: string): InterruptPolicy;
  readonly logger: Logger;
  /** The user layers of this agent, outermost first (a parent agent's inherited ones included). */
  readonly layers: readonly NamedMiddleware[];
  /**
   * The stacks of a segment's mode. A mode is opaque to the core: whoever builds the agent
   * gives it its meaning (which features are layers of those stacks), and picks it per segment.
   */
  stacks(mode: number): Stacks;
}

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
}

/** How a segment ends when it does not fail: what `Segment.close` writes to the state. */
interface SegmentEnd {
  status: 'completed' | 'suspended';
  stopReason: StopReason;
  output: unknown;
}

/** How a segment ends as far as it is decided: an end, or an error on its way out of the run stack. */
type Ending = SegmentEnd | { status: 'failed'; error: NonNullable<RunState['error']>; thrown: unknown };

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

/** Call `abort` with `outer`'s reason when `outer` aborts; returns the function that stops listening. */
export function linkSignal(outer: AbortSignal | undefined, abort: (reason: unknown) => void): () => void {
  if (outer === undefined) return () => undefined;
  if (outer.aborted) {
    abort(outer.reason);
    return () => undefined;
  }
  const onAbort = () => abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  return () => outer.removeEventListener('abort', onAbort);
}

/**
 * One segment of a run in progress: the state it advances (through its writer), its
 * cancellation, the stacks of its mode, and where its events and permission records go.
 *
 * @example const segment = new Segment(agent, state, options); const result = await segment.stacks.run(ctx);
 */
export class Segment {
  readonly writer: StateWriter;
  /**
   * What the contexts show of the state: the transcript (every change through it is the
   * writer's), and the state, read-only (its transcript too).
   */
  readonly views: { readonly transcript: Message[]; readonly state: RunState };
  readonly #controller = new AbortController();
  readonly base: ContextBase;
  readonly stacks: Stacks;
  readonly listening: boolean;
  #aborted = false;
  /** Set by a layer that ended the run (`ctx.end`, a hook's `{ end }`). */
  ended: { output: unknown; reason: EndReason } | undefined;
  /**
   * How the segment ends, as last decided since something inside the run stack last ran: by the
   * terminal (the loop, or `ctx.end`), by a run layer that answered without it, or by an error
   * on its way out. Undefined while that is open.
   */
  #ending: Ending | undefined;
  /** The output a run layer gave the state for that end instead of the end's own (`keepOutput`). */
  #kept: { output: unknown } | undefined;
  /** The end is written (`close`, `fail`): the state itself says how the segment ended. */
  #written = false;
  readonly #unlink: () => void;
  #runVar: RunVariables | undefined;

  constructor(readonly agent: AgentCore, readonly state: RunState, readonly options: SegmentOptions) {
    this.writer = new StateWriter(state, options.observer);
    this.views = { transcript: transcriptView(this.writer, false), state: stateView(state, transcriptView(this.writer, true), () => this.#shown()) };
    this.#unlink = linkSignal(options.signal, (reason) => this.abort(reason));
    this.listening = options.listeners.length > 0;
    this.stacks = agent.stacks(options.mode);
    const base: ContextBase = {
      context: options.context,
      agentId: agent.id,
      agentName: agent.name,
      runId: state.runId,
      sessionId: state.sessionId,
      metadata: options.metadata,
      signal: this.#controller.signal,
    };
    // `emit` and `subagent` exist only when they apply: hooks test for them with `in` or `?.`.
    if (options.subagent !== undefined) (base as { subagent?: SubagentInfo }).subagent = options.subagent;
    if (this.listening) (base as { emit?: unknown }).emit = (event: EmittedEvent) => this.publish(event);
    this.base = base;
  }

  /** What layers keep for the rest of this segment (`ctx.runVar`), made when first asked for. */
  get runVar(): RunVariables {
    return (this.#runVar ??= Object.create(null) as RunVariables);
  }

  /** The segment was cancelled (`abort`): the loop reads this on every step. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** The segment's mode, as it was given (a nested run may be given its parent's). */
  get mode(): number {
    return this.options.mode;
  }

  /** Send an event to every listener. One that throws or rejects is logged, and the run goes on. */
  publish(event: EmittedEvent | Omit<AgentEvent, 'runId' | 'at'>): void {
    if (!this.listening) return;
    const full = { ...event, runId: this.state.runId, at: Date.now() } as AgentEvent;
    if (this.options.subagent !== undefined && full.agentPath === undefined) full.agentPath = this.options.subagent.path;
    for (const listener of this.options.listeners) this.#notify(() => listener(full), `an event listener threw on ${full.type}`);
  }

  /** Tell the permission listeners and the event listeners about one decision. */
  recordPermission(call: Pick<PermissionRecord, 'toolName' | 'toolCallId' | 'args'>, fields: Pick<PermissionRecord, 'decision' | 'source' | 'rule' | 'hook' | 'reason'>): void {
    const listeners = this.options.permissionListeners;
    if (listeners.length === 0 && !this.listening) return;
    // A copy: a listener must not be able to change the arguments of the call it is told about.
    const record: PermissionRecord = { toolName: call.toolName, toolCallId: call.toolCallId, args: copyJson(call.args), ...fields };
    if (this.options.subagent !== undefined) record.agentPath = this.options.subagent.path;
    for (const listener of listeners) this.#notify(() => listener(record), 'onPermissionDecision threw');
    this.publish({ type: 'permission.decision', ...record });
  }

  #notify(call: () => unknown, what: string): void {
    try {
      const returned = call();
      // An async listener's rejection is logged too: unhandled, it would end the process.
      if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
        Promise.resolve(returned).catch((error: unknown) => this.agent.logger.warn(`koagent: ${what}; the run goes on`, error));
      }
    } catch (error) {
      this.agent.logger.warn(`koagent: ${what}; the run goes on`, error);
    }
  }

  /** Why the segment must stop before the next model turn, if it must: cancelled, or a stop condition. */
  stopReason(): StopReason | undefined {
    if (this.aborted) return 'aborted';
    return firstStop(this.agent.stopWhen, this.state) ?? (this.options.stopWhen === undefined ? undefined : firstStop(this.options.stopWhen, this.state));
  }

  /**
   * Cancel the segment: its signal aborts with `reason`, so providers and tools still running
   * stop, and the loop stops at its next check. The caller's signal, a failure of the segment
   * and a run store that took the run away all come here: the one place the flag and the signal change.
   */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#controller.abort(reason);
  }

  /** A layer ends the run; the loop stops at its next check, or a run layer returns `finish` itself. */
  end(output: unknown, reason: EndReason): void {
    this.ended = { output, reason };
  }

  /** The segment starts: the state counts it and says the run is running. Returns its number. */
  begin(): number {
    return this.writer.beginSegment();
  }

  /**
   * The run stack's terminal stops here (the loop, or `ctx.end`): how the segment ends, and
   * the result. Nothing is written yet — a run layer may still send the model back (call
   * `next()` again), which ends it anew; `close` writes the end the segment has at last.
   * Meanwhile the layers on the way out read this end in `ctx.state` (see `#shown`).
   */
  finish(stopReason: StopReason): RunResult {
    const { state } = this;
    const status = stopReason === 'approval' ? 'suspended' : 'completed';
    const text = lastAssistantText(state.messages);
    const output = stopReason === 'hook_end' ? this.ended?.output : text;
    // A layer's end says its own reason (`limit:cost`); the loop only knows a layer ended it.
    if (stopReason === 'hook_end' && this.ended !== undefined) stopReason = this.ended.reason;
    this.#ending = { status, stopReason, output };
    this.#kept = undefined;
    return {
      runId: state.runId,
      sessionId: state.sessionId,
      status,
      stopReason,
      text,
      output,
      messages: state.messages,
      usage: state.usage,
      pendingApprovals: state.pendingApprovals,
      state,
    };
  }

  /**
   * A run layer gives the state another output for this end than the end's own (its last
   * text, or the output a layer ended the run with): JSON the state keeps, while the result
   * it returns may carry something else (a value the state could not hold as it is).
   */
  keepOutput(output: unknown): void {
    this.#kept = { output };
  }

  /**
   * Something inside the run stack runs (a layer's `next()`, the loop): how the segment ends is
   * open again until the terminal stops, a layer answers, or an error comes out.
   */
  goOn(): void {
    this.#ending = undefined;
    this.#kept = undefined;
  }

  /**
   * A run layer returned `result`. When nothing inside decided an end since it called `next()`
   * (it answered without the loop, or it recovered from a failure), the result's end is the
   * segment's, as `close` would write it.
   */
  answered(result: RunResult): void {
    if (this.#ending !== undefined && this.#ending.status !== 'failed') return;
    // A result that is no RunResult fails the run when the stack checks it.
    if (result?.status !== 'completed' && result?.status !== 'suspended') return;
    this.#ending = { status: result.status, stopReason: result.stopReason, output: this.state.output };
  }

  /**
   * `error` leaves a part of the run stack (`thrownBy`: the layer it came out of): unless a layer
   * outside recovers, the segment fails with it, and `ctx.state` says so meanwhile — as the state
   * will say once the segment is over. An error already on its way out keeps its first account.
   */
  failing(error: unknown, thrownBy?: string): void {
    const ending = this.#ending;
    if (ending?.status === 'failed' && ending.thrown === error) return;
    this.#ending = { status: 'failed', error: failureRecord(runFailure(error, this.state, thrownBy)), thrown: error };
  }

  /**
   * What `ctx.state` shows of how the segment ends, until the segment writes it: the decided
   * end (with the output a run layer kept for it), or the failure on its way out.
   */
  #shown(): EndingFields | undefined {
    const ending = this.#ending;
    if (this.#written || ending === undefined) return undefined;
    if (ending.status === 'failed') return { status: 'failed', stopReason: undefined, output: this.state.output, error: ending.error };
    return { status: ending.status, stopReason: ending.stopReason, output: this.#kept !== undefined ? this.#kept.output : ending.output, error: undefined };
  }

  /**
   * The run stack returned `result`: the segment is over without failing, and its end goes
   * into the state. Called once per segment, by whoever ran its run stack: the one place a
   * run's status and stop reason are written when a segment ends. The end is the one decided
   * last (what the run layers saw in `ctx.state` on their way out); when none was, the result's.
   */
  close(result: RunResult): void {
    const end = this.#ending?.status === 'failed' ? undefined : this.#ending;
    const status = end?.status ?? result.status;
    const stopReason = end?.stopReason ?? result.stopReason;
    const output = this.#kept !== undefined ? this.#kept.output : end !== undefined ? end.output : this.state.output;
    this.#written = true;
    this.writer.end(status, stopReason, output);
  }

  /**
   * The segment failed with `error`: the state says so, nothing writes to it after, and
   * whatever of it still runs (an orphaned `next()`) is cancelled.
   */
  fail(error: { code: string; message: string; layer?: string }, cause: unknown): void {
    this.#written = true;
    this.writer.fail(error);
    this.abort(cause);
  }

  /** The segment is over: stop listening to the caller's signal. */
  dispose(): void {
    this.#unlink();
  }
}

