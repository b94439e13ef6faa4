// The memory store against the conformance suites every store passes, and what is its own.
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/index.js';
import { systemClock, type Clock } from '../../src/store.js';
import { storedState } from '../support/durable.js';
import { runConformance } from './conformance-runs.js';
import { sessionConformance } from './conformance-sessions.js';
import { keyValueConformance } from './conformance-key-values.js';
import { eventLogConformance } from './conformance-events.js';

const make = async (options: { leaseMs?: number; clock?: Clock } = {}) => memoryStore(options);
runConformance('memory', make);
sessionConformance('memory', make);
keyValueConformance('memory', { make });
eventLogConformance('memory', async (options) => {
  const store = memoryStore(options);
  return { writer: store, reader: store, close: () => store.close() };
});

describe('memoryStore options', () => {
  it('refuse what is not an option, naming it', () => {
    expect(() => memoryStore({ leaseMs: 0 })).toThrow('memoryStore(options): leaseMs must be a number of milliseconds ≥ 10 (got 0)');
    expect(() => memoryStore({ now: 5 as never })).toThrow('memoryStore(options): now must be a function () => milliseconds (got 5)');
    expect(() => memoryStore({ clock: { now: () => 0 } as never })).toThrow('memoryStore(options): clock must be an object { now(): number, setTimer(ms, callback, options?) } (systemClock, or one of your own) (it has no setTimer method)');
    expect(() => memoryStore({ clock: systemClock, now: Date.now })).toThrow('memoryStore(options): give clock or now, not both (now is a clock without timers of its own)');
    expect(() => memoryStore({ timers: systemClock } as never)).toThrow('memoryStore(options): timers is not an option of memoryStore; did you mean `clock`?');
    expect(() => memoryStore({ retention: { olderThanMs: 'week' as never } })).toThrow('memoryStore(options): retention.olderThanMs must be a number of milliseconds ≥ 0 (got the string "week")');
    expect(() => memoryStore(null as never)).toThrow('memoryStore(options): options must be an object');
    expect(() => memoryStore({ leasMs: 50 } as never)).toThrow('memoryStore(options): leasMs is not an option of memoryStore; did you mean `leaseMs`?');
    expect(() => memoryStore({ retention: { olderThan: 5 } } as never)).toThrow('memoryStore(options): retention.olderThan is not a field of a retention policy; did you mean `olderThanMs`?');
  });

  it('prunes by its retention option, on its own clock', async () => {
    let now = 1_000_000;
    const store = memoryStore({ now: () => now, retention: { olderThanMs: 1000 } });
    const created = await store.createRun({ state: storedState('r', 's', 'a'), owner: 'w' });
    await store.checkpoint((created as { lease: never }).lease, { status: 'completed', segment: 1, steps: 0, usage: '{}', stopReason: 'final', error: null }, true);
    now += 999;
    expect(await store.prune()).toBe(0);
    now += 2;
    expect(await store.prune()).toBe(1);
  });
});
