// What the core runs an agent with, as the agent's build step makes it: the agent's parts, the
// stacks of each mode, and the context of the provider stack. Types only.
import type { InterruptPolicy, Logger, ModelContext, RunContext, RunVariables, ToolContext } from '../vocabulary/contexts.js';
import type { EmittedEvent } from '../vocabulary/events.js';
import type { NamedMiddleware } from '../vocabulary/middleware.js';
import type { GenerateOptions, GenerateResult, ModelProvider, ToolSpec } from '../vocabulary/model.js';
import type { ToolOutcome } from '../vocabulary/outcome.js';
import type { RunResult } from '../vocabulary/result.js';
import type { StopCondition } from '../vocabulary/state.js';
import type { ToolExceptionPolicy } from '../vocabulary/tool-exception.js';

/** How deep and how large a model's arguments for one call may be (the agent's `toolArguments`). */
export interface ArgumentBounds {
  maxDepth: number;
  maxBytes: number;
}

/** 64 levels of nesting and 1 MiB of JSON: far past any real call, short of what breaks a run. */
/**
 * One provider call inside the model stack (a turn's, or a side call's): the `provider` stack's
 * context, for the features layered there.
 *
 * @example provider: [{ name: 'log', fn: (call, next) => { console.log(call.purpose); return next(); } }]
 */
export interface ProviderCall {
  readonly provider: ModelProvider;
  readonly request: GenerateOptions;
  readonly purpose: string;
  /** The turn's model context; undefined for a side call (`ctx.generate`). */
  readonly turn: ModelContext | undefined;
  /** The segment's variables (see `RunVariables`). */
  readonly runVar: RunVariables;
  /** Present exactly when someone listens to the run. */
  readonly emit?: <T extends string>(event: EmittedEvent<T>) => void;
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
