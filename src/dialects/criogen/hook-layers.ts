// The criogen Hook dialect: each Hook is one layer of koagent's stacks, so its order (onStart,
// beforeModel, beforeTool in list order; the others in reverse) is the onion's own.
import { blame, failing, type AssistantMessage, type GenerateResult, type Message, type Middleware, type ModelContext, type RunContext } from '../../api.js';
import { hookContext, takeAction, type ActionMethod } from './hook-context.js';
import { criogenToolLayer } from './tool-layer.js';
import type { Hook, HookAction, SegmentOutcome } from './types.js';

const METHODS = ['onStart', 'beforeModel', 'afterModel', 'beforeTool', 'afterTool', 'onEnd'] as const;

/** A hook with its name settled, as the agent lists its hooks. */
export interface NamedHook {
  hook: Hook;
  name: string;
}

/**
 * The run layers of an agent's criogen Hooks share this: which of them a segment entered, so
 * that every hook's `onEnd` runs once per segment — also the hooks an earlier one kept from
 * starting (it threw, or ended the run in `onStart`, or a layer between them settled the
 * segment), in reverse order.
 */
export class HookGroup {
  readonly #hooks: NamedHook[] = [];
  readonly #entered = new WeakMap<RunContext, Set<number>>();

  /** Add a hook whose run layer comes after those added before; returns its position. */
  add(entry: NamedHook): number {
    return this.#hooks.push(entry) - 1;
  }

  enter(ctx: RunContext, at: number): void {
    let entered = this.#entered.get(ctx);
    if (entered === undefined) this.#entered.set(ctx, (entered = new Set()));
    entered.add(at);
  }

  /** The hooks after `at` that this segment never entered, last first. Each is given once. */
  missed(ctx: RunContext, at: number): NamedHook[] {
    const entered = this.#entered.get(ctx) ?? new Set<number>();
    const missed: NamedHook[] = [];
    for (let i = this.#hooks.length - 1; i > at; i--) {
      if (entered.has(i)) continue;
      entered.add(i);
      missed.push(this.#hooks[i]);
    }
    this.#entered.set(ctx, entered);
    return missed;
  }
}

/**
 * The layers of one Hook, named `name` (settled by the caller: `Hook.name`, the class name, or
 * `hook#<index>`, told apart by position when shared). Only the hook points it uses get a layer,
 * so a hook with only `onStart` costs tool calls nothing. Its tool layer sees calls as the model
 * wrote them when it comes before any layer that needs a validated call.
 */
export function criogenMiddleware(hook: Hook, name: string, group: HookGroup): Middleware & { name: string } {
  for (const method of METHODS) {
    const value = (hook as Record<string, unknown>)[method];
    if (value !== undefined && typeof value !== 'function') {
      throw new TypeError(`Hook ${name}: ${method} must be a method (a function), got ${typeof value}`);
    }
  }
  const has = (method: (typeof METHODS)[number]) => typeof hook[method] === 'function';
  const middleware: Middleware & { name: string } = { name };
  if (has('onStart') || has('onEnd')) middleware.run = runLayer(hook, name, group, group.add({ hook, name }));
  if (has('beforeModel') || has('afterModel')) middleware.model = modelLayer(hook, name);
  if (has('beforeTool') || has('afterTool')) {
    middleware.tool = criogenToolLayer(hook, name);
    middleware.rawCalls = true;
  }
  return middleware;
}

/** Call a HookAction method; a throw fails the run as `hook_failed`, blamed on this hook. */
async function callAction(ctx: RunContext | ModelContext, hook: Hook, name: string, method: ActionMethod): Promise<HookAction | undefined> {
  let returned: unknown;
  try {
    returned = await hook[method]!(hookContext(ctx, name));
  } catch (error) {
    throw blame(error, name);
  }
  return takeAction(name, method, returned);
}

/** Keep what a hook returned as `{ state }`, or fail naming the hook and what is not JSON. */
function saveState(ctx: RunContext | ModelContext, name: string, method: ActionMethod, action: HookAction | undefined): void {
  if (action?.state === undefined) return;
  try {
    ctx.setHookState(name, action.state);
  } catch (error) {
    throw blame(new TypeError(`${name}.${method}() returned { state }: ${(error as Error).message}`), name);
  }
}

function runLayer(hook: Hook, name: string, group: HookGroup, at: number): NonNullable<Middleware['run']> {
  return async (ctx, next) => {
    group.enter(ctx, at);
    let outcome: SegmentOutcome = 'failed';
    let inside = false;
    try {
      if (typeof hook.onStart === 'function') {
        const action = await callAction(ctx, hook, name, 'onStart');
        saveState(ctx, name, 'onStart', action);
        if (action?.end === true) {
          outcome = 'completed';
          return ctx.end(action.output);
        }
      }
      inside = true;
      // After next(), ctx.state says how the segment ended (its status, stop reason, approvals,
      // output, or its failure): the state onEnd is given.
      const result = await next();
      outcome = result.status === 'suspended' ? 'suspended' : 'completed';
      return result;
    } catch (error) {
      // What this hook threw itself fails the segment: the onEnd calls below see it so already.
      throw inside ? error : failing(ctx, blame(error, name));
    } finally {
      // The hooks this one kept from starting (or that a layer between kept out) end too, first.
      for (const later of group.missed(ctx, at)) await endHook(ctx, later.hook, later.name, outcome);
      if (typeof hook.onEnd === 'function') await endHook(ctx, hook, name, outcome);
    }
  };
}

/** onEnd cannot change how the segment ended: what it throws is logged and dropped. */
async function endHook(ctx: RunContext, hook: Hook, name: string, outcome: SegmentOutcome): Promise<void> {
  if (typeof hook.onEnd !== 'function') return;
  try {
    await hook.onEnd(hookContext(ctx, name), outcome);
  } catch (error) {
    ctx.logger.warn(`koagent: hook ${name} threw in onEnd; the segment's outcome (${outcome}) is unchanged`, error);
  }
}

/** A reply or transcript a hook returned, applied through the context; a bad one fails naming the hook. */
function apply(name: string, method: ActionMethod, what: () => void): void {
  try {
    what();
  } catch (error) {
    throw blame(new TypeError(`${name}.${method}() returned ${(error as Error).message}`), name);
  }
}

function modelLayer(hook: Hook, name: string): NonNullable<Middleware['model']> {
  return async (ctx, next) => {
    if (typeof hook.beforeModel === 'function') {
      const action = await callAction(ctx, hook, name, 'beforeModel');
      if (action?.messages !== undefined) apply(name, 'beforeModel', () => ctx.setMessages(action.messages as Message[]));
      saveState(ctx, name, 'beforeModel', action);
      if (action?.end === true) return ctx.end(action.output);
    }
    let result: GenerateResult = await next();
    if (typeof hook.afterModel !== 'function') return result;
    // A layer inside ended the run without calling the model: there is no reply to look at.
    if (ctx.ended && ctx.reply === undefined) return result;
    // The reply the run will keep is at the end of the transcript, even one an inner layer gave.
    if (ctx.reply !== result.message) ctx.setReply(result.message);
    const action = await callAction(ctx, hook, name, 'afterModel');
    if (action?.message !== undefined) {
      const message = action.message as AssistantMessage;
      apply(name, 'afterModel', () => ctx.setReply(message));
      result = { ...result, message };
    }
    saveState(ctx, name, 'afterModel', action);
    if (action?.end === true) ctx.end(action.output);
    return result;
  };
}
