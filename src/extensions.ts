import { agentHookMiddleware, type AgentHook } from './dialects/agent-hook.js';
import { criogenMiddleware, type Hook } from './dialects/criogen.js';
import { dialectOf, nameOf, type Dialect, type Middleware } from './middleware.js';
import type { NamedMiddleware } from './stacks.js';

/** Something given to `use()`, `middleware` or `hooks`, with its dialect recognised once. */
export interface Extension {
  dialect: Dialect;
  value: object;
}

export function extension(value: unknown, where: string): Extension {
  return { dialect: dialectOf(value, where), value: value as object };
}

/**
 * The layers of an agent, outermost first, in the order they were added:
 * - a middleware is one layer;
 * - all AgentHooks together are one layer, where the first of them was added (their own order,
 *   pre-hooks and post-hooks both in registration order, is not an onion);
 * - each criogen Hook is one layer, named by its `name`, else its class name, else `hook#<i>`;
 *   hooks sharing a name are told apart by position (`RateLimit`, `RateLimit#2`).
 */
export function toMiddleware(extensions: readonly Extension[]): NamedMiddleware[] {
  const layers: NamedMiddleware[] = [];
  let agentHooks: AgentHook[] | undefined;
  const seen = new Map<string, number>();
  let hookIndex = 0;
  extensions.forEach((ext, i) => {
    if (ext.dialect === 'middleware') {
      const mw = ext.value as Middleware;
      layers.push({ ...mw, name: mw.name ?? `middleware#${i}` } as NamedMiddleware);
    } else if (ext.dialect === 'agent-hook') {
      if (agentHooks === undefined) {
        const group: AgentHook[] = (agentHooks = []);
        layers.push(agentHookMiddleware(() => group));
      }
      agentHooks.push(ext.value as AgentHook);
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
