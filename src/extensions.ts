import { agentHookMiddleware, checkAgentHook, type AgentHook } from './dialects/agent-hook.js';
import { hookGroup, isHookRegistry, type HookRegistry } from './dialects/hook-registry.js';
import { criogenMiddleware, type Hook } from './dialects/criogen.js';
import { dialectOf, nameOf, type Dialect, type Middleware } from './middleware.js';
import type { NamedMiddleware } from './stacks.js';

/** Something given to `use()`, `middleware` or `hooks`, with its dialect recognised once. */
export interface Extension {
  dialect: Dialect;
  value: object;
}

export function extension(value: unknown, where: string): Extension {
  // A registry joins the AgentHook layer as a whole, so hooks registered later take part too.
  if (isHookRegistry(value)) return { dialect: 'agent-hook', value };
  const dialect = dialectOf(value, where);
  if (dialect === 'agent-hook') checkAgentHook(value, where);
  return { dialect, value: value as object };
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
  const seen = new Map<string, number>();
  let hookIndex = 0;
  extensions.forEach((ext, i) => {
    if (ext.dialect === 'middleware') {
      layers.push(namedMiddleware(ext.value as Middleware, `middleware#${i}`));
    } else if (ext.dialect === 'agent-hook') {
      if (agentHooks === undefined) {
        const group: (AgentHook | HookRegistry)[] = (agentHooks = []);
        layers.push(agentHookMiddleware(hookGroup(group)));
      }
      agentHooks.push(ext.value as AgentHook | HookRegistry);
    } else {
      const base = nameOf(ext.value) ?? `hook#${hookIndex}`;
      hookIndex++;
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      layers.push(criogenMiddleware(ext.value as Hook, count === 1 ? base : `${base}#${count}`));
    }
  });
  return layers;
}

/**
 * A native middleware as a layer source. Its hook points are read through the prototype chain
 * and bound to the object itself, so a class instance works and `this` is that instance (a
 * spread copy would drop prototype methods).
 */
function namedMiddleware(mw: Middleware, fallbackName: string): NamedMiddleware {
  const named: NamedMiddleware = { name: mw.name ?? fallbackName, holdStream: mw.holdStream, scope: mw.scope };
  if (typeof mw.run === 'function') named.run = mw.run.bind(mw);
  if (typeof mw.model === 'function') named.model = mw.model.bind(mw);
  if (typeof mw.tool === 'function') named.tool = mw.tool.bind(mw);
  return named;
}
