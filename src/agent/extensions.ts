import { z } from 'zod';
import type { Middleware, NamedMiddleware } from '../core/vocabulary/middleware.js';
import { optionsSchema, refuseMisspellings } from '../core/vocabulary/options.js';
import { AGENT_HOOK_LAYER, agentHookMiddleware, checkAgentHook, type AgentHook } from '../dialects/agent-hook/agent-hook.js';
import { hookGroup, HookRegistry } from '../dialects/agent-hook/hook-registry.js';
import { criogenMiddleware, HookGroup } from '../dialects/criogen/hook-layers.js';
import type { Hook } from '../dialects/criogen/types.js';
import { identifyLayer, type LayerIdentity } from '../features/layer-trace/install.js';
import { scopeProblem } from '../features/subagents/subagent-tool.js';

const HOOK_POINTS = ['run', 'model', 'tool'] as const;
const AGENT_HOOK_METHODS = ['preToolCall', 'postToolCall', 'preGenerate', 'postGenerate'] as const;
const CRIOGEN_HOOK_METHODS = ['onStart', 'beforeModel', 'afterModel', 'beforeTool', 'afterTool', 'onEnd'] as const;

/** The fields of one kind of extension that the others do not have (all of them have `name`). */
type OwnFields<T> = Exclude<keyof T, 'name'>;
/** The keys of `M` that hold functions: what tells the kinds apart at run time too (a hook's own `model: 'gpt'` field does not). */
type FunctionFields<M> = { [K in keyof M]-?: M[K] extends ((...args: never[]) => unknown) | undefined ? K : never }[keyof M];

/**
 * What `use()` holds its argument to. A bare function is refused (the runtime refuses it too). An
 * object is checked against the kind its fields name: with `run`, `model` or `tool` it must be a
 * whole `Middleware`, with AgentHook methods an `AgentHook`, with criogen methods a `Hook`, so a
 * middleware whose layer returns the wrong thing cannot pass as an AgentHook that has a name only.
 */
export type ExtensionShape<M, C> = M extends (...args: never[]) => unknown ? { 'a middleware is an object { name, tool(ctx, next) }, not a function': never }
  : [FunctionFields<M> & OwnFields<Middleware<C>>] extends [never] ? [FunctionFields<M> & OwnFields<AgentHook>] extends [never] ? [FunctionFields<M> & OwnFields<Hook>] extends [never] ? unknown : Hook : AgentHook
  : Middleware<C>;

/** The kind of extension an object given to `use()`, `middleware` or `hooks` is. */
type Dialect = 'middleware' | 'agent-hook' | 'hook';

/** Something given to `use()`, `middleware` or `hooks`, with its dialect recognised once. */
export interface Extension {
  dialect: Dialect;
  value: object;
}

/** Each dialect with the function names that make an object one of its kind. */
const DIALECTS: readonly (readonly [Dialect, readonly string[]])[] = [['middleware', HOOK_POINTS], ['agent-hook', AGENT_HOOK_METHODS], ['hook', CRIOGEN_HOOK_METHODS]];

const KIND_LABEL: Record<Dialect, string> = { middleware: 'middleware', 'agent-hook': 'AgentHook', hook: 'Hook' };

/** Recognise an extension by the names of its functions, refusing anything else at once. */
export function extension(value: unknown, where: string): Extension {
  // A registry joins the AgentHook layer as a whole, so hooks registered later take part too.
  if (HookRegistry.is(value)) return { dialect: 'agent-hook', value };
  if (typeof value !== 'object' || value === null) {
    const fix = typeof value === 'function' ? ' (a middleware is an object: { name, tool: (ctx, next) => next() })' : '';
    throw new TypeError(`${where}: expected a middleware { name, run?, model?, tool? } or a hook object, got ${value === null ? 'null' : typeof value}${fix}`);
  }
  const isFunction = (name: string) => typeof (value as Record<string, unknown>)[name] === 'function';
  const kinds = DIALECTS.filter(([, methods]) => methods.some(isFunction));
  const label = nameOf(value) ?? 'this object';
  if (kinds.length === 0) {
    throw new TypeError(`${where}: ${label} has none of run/model/tool (middleware), preToolCall/postToolCall/preGenerate/postGenerate (AgentHook) or onStart/beforeModel/afterModel/beforeTool/afterTool/onEnd (Hook)`);
  }
  if (kinds.length > 1) {
    const list = kinds.map(([kind, methods]) => `${methods.filter(isFunction).join(', ')} (${KIND_LABEL[kind]})`).join(' and ');
    throw new TypeError(`${where}: ${label} mixes ${list}; split it into one object per kind`);
  }
  const [dialect] = kinds[0];
  if (dialect === 'middleware') checkMiddleware(value as Middleware, where, label);
  if (dialect === 'agent-hook') checkAgentHook(value, where);
  // A misspelled hook point (`modle`, `beforetool`) would never run: refuse it. Other keys are
  // the object's own business (a middleware's state).
  if (dialect !== 'agent-hook') refuseMisspellings(SHAPES[dialect], value, `${where}: ${label}`);
  return { dialect, value };
}

// A middleware's fields: its name, its hook points, the core's `rawCalls`, and the fields features
// declare on it for themselves (`holdStream`, streaming's; `scope`, sub-agents'; `prepareInput`, the agent's;
// `traceValues`, the layer trace's).
const SHAPES = {
  middleware: optionsSchema({
    name: z.unknown().optional(), run: z.unknown().optional(), model: z.unknown().optional(), tool: z.unknown().optional(),
    holdStream: z.boolean({ error: 'must be true or false' }).optional(), rawCalls: z.boolean({ error: 'must be true or false' }).optional(), scope: z.unknown().optional(),
    prepareInput: z.unknown().optional(), traceValues: z.boolean({ error: 'must be true or false' }).optional(),
  }, { noun: 'a field of a middleware', aliases: { generate: 'model', llm: 'model', toolCall: 'tool', call: 'tool', hold: 'holdStream' } }),
  hook: optionsSchema({
    name: z.unknown().optional(), onStart: z.unknown().optional(), beforeModel: z.unknown().optional(), afterModel: z.unknown().optional(),
    beforeTool: z.unknown().optional(), afterTool: z.unknown().optional(), onEnd: z.unknown().optional(),
  }, { noun: 'a Hook method', aliases: { onFinish: 'onEnd', onStop: 'onEnd', onBegin: 'onStart', beforeToolCall: 'beforeTool', afterToolCall: 'afterTool' } }),
};

function checkMiddleware(mw: Middleware, where: string, label: string): void {
  if (mw.name !== undefined && typeof mw.name !== 'string') throw new TypeError(`${where}: ${label}.name must be a string`);
  const scope = scopeProblem(mw.scope);
  if (scope !== undefined) throw new TypeError(`${where}: ${label}.scope ${scope}`);
}

/** A readable name for an extension: its `name`, else its class name. */
function nameOf(value: unknown): string | undefined {
  const v = value as { name?: unknown; constructor?: { name?: string } };
  if (typeof v.name === 'string' && v.name !== '') return v.name;
  const ctor = v.constructor?.name;
  return ctor && ctor !== 'Object' ? ctor : undefined;
}

/**
 * The layers of an agent, outermost first, in the order they were added:
 * - a middleware is one layer;
 * - all AgentHooks together are one layer, where the first of them was added (their own order,
 *   pre-hooks and post-hooks both in registration order, is not an onion); a HookRegistry's
 *   hooks take part where the registry was given, read live at every call;
 * - each criogen Hook is one layer, named by its `name`, else its class name, else `hook#<i>`;
 *   hooks sharing a name are told apart by position (`RateLimit`, `RateLimit#2`).
 */
export function toMiddleware(extensions: readonly Extension[]): NamedMiddleware[] {
  const layers: NamedMiddleware[] = [];
  let agentHooks: (AgentHook | HookRegistry)[] | undefined;
  const criogen = new HookGroup();
  const seen = new Map<string, number>();
  let hookIndex = 0;
  extensions.forEach((ext, i) => {
    if (ext.dialect === 'middleware') {
      layers.push(namedMiddleware(ext.value as Middleware, `middleware#${i}`));
    } else if (ext.dialect === 'agent-hook') {
      if (agentHooks === undefined) {
        const group: (AgentHook | HookRegistry)[] = (agentHooks = []);
        const current = hookGroup(group);
        layers.push(identifyLayer(adapterLayer(agentHookMiddleware(current)), agentHookIdentity(current)));
      }
      agentHooks.push(ext.value as AgentHook | HookRegistry);
    } else {
      const base = nameOf(ext.value) ?? `hook#${hookIndex}`;
      hookIndex++;
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      const hook = ext.value as Hook;
      const name = count === 1 ? base : `${base}#${count}`;
      layers.push(identifyLayer(adapterLayer(criogenMiddleware(hook, name, criogen)), criogenIdentity(hook, name)));
    }
  });
  return layers;
}

/** A dialect's layer, called as a method of its own object like a user's (the cheaper call). */
function adapterLayer(mw: Middleware & { name: string }): NamedMiddleware {
  return { ...mw, self: mw };
}

/**
 * A native middleware as a layer source. Its hook points are read through the prototype chain
 * and called on the object itself (`self`), so a class instance works and `this` is that
 * instance (a spread copy would drop prototype methods).
 */
function namedMiddleware(mw: Middleware, fallbackName: string): NamedMiddleware {
  const named: NamedMiddleware = { name: mw.name ?? fallbackName, holdStream: mw.holdStream, rawCalls: mw.rawCalls, scope: mw.scope, traceValues: mw.traceValues, self: mw };
  if (typeof mw.run === 'function') named.run = mw.run;
  if (typeof mw.model === 'function') named.model = mw.model;
  if (typeof mw.tool === 'function') named.tool = mw.tool;
  if (typeof mw.prepareInput === 'function') named.prepareInput = mw.prepareInput;
  return named;
}

// How the layer trace names the dialects' layers and tells which of their methods ran.
// AgentHooks have no run methods, so their layer has no run point to name.
const AGENT_HOOK_PAIRS = { tool: ['preToolCall', 'postToolCall'], model: ['preGenerate', 'postGenerate'], run: [] } as const;
const CRIOGEN_PAIRS = { tool: ['beforeTool', 'afterTool'], model: ['beforeModel', 'afterModel'], run: ['onStart', 'onEnd'] } as const;

/** The AgentHook layer: named by the hooks with a method at the hook point; post-hooks run whatever settled the call. */
function agentHookIdentity(current: () => readonly AgentHook[]): LayerIdentity {
  const having = (method: string) => current().filter((hook) => typeof (hook as unknown as Record<string, unknown>)[method] === 'function');
  return {
    source: 'agent-hook',
    name: (point) => [...new Set((AGENT_HOOK_PAIRS[point] as readonly string[]).flatMap(having).map((hook) => hook.name))].join(', ') || AGENT_HOOK_LAYER,
    hooks: (point, ran) => (AGENT_HOOK_PAIRS[point] as readonly string[]).filter((method, i) => having(method).length > 0 && (i === 0 || !ran.threw)),
  };
}

/** A criogen Hook's layer: afterTool does not run while a call waits for approval; afterModel only once the model answered; onEnd always. */
function criogenIdentity(hook: Hook, name: string): LayerIdentity {
  const has = (method: string) => typeof (hook as unknown as Record<string, unknown>)[method] === 'function';
  return {
    source: 'criogen',
    name: () => name,
    hooks: (point, ran) => (CRIOGEN_PAIRS[point] as readonly string[]).filter((method, i) => has(method) && (i === 0 || point === 'run' || (!ran.threw && (point === 'tool' ? !ran.approval : ran.nextCalls > 0)))),
  };
}
