// The criogen Hook dialect: each Hook is one layer of koagent's stacks, so its order (onStart,
// beforeModel, beforeTool in list order; the others in reverse) is the onion's own.
import type { LayerFn } from '../compose.js';
import type { ModelContext, RunContext } from '../context.js';
import { attributeError } from '../errors.js';
import { finish } from '../loop.js';
import type { AssistantMessage, Message } from '../messages.js';
import type { GenerateResult } from '../model.js';
import type { ModelCall } from '../model-call.js';
import type { RunResult } from '../result.js';
import { runOf, type Run } from '../run.js';
import type { NamedMiddleware } from '../stacks.js';
import type { RunState } from '../state.js';
import { hookContext, replaceTranscript, takeAction, type ActionMethod } from './criogen-context.js';
import { criogenToolLayer } from './criogen-tool.js';
import type { ToolResult } from './tool-result.js';

export { ToolResult } from './tool-result.js';

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
  /** The live transcript (the array `result.messages` will be); in afterModel it ends with the new reply. */
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

/** What a hook method may return: the value, nothing, or a promise of either. */
export type Maybe<T> = T | void | null | undefined | Promise<T | void | null | undefined>;

/** How a run segment ended, as `onEnd` is told. */
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

const METHODS = ['onStart', 'beforeModel', 'afterModel', 'beforeTool', 'afterTool', 'onEnd'] as const;

/**
 * The layers of one Hook, named `name` (settled by the caller: `Hook.name`, the class name, or
 * `hook#<index>`, told apart by position when shared). Only the hook points it uses get a layer,
 * so a hook with only `onStart` costs tool calls nothing.
 */
export function criogenMiddleware(hook: Hook, name: string): NamedMiddleware {
  for (const method of METHODS) {
    const value = (hook as Record<string, unknown>)[method];
    if (value !== undefined && typeof value !== 'function') {
      throw new TypeError(`Hook ${name}: ${method} must be a method (a function), got ${typeof value}`);
    }
  }
  const has = (method: (typeof METHODS)[number]) => typeof hook[method] === 'function';
  const middleware: NamedMiddleware = { name };
  if (has('onStart') || has('onEnd')) middleware.run = runLayer(hook, name);
  if (has('beforeModel') || has('afterModel')) middleware.model = modelLayer(hook, name);
  if (has('beforeTool') || has('afterTool')) middleware.tool = criogenToolLayer(hook, name);
  return middleware;
}

/** Call a HookAction method; a throw fails the run as `hook_failed`, blamed on this hook. */
async function callAction(run: Run, hook: Hook, name: string, method: ActionMethod) {
  let returned: unknown;
  try {
    returned = await hook[method]!(hookContext(run, name));
  } catch (error) {
    throw attributeError(error, name);
  }
  return takeAction(run, name, method, returned);
}

function runLayer(hook: Hook, name: string): LayerFn<RunContext, RunResult> {
  return async (ctx, next) => {
    const run = runOf(ctx);
    let outcome: SegmentOutcome = 'failed';
    try {
      if (typeof hook.onStart === 'function') {
        const action = await callAction(run, hook, name, 'onStart');
        if (action?.end === true) {
          // Ends the segment before any model call; the hooks after this one never start.
          run.end = { output: action.output };
          outcome = 'completed';
          return finish(run, 'hook_end');
        }
      }
      const result = await next();
      outcome = result.status === 'suspended' ? 'suspended' : 'completed';
      return result;
    } finally {
      if (typeof hook.onEnd === 'function') await endHook(run, hook, name, outcome);
    }
  };
}

/** onEnd cannot change how the segment ended: what it throws is logged and dropped. */
async function endHook(run: Run, hook: Hook, name: string, outcome: SegmentOutcome): Promise<void> {
  try {
    await hook.onEnd!(hookContext(run, name), outcome);
  } catch (error) {
    run.setup.logger.warn(`koagent: hook ${name} threw in onEnd; the segment's outcome (${outcome}) is unchanged`, error);
  }
}

function modelLayer(hook: Hook, name: string): LayerFn<ModelContext, GenerateResult> {
  return async (ctx, next) => {
    const run = runOf(ctx);
    const call = ctx as ModelCall;
    if (typeof hook.beforeModel === 'function') {
      const action = await callAction(run, hook, name, 'beforeModel');
      if (action?.messages !== undefined) replaceTranscript(ctx.messages, action.messages);
      if (action?.end === true) return ctx.end(action.output);
    }
    let result = await next();
    if (typeof hook.afterModel !== 'function') return result;
    // A layer inside ended the run without calling the model: there is no reply to look at.
    if (run.end !== undefined && call.reply === undefined) return result;
    // The reply the run will keep is at the end of the transcript, even one an inner layer gave.
    if (call.reply !== result.message) call.place(result.message);
    const action = await callAction(run, hook, name, 'afterModel');
    if (action?.message !== undefined) {
      result = { ...result, message: action.message as AssistantMessage };
      call.place(result.message);
    }
    if (action?.end === true) ctx.end(action.output);
    return result;
  };
}
