import { blame, optionsSchema, refuseMisspellings, type GenerateResult, type Middleware, type ModelContext, type ModelProvider, type SideRequest, type ToolContext, type ToolFailure, type ToolOutcome } from '../../api.js';
import { postToolOutcome, preToolOutcome } from './outcomes.js';
import { z } from 'zod';

/**
 * The context of `preToolCall` and `postToolCall`. It is koagent's own tool context, the very
 * object the tool stack passes along (never a copy): `toolCallId`, `toolName`, the live `args`,
 * `toolCall` (as the model wrote it), `resumedAfterApproval`, and the common fields `agentId`,
 * `agentName`, `sessionId`, `messages` (the live transcript), `metadata`, `subagent` (set only
 * inside a sub-agent) and `emit` (present only when someone listens to the run).
 *
 * @example preToolCall(ctx: ToolCallHookContext) { if (ctx.resumedAfterApproval) return; audit.push(ctx.toolName); }
 */
export type ToolCallHookContext = ToolContext;

/**
 * The context of `preGenerate` and `postGenerate`: koagent's own model context, seen through a
 * view that adds the dialect's `generate(provider, request, purpose)` (a side model call counted
 * in the run's usage; `provider` undefined asks the agent's model). `request` is the live request
 * about to be sent and `messages` the live transcript; changing either changes what the model
 * gets; `emit` is present only when someone listens to the run.
 *
 * @example preGenerate(ctx: GenerateHookContext) { ctx.request.temperature = 0; }
 */
export type GenerateHookContext = ModelContext & {
  /** A side model call counted in the run's usage and limits: `provider` (default: the agent's model) given `request`, for `purpose`. */
  generate(provider: ModelProvider | undefined, request: SideRequest, purpose: string): Promise<GenerateResult>;
};

/**
 * What `preToolCall` may return: nothing (go on), `{ deny: reason }` (the call does not run; the
 * model gets a `denied` error), `{ result }` (the call does not run; this is its result), or
 * `{ input }` (the call runs with these arguments, checked against the tool's schema first).
 *
 * @example return ctx.toolName === 'shell' ? { deny: 'No shell here' } : undefined;
 */
export type PreToolCallOutcome = { deny: string } | { result: unknown } | { input: Record<string, unknown> } | void | undefined;

/**
 * What `postToolCall` gets as its second argument: the settled call. `error` is set for a
 * tool-level failure (`{ kind, message }`), `requiresApproval` while the call waits for a human;
 * in both cases `result` is `undefined`.
 *
 * @example postToolCall(ctx, { result, error }) { log(ctx.toolName, error?.kind ?? 'ok', result); }
 */
export interface ToolCallHookResult {
  result: unknown;
  error?: ToolFailure;
  requiresApproval?: boolean;
}

/**
 * What `postToolCall` may return: nothing (keep the result), or `{ result }` to replace what the
 * model sees.
 *
 * @example return typeof r.result === 'string' ? { result: r.result.slice(0, 2000) } : undefined;
 */
export type PostToolCallOutcome = { result: unknown } | void | undefined;

/**
 * A hook in the AgentHook dialect: a name and any of four methods, run around every tool call
 * and every model call. All the AgentHooks of an agent run in registration order, before and
 * after; together they form one layer of koagent's `tool` and `model` stacks.
 *
 * @example const audit: AgentHook = { name: 'audit', postToolCall(ctx, r) { console.log(ctx.toolName, r.error ?? 'ok'); } };
 */
export interface AgentHook {
  /** Names the hook in errors, permission records and `replacedByHook`; a registry's key. */
  name: string;
  /** Before the tool call: ahead of permission rules, guardrails and the approval check. */
  preToolCall?(ctx: ToolCallHookContext): PreToolCallOutcome | Promise<PreToolCallOutcome>;
  /** After the call settled: success, tool error, a pre-hook's outcome, or approval required. */
  postToolCall?(ctx: ToolCallHookContext, result: ToolCallHookResult): PostToolCallOutcome | Promise<PostToolCallOutcome>;
  /** Before each model call; change `ctx.request` or `ctx.messages` in place. Its return value is ignored. */
  preGenerate?(ctx: GenerateHookContext): unknown;
  /** After each model call resolved. Its return value is ignored. */
  postGenerate?(ctx: GenerateHookContext, result: GenerateResult): unknown;
}

export const AGENT_HOOK_LAYER = 'agent-hooks';

const METHODS = ['preToolCall', 'postToolCall', 'preGenerate', 'postGenerate'] as const;
/** Methods of the other kinds of extension (middleware, criogen Hooks), which an AgentHook must not mix in. */
const FOREIGN = ['run', 'model', 'tool', 'onStart', 'beforeModel', 'afterModel', 'beforeTool', 'afterTool', 'onEnd'] as const;

/**
 * Check one AgentHook where it is handed to koagent, naming what is wrong and where: it needs a
 * name, its methods must be functions, and it must not carry another dialect's methods.
 */
export function checkAgentHook(value: unknown, where: string): asserts value is AgentHook {
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`${where}: an AgentHook must be an object { name, preToolCall?, postToolCall?, preGenerate?, postGenerate? }, got ${value === null ? 'null' : typeof value}`);
  }
  const hook = value as Record<string, unknown>;
  const methods = METHODS.filter((m) => hook[m] !== undefined);
  if (typeof hook.name !== 'string' || hook.name === '') {
    const which = methods.length > 0 ? `the AgentHook with ${methods.join(', ')}` : 'an AgentHook';
    throw new TypeError(`${where}: ${which} has no name; give it name: '<a non-empty string>' (the name appears in errors, permission records and replacedByHook)`);
  }
  for (const method of methods) {
    if (typeof hook[method] !== 'function') {
      throw new TypeError(`${where}: AgentHook "${hook.name}".${method} must be a function (or left out), got ${typeof hook[method]}`);
    }
  }
  const foreign = FOREIGN.filter((m) => typeof hook[m] === 'function');
  if (foreign.length > 0) {
    throw new TypeError(`${where}: AgentHook "${hook.name}" also has ${foreign.join(', ')}, which belong to middleware or criogen Hooks; split it into one object per kind`);
  }
  // A misspelled method (`postToolcall`) would never run: refuse it. Other keys are the hook's own.
  refuseMisspellings(hookShape, hook, `${where}: AgentHook "${hook.name}"`);
}

const hookShape = optionsSchema({
  name: z.string(),
  preToolCall: z.unknown().optional(),
  postToolCall: z.unknown().optional(),
  preGenerate: z.unknown().optional(),
  postGenerate: z.unknown().optional(),
}, { noun: 'an AgentHook method', aliases: { beforeToolCall: 'preToolCall', afterToolCall: 'postToolCall', beforeGenerate: 'preGenerate', afterGenerate: 'postGenerate', preTool: 'preToolCall', postTool: 'postToolCall' } });

/** A hook method's value, awaited only when it is a promise (most hooks are synchronous). */
const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | null)?.then === 'function';

/**
 * The one layer all AgentHooks of an agent form, in both the `tool` and the `model` stack.
 * `current` returns the hooks in registration order; it is read once per call, so a registry
 * changed mid-call does not change the call in progress, and the stacks are never rebuilt.
 *
 * Tool stack: the pre-hooks in order (each awaited; the first `{ deny }` or `{ result }`, or an
 * `{ input }` that fails the schema, settles the call and skips the rest), then `next()` unless
 * settled, then every post-hook in registration order, whatever settled the call.
 * Model stack: every `preGenerate`, `next()`, every `postGenerate`.
 */
export function agentHookMiddleware(current: () => readonly AgentHook[]): Middleware & { name: string } {
  return {
    name: AGENT_HOOK_LAYER,
    async tool(ctx, next) {
      const hooks = current();
      let early: ToolOutcome | undefined;
      for (const hook of hooks) {
        if (typeof hook.preToolCall !== 'function') continue;
        // Whatever a hook method throws, or returns that is no outcome, rejects the run blamed
        // on that hook by name; it never becomes a tool result.
        try {
          let returned: unknown = hook.preToolCall(ctx);
          if (isThenable(returned)) returned = await returned;
          early = preToolOutcome(ctx, hook.name, returned);
        } catch (error) {
          throw blame(error, hook.name);
        }
        if (early !== undefined) break;
      }
      let outcome: ToolOutcome = early ?? (await next());
      for (const hook of hooks) {
        if (typeof hook.postToolCall !== 'function') continue;
        try {
          let returned: unknown = hook.postToolCall(ctx, hookResult(outcome));
          if (isThenable(returned)) returned = await returned;
          outcome = postToolOutcome(outcome, hook.name, returned);
        } catch (error) {
          throw blame(error, hook.name);
        }
      }
      return outcome;
    },
    async model(model, next) {
      const hooks = current();
      const ctx = generateHookContext(model);
      for (const hook of hooks) {
        if (typeof hook.preGenerate !== 'function') continue;
        try {
          const returned = hook.preGenerate(ctx);
          if (isThenable(returned)) await returned;
        } catch (error) {
          throw blame(error, hook.name);
        }
      }
      const result = await next();
      for (const hook of hooks) {
        if (typeof hook.postGenerate !== 'function') continue;
        try {
          const returned = hook.postGenerate(ctx, result);
          if (isThenable(returned)) await returned;
        } catch (error) {
          throw blame(error, hook.name);
        }
      }
      return result;
    },
  };
}

/**
 * The model context as the dialect shows it: the context itself for every field and method, and
 * `generate` taking the provider first as well (`generate(provider, request, purpose)`).
 */
function generateHookContext(ctx: ModelContext): GenerateHookContext {
  const generate = (first: ModelProvider | SideRequest | undefined, second?: SideRequest | string, purpose?: string) => {
    if (typeof second === 'string' || second === undefined) return ctx.generate(first as SideRequest, second as string);
    return ctx.generate(first === undefined ? second : { ...second, provider: first as ModelProvider }, purpose as string);
  };
  return new Proxy(ctx, {
    get(target, key) {
      if (key === 'generate') return generate;
      const value: unknown = Reflect.get(target, key, target);
      // The context's methods run on the context itself (its private fields are not the view's).
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set: (target, key, value) => Reflect.set(target, key, value, target),
  }) as GenerateHookContext;
}

/** The settled call as a post-hook sees it: `{ result, error?, requiresApproval? }`, nothing more. */
function hookResult(outcome: { result: unknown; error?: ToolFailure; requiresApproval?: boolean }): ToolCallHookResult {
  const view: ToolCallHookResult = { result: outcome.result };
  if (outcome.error !== undefined) view.error = { ...outcome.error };
  if (outcome.requiresApproval === true) view.requiresApproval = true;
  return view;
}
