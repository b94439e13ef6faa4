import { optionsSchema, parseOptions, type Logger } from '../../api.js';
import { z } from 'zod';
import { checkAgentHook, type AgentHook } from './agent-hook.js';

const MARK = Symbol.for('koagent.hookRegistry');

const registryOptionsSchema = optionsSchema({ logger: z.unknown().optional() }, { noun: 'an option of HookRegistry', aliases: { log: 'logger', console: 'logger' } });
/** The registry's current hooks, read by the agent's hook layer without a copy. */
const CURRENT: unique symbol = Symbol.for('koagent.hookRegistry.current');

/**
 * Options of `new HookRegistry(options)`.
 *
 * @example const hooks = new HookRegistry({ logger: { warn: (message) => log.warn(message) } });
 *
 * @inline
 */
export interface HookRegistryOptions {
  /** Where the warning about a replaced hook goes (default `console`). */
  logger?: Logger;
}

/**
 * An ordered collection of AgentHooks, keyed by name, for code written against an executor API.
 * Give it to `createAgent({ hooks: registry })`: the agent reads the registry at every call, so a
 * hook registered or removed later takes effect from the next tool or model call on (the stacks
 * are not rebuilt). Registering a second hook under a name replaces the first in its position
 * and logs one warning.
 *
 * @example const hooks = new HookRegistry(); hooks.register(audit); createAgent({ model, hooks });
 */
export class HookRegistry {
  // Replaced, never changed in place: a call in progress keeps the list it started with.
  [CURRENT]: readonly AgentHook[] = Object.freeze([]);
  readonly #logger: Logger;

  constructor(options: HookRegistryOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('new HookRegistry(options): options must be an object { logger? }');
    parseOptions(registryOptionsSchema, options, 'new HookRegistry(options)');
    const logger = options.logger ?? console;
    if (typeof logger?.warn !== 'function') throw new TypeError('new HookRegistry({ logger }): logger must have a warn(message) method (console does)');
    this.#logger = logger;
    Object.defineProperty(this, MARK, { value: true });
  }

  /** Add a hook at the end, or in place of the hook already registered under its name. */
  register(hook: AgentHook): this {
    checkAgentHook(hook, 'HookRegistry.register()');
    this.#put([hook]);
    return this;
  }

  /** Register several hooks in order. All are checked first: a bad one leaves the registry unchanged. */
  registerMany(hooks: Iterable<AgentHook>): this {
    if (typeof (hooks as Iterable<AgentHook> | null)?.[Symbol.iterator] !== 'function') {
      throw new TypeError('HookRegistry.registerMany(hooks): hooks must be an array (or another iterable) of AgentHooks');
    }
    const list = [...hooks];
    list.forEach((hook, i) => checkAgentHook(hook, `HookRegistry.registerMany(): hooks[${i}]`));
    this.#put(list);
    return this;
  }

  /** The hook registered under `name`. */
  get(name: string): AgentHook | undefined {
    return this[CURRENT].find((hook) => hook.name === name);
  }

  /** Whether a hook is registered under `name`. */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** The hooks in the order they run (a copy: changing it does not change the registry). */
  list(): AgentHook[] {
    return [...this[CURRENT]];
  }

  /** Remove the hook registered under `name`; true when there was one. */
  unregister(name: string): boolean {
    const current = this[CURRENT];
    const rest = current.filter((hook) => hook.name !== name);
    if (rest.length === current.length) return false;
    this[CURRENT] = Object.freeze(rest);
    return true;
  }

  /** Remove every hook. */
  clear(): void {
    this[CURRENT] = Object.freeze([]);
  }

  /** How many hooks are registered. A method, as in the AgentHook framework: `hooks.size()`. */
  size(): number {
    return this[CURRENT].length;
  }

  /** Whether `value` is a HookRegistry (also one from another copy of koagent): a marker, not `instanceof`. */
  static is(value: unknown): value is HookRegistry {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
  }

  #put(hooks: AgentHook[]): void {
    const next = [...this[CURRENT]];
    for (const hook of hooks) {
      const at = next.findIndex((h) => h.name === hook.name);
      if (at === -1) {
        next.push(hook);
        continue;
      }
      this.#logger.warn(`HookRegistry: a hook named "${hook.name}" was already registered; the new one replaces it, in its position (#${at + 1} of ${next.length})`);
      next[at] = hook;
    }
    this[CURRENT] = Object.freeze(next);
  }
}

/**
 * The hooks of one agent's AgentHook layer, in registration order: plain hooks and registries,
 * flattened. Without a registry the list never changes; with one, it is flattened again only
 * after a registry changed (each registry swaps its list on change, so identity tells).
 */
export function hookGroup(sources: readonly (AgentHook | HookRegistry)[]): () => readonly AgentHook[] {
  let seen: (readonly AgentHook[] | AgentHook)[] = [];
  let flat: readonly AgentHook[] = [];
  return () => {
    let changed = seen.length !== sources.length;
    for (let i = 0; !changed && i < sources.length; i++) {
      const source = sources[i];
      changed = seen[i] !== (HookRegistry.is(source) ? source[CURRENT] : source);
    }
    if (!changed) return flat;
    seen = sources.map((source) => (HookRegistry.is(source) ? source[CURRENT] : source));
    flat = seen.flatMap((entry) => (Array.isArray(entry) ? entry : [entry as AgentHook]));
    return flat;
  };
}
