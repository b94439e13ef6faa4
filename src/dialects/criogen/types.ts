// The criogen Hook dialect's public types: what a hook is, what it sees, what it may return.
import type { AssistantMessage, Message, RunState } from '../../api.js';
import type { ToolResult } from './tool-result.js';

/**
 * A transcript entry as a hook sees it: koagent's `Message`, which code written against plain
 * records (`Record<string, unknown>`) can read and pass on as one.
 *
 * @example const lastUser = ctx.messages.findLast((m) => m.role === 'user')?.content;
 */
export type HookMessage = Message & Record<string, unknown>;

type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/**
 * The run state as `ctx.state` shows it: every `RunState` field, read-only all the way down,
 * and readable as a plain record.
 *
 * @example const toolCalls = ctx.state.usage.toolCalls;
 */
export type HookRunState = DeepReadonly<RunState> & { readonly [field: string]: unknown };

/**
 * What a hook sees: one per call, built without copying anything.
 *
 * @example onEnd(ctx, outcome) { console.log(`${ctx.runId}: ${outcome} after ${ctx.modelCalls} model calls`); }
 */
export interface HookContext {
  /** The id of the run (`result.runId`). */
  readonly runId: string;
  /** The live transcript (what `result.messages` will hold); in afterModel it ends with the new reply. */
  readonly messages: HookMessage[];
  /** Model calls made so far in this run, over all its segments. */
  readonly modelCalls: number;
  /** What this hook last saved with `{ state }` (undefined before it saved anything). */
  readonly hookState: unknown;
  /** The whole run state, read-only: writing to it throws a TypeError saying what to do instead. */
  readonly state: HookRunState;
}

/**
 * What a hook asks for: keep some state, replace the transcript (`messages`, beforeModel) or the
 * new reply (`message`, afterModel), or end the run (`end: true`, with `output`).
 *
 * @example beforeModel(ctx) { return { state: { calls: ctx.modelCalls + 1 } }; }
 */
export interface HookAction {
  /** Kept for this hook in the run state (plain JSON); later calls see it as `ctx.hookState`. */
  state?: unknown;
  /** beforeModel only: the transcript to send instead, and to keep. */
  messages?: readonly (Message | Record<string, unknown>)[];
  /** afterModel only: the assistant message to use instead of the model's reply. */
  message?: AssistantMessage | Record<string, unknown>;
  /** true ends the run now, with stop reason `hook_end`. */
  end?: boolean;
  /** With `end`: the run's `result.output`. */
  output?: unknown;
}

/**
 * A tool call as beforeTool sees it. Return it changed to run that instead.
 *
 * @example beforeTool(call) { if (call.name === 'search_web') return { ...call, name: 'search_docs' }; }
 */
export interface ToolCall {
  /** The call's id, as in the transcript. */
  callId: string;
  /** The tool called. Return a call with another name to run that tool (its args are checked against it). */
  name: string;
  /** The arguments, as the model wrote them (or as an earlier hook changed them). */
  args: Record<string, unknown>;
}

/**
 * What a hook method may return: the value, nothing, or a promise of either.
 *
 * @example const before: (call: ToolCall) => Maybe<ToolCall> = (call) => (call.name === 'a' ? { ...call, name: 'b' } : undefined);
 */
export type Maybe<T> = T | void | null | undefined | Promise<T | void | null | undefined>;

/**
 * How a run segment ended, as `onEnd` is told.
 *
 * @example onEnd(ctx, outcome) { metrics.increment(`segments.${outcome}`); }
 */
export type SegmentOutcome = 'completed' | 'suspended' | 'failed';

/**
 * Code around the agent loop: an object or a class instance with any of these methods, each of
 * which may be async. Give hooks in the agent's `hooks` option or to `agent.use(hook)`.
 * `onStart`, `beforeModel` and `beforeTool` run in list order, the others in reverse.
 *
 * @example const logTools: Hook = { name: 'log-tools', beforeTool(call) { console.log('calling', call.name); } };
 */
export interface Hook {
  /** Shown in errors and events, and keys the hook's state; defaults to the class name, else `hook#<index>`. */
  name?: string;
  /** Once per run segment (a run, its continuation after approval, a retry), before anything else. */
  onStart?(ctx: HookContext): Maybe<HookAction>;
  /** Before each model call: may replace the transcript (`{ messages }`) or end the run. */
  beforeModel?(ctx: HookContext): Maybe<HookAction>;
  /** After each model reply (`ctx.messages` ends with it): may replace it (`{ message }`) or end the run. */
  afterModel?(ctx: HookContext): Maybe<HookAction>;
  /** Before each tool call: a changed call, a ToolResult (skip the tool), or nothing. Throwing ToolError gives the model that error. */
  beforeTool?(call: ToolCall): Maybe<ToolCall | ToolResult>;
  /** After each tool call: a value other than undefined replaces the result the model sees. */
  afterTool?(call: ToolCall, result: unknown): unknown;
  /** Once per run segment, whatever happened, in reverse order. Cannot change the outcome; a throw is logged. */
  onEnd?(ctx: HookContext, outcome: SegmentOutcome): void | Promise<void>;
}

