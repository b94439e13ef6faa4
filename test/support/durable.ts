// Helpers of the durable-run tests: a store whose worker can "die" (every call it makes from
// then on never answers, as a killed process's would not). Their clock is test/support/clock.ts.
import { newState } from '../../src/core/vocabulary/state.js';
import type { Message, RunState } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';

/** A new run's state (format 2) of agent `agentName`, as `createRun` gets it. */
export function storedState(runId: string, sessionId: string, agentName: string, messages: Message[] = []): RunState {
  return newState(runId, sessionId, { name: agentName, id: agentName, toolsFingerprint: 'tools' }, messages);
}

/**
 * A view of `store` for one worker; after `die()`, everything it asks of the store hangs forever.
 * `died` resolves once it died and the calls it had made before settled: the store holds what
 * the worker wrote, and nothing more will come.
 */
export function mortal(store: RunStore): { store: RunStore; die(): void; readonly dead: boolean; readonly died: Promise<void> } {
  let dead = false;
  let die!: () => void;
  const never = new Promise<never>(() => undefined);
  const inFlight = new Set<Promise<unknown>>();
  const death = new Promise<void>((resolve) => (die = resolve));
  const died = death.then(async () => {
    // A call may start another as it settles (a checkpoint after a checkpoint): until none is left.
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  });
  const view = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (dead) return never;
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) {
          inFlight.add(result);
          void result.then(() => inFlight.delete(result), () => inFlight.delete(result));
        }
        return result;
      };
    },
  });
  return {
    store: view,
    die: () => {
      dead = true;
      die();
    },
    get dead() {
      return dead;
    },
    died,
  };
}

/** `store` with some of its methods replaced (the others called on the store itself). */
export function overriding(store: RunStore, overrides: Partial<RunStore>): RunStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (Object.hasOwn(overrides, property)) return (overrides as Record<string | symbol, unknown>)[property];
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
