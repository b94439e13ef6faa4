import type { BaseContext, SubagentInfo } from './context.js';
import type { AgentEvent, EmittedEvent, EventListener } from './events.js';
import type { GenerateResult, ModelProvider, TokenUsage, ToolSpec } from './model.js';
import { copyJson } from './json.js';
import type { NamedMiddleware, Stacks } from './stacks.js';
import { runSpan, type Span } from './tracing.js';
import type { RunState } from './state.js';
import type { Tool } from './tools/define.js';
import type { ToolExceptionPolicy } from './tools/execute.js';
import type { PermissionRecord } from './tools/permissions.js';

/** Where koagent reports what it does not raise (a listener that threw, a replaced hook). */
export interface Logger {
  warn(message: string, ...details: unknown[]): void;
}

/**
 * Per-run budgets. Reaching one ends the run between steps (never in the middle of a tool
 * call) with stop reason `limit:model_calls`, `limit:tool_calls` or `limit:tokens`.
 *
 * @example createAgent({ model, limits: { modelCalls: 10, tokens: 50_000 } })
 */
export interface Limits {
  /** Model calls, side calls (`ctx.generate`) and sub-agents' calls included. */
  modelCalls?: number;
  toolCalls?: number;
  /** Input plus output tokens. */
  tokens?: number;
}

/** Everything a run needs from its agent, built once per agent (again after `use()`). */
export interface AgentSetup {
  agentId: string;
  agentName: string;
  provider: ModelProvider;
  tools: ReadonlyMap<string, Tool>;
  toolSpecs: readonly ToolSpec[];
  maxSteps: number;
  toolConcurrency: number;
  modelSettings: Record<string, unknown>;
  limits: Limits;
  stacks: Stacks;
  /** The layers a sub-agent run inside this agent's runs inherits (outermost first). */
  inheritable: readonly NamedMiddleware[];
  /** A `model` layer declared `holdStream`: no text reaches a stream before the reply is final. */
  holdsStream: boolean;
  onPermissionDecision?: (record: PermissionRecord) => void;
  onToolException: ToolExceptionPolicy;
  logger: Logger;
}

export interface RunOptions {
  metadata: Record<string, unknown>;
  signal?: AbortSignal;
  listeners: readonly EventListener[];
  subagent?: SubagentInfo;
  /** The run is consumed as a stream: model calls use `provider.stream` when there is one. */
  streaming?: boolean;
  /** The span this run's span is a child of (a sub-agent's run: the parent's tool call span). */
  parentSpan?: Span;
}

const RUN = Symbol('koagent.run');

/** Abort `controller` when `outer` aborts; returns the function that stops listening. */
export function linkSignal(outer: AbortSignal | undefined, controller: AbortController): () => void {
  if (outer === undefined) return () => undefined;
  if (outer.aborted) {
    controller.abort(outer.reason);
    return () => undefined;
  }
  const onAbort = () => controller.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  return () => outer.removeEventListener('abort', onAbort);
}

/** The run a context belongs to (contexts are created by koagent, so it is always there). */
export function runOf(ctx: object): Run {
  return (ctx as { [RUN]: Run })[RUN];
}

/**
 * One run segment in progress: the state it advances, its cancellation, and where its events
 * go. Contexts read their common fields from `base`, built once per segment.
 */
export class Run {
  readonly controller = new AbortController();
  readonly base: Omit<BaseContext, 'messages' | 'state'>;
  /** Set by a layer that ends the run (`ctx.end`, a hook's `{ end }`). */
  end?: { output: unknown };
  /** The segment failed: a loop an orphaned `next()` left running stops without writing to its state. */
  over = false;
  readonly listening: boolean;
  readonly streaming: boolean;
  /** The run segment's span; model and tool call spans are its children. */
  readonly span: Span;
  /** The run's span records: only then do its calls get spans of their own. */
  readonly tracing: boolean;
  /** The run's signal has aborted (a plain field: the loop reads it on every step). */
  aborted = false;
  private readonly unlink: () => void;

  constructor(readonly setup: AgentSetup, readonly state: RunState, private readonly options: RunOptions) {
    this.controller.signal.addEventListener('abort', () => (this.aborted = true), { once: true });
    this.unlink = linkSignal(options.signal, this.controller);
    this.listening = options.listeners.length > 0;
    this.streaming = options.streaming === true;
    this.span = runSpan({ id: setup.agentId, name: setup.agentName }, state.runId, state.sessionId, state.segment, options.parentSpan);
    this.tracing = this.span.isRecording();
    const base: Run['base'] = {
      agentId: setup.agentId,
      agentName: setup.agentName,
      runId: state.runId,
      sessionId: state.sessionId,
      metadata: options.metadata,
      signal: this.controller.signal,
    };
    // `emit` and `subagent` exist only when they apply, as hooks test for them with `in` or `?.`.
    if (options.subagent !== undefined) (base as { subagent?: SubagentInfo }).subagent = options.subagent;
    if (this.listening) (base as { emit?: unknown }).emit = (event: EmittedEvent) => this.publish(event);
    this.base = base;
  }

  /** Attach this run to a context object koagent created. */
  bind<C extends object>(ctx: C): C {
    (ctx as { [RUN]: Run })[RUN] = this;
    return ctx;
  }

  /** Who hears this run's events (a sub-agent's run hears its parent's listeners too). */
  get listeners(): readonly EventListener[] {
    return this.options.listeners;
  }

  get subagent(): SubagentInfo | undefined {
    return this.options.subagent;
  }

  /** Send an event to every listener; a listener that throws is logged and the run goes on. */
  publish(event: EmittedEvent | Omit<AgentEvent, 'runId' | 'at'>): void {
    if (!this.listening) return;
    // Object.assign, not a spread: V8 spreads objects of changing shapes (events) very slowly.
    const full = Object.assign({}, event, { runId: this.state.runId, at: Date.now() }) as AgentEvent;
    if (this.options.subagent !== undefined && full.agentPath === undefined) full.agentPath = this.options.subagent.path;
    for (const listener of this.options.listeners) {
      try {
        listener(full);
      } catch (error) {
        this.setup.logger.warn(`koagent: an event listener threw on ${full.type}; the run goes on`, error);
      }
    }
  }

  /** Tell `onPermissionDecision` and the event listeners about one decision. */
  recordPermission(call: Pick<PermissionRecord, 'toolName' | 'toolCallId' | 'args'>, fields: Pick<PermissionRecord, 'decision' | 'source' | 'rule' | 'hook' | 'reason'>): void {
    const listener = this.setup.onPermissionDecision;
    if (listener === undefined && !this.listening) return;
    // A copy: a listener must not be able to change the arguments of the call it is told about.
    const record: PermissionRecord = { toolName: call.toolName, toolCallId: call.toolCallId, args: copyJson(call.args), ...fields };
    if (listener !== undefined) {
      try {
        listener(record);
      } catch (error) {
        this.setup.logger.warn('koagent: onPermissionDecision threw; the run goes on', error);
      }
    }
    this.publish({ type: 'permission.decision', ...record });
  }

  /** Add one model call's tokens to the run's usage. */
  countUsage(usage: TokenUsage | undefined): void {
    const total = this.state.usage;
    total.modelCalls++;
    const input = usage?.inputTokens ?? 0;
    const output = usage?.outputTokens ?? 0;
    total.inputTokens += input;
    total.outputTokens += output;
    total.totalTokens += input + output;
  }


  /** Stop listening to the caller's signal once the segment is over. */
  dispose(): void {
    this.unlink();
  }
}

export type { GenerateResult };
