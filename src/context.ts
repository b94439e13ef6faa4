import type { AgentEvent, EmittedEvent } from './events.js';
import type { Message, ToolCallPart } from './messages.js';
import type { GenerateOptions, GenerateResult, ModelProvider } from './model.js';
import type { RunState } from './state.js';
import type { Tool } from './tools/define.js';
import type { ToolOutcome } from './tools/outcome.js';

/** Where a context runs when it is inside a sub-agent (unset in the lead agent). */
export interface SubagentInfo {
  name: string;
  depth: number;
  parentRunId: string;
  /** Agent names from the lead agent down to this one. */
  path: string[];
}

/** Fields every context has, at every hook point. */
export interface BaseContext {
  readonly agentId: string;
  readonly agentName: string;
  readonly runId: string;
  readonly sessionId: string;
  /** The live transcript: the one array the run appends to, never a copy. */
  readonly messages: Message[];
  /** A free-form bag for this run: the agent's `metadata` merged with the run's. */
  readonly metadata: Record<string, unknown>;
  /** Aborted when the run is cancelled; pass it on to anything slow. */
  readonly signal: AbortSignal;
  /** The run state, live and read-only: plain JSON (see `RunState`). */
  readonly state: Readonly<RunState>;
  /** Set inside a sub-agent. */
  readonly subagent?: SubagentInfo;
  /** Present exactly when someone listens (an `onEvent` option, or a stream). */
  readonly emit?: (event: EmittedEvent) => void;
}

/** Context of the `run` hook point: once per run segment. `next()` resolves to its `RunResult`. */
export interface RunContext extends BaseContext {
  /** Messages this segment added as input (empty when resuming). */
  readonly input: Message[];
  /** 1 for a run's first segment, then 2, 3 … for each resume or retry. */
  readonly segment: number;
  readonly resumed: boolean;
}

/** Context of the `model` hook point: once per model call. `next()` resolves to the reply. */
export interface ModelContext extends BaseContext {
  /** The live request about to be sent; change it before `next()`. */
  request: GenerateOptions;
  /** Which model turn of the run this is (1-based). */
  readonly step: number;
  /** `'turn'` for the loop's own calls; the purpose given to `generate` for side calls. */
  readonly purpose: string;
  /**
   * End the run after this model call with stop reason `hook_end`. Returns a reply to return
   * from the layer when the model should not be called at all.
   *
   * @example model: async (ctx, next) => (budgetLeft() ? next() : ctx.end('out of budget'))
   */
  end(output?: unknown): GenerateResult;
  /** A side model call (summaries, classifiers) that counts in the run's usage and limits. */
  generate(provider: ModelProvider, request: Partial<GenerateOptions> & Pick<GenerateOptions, 'messages'>, purpose: string): Promise<GenerateResult>;
}

/** Context of the `tool` hook point: once per tool call. `next()` resolves to its outcome. */
export interface ToolContext extends BaseContext {
  readonly toolCallId: string;
  /** The tool to run; a layer may change it before `next()` (the args are revalidated). */
  toolName: string;
  /** The arguments as JSON (the schema's input form); a layer may replace or edit them. */
  args: Record<string, unknown>;
  /** The call exactly as the model wrote it. */
  readonly toolCall: Readonly<ToolCallPart>;
  /** The resolved tool (set once validation passed). */
  tool: Tool | undefined;
  /** Same for every attempt at this call: across retries, resume and retried segments. */
  readonly idempotencyKey: string;
  /** Aborted when the run is cancelled; a layer may narrow it for the calls inside (a timeout). */
  signal: AbortSignal;
  /** True only when this call is running again after a human approved it. */
  readonly resumedAfterApproval: boolean;
  readonly step: number;
}

export type { AgentEvent, ToolOutcome };
