// Helpers of the durable-run tests: a store whose worker can "die" (every call it makes from
// then on never answers, as a killed process's would not), and a clock the memory store reads.
import { newState } from '../../src/core/vocabulary/state.js';
import type { Message, RunState } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';

/** A new run's state (format 2) of agent `agentName`, as `createRun` gets it. */
export function storedState(runId: string, sessionId: string, agentName: string, messages: Message[] = []): RunState {
  return newState(runId, sessionId, { name: agentName, id: agentName, toolsFingerprint: 'tools' }, messages);
}

/** A view of `store` for one worker; after `die()`, everything it asks of the store hangs forever. */
export function mortal(store: RunStore): { store: RunStore; die(): void; readonly dead: boolean } {
  let dead = false;
  const never = new Promise<never>(() => undefined);
  const view = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (dead ? never : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
  return {
    store: view,
    die: () => void (dead = true),
    get dead() {
      return dead;
    },
  };
}

/** A clock for memoryStore({ now }): it moves only when told. */
export function testClock(start = 1_800_000_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

/** Resolve after every pending promise reaction and timer of this turn has run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
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
