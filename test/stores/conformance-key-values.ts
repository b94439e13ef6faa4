// What every store's key-value table (`store.keyValues`) must do: run against the memory,
// SQLite and PostgreSQL stores alike (each store's test file calls it with its own factory).
// Times to live go by a clock the test moves (the store's `clock`). Counters shared by
// processes are in conformance-key-values-processes.ts.
import { describe, expect, it } from 'vitest';
import type { KeyValueStore } from '../../src/middleware.js';
import type { Clock, RunStore } from '../../src/store.js';
import { manualClock, type ManualClock } from '../support/clock.js';

export interface KeyValueFixture {
  /** A new, empty store (on `clock` when given). */
  make(options?: { clock?: Clock }): Promise<RunStore>;
  /**
   * SQL stores: a store with a second connection to its database, to put rows in the key-value
   * table behind the store's back (`exec`, `$1` placeholders) and count them (`count`).
   */
  raw?: () => Promise<{ store: RunStore; exec(text: string, ...params: unknown[]): Promise<void>; count(where: string): Promise<number>; close(): Promise<void> }>;
}

/** Use the key-value store of a new store, on a clock the test moves. */
async function withValues<T>(fixture: KeyValueFixture, use: (values: KeyValueStore, clock: ManualClock) => Promise<T>): Promise<T> {
  const clock = manualClock();
  const store = await fixture.make({ clock });
  try {
    expect(store.keyValues).toBeDefined();
    return await use(store.keyValues!, clock);
  } finally {
    await store.close();
  }
}

export function keyValueConformance(kind: string, fixture: KeyValueFixture): void {
  describe(`${kind} store: key-value values`, () => {
    it('gives back what was set, JSON of every shape, and undefined for a key never set', async () => {
      await withValues(fixture, async (values) => {
        const shapes: unknown[] = [{ reply: { text: 'hï ✓', parts: [1, null, true] } }, 'text', 42.5, 0, null, false, ['a', { b: 2 }]];
        for (const [i, value] of shapes.entries()) await values.set(`k${i}`, value);
        for (const [i, value] of shapes.entries()) expect(await values.get(`k${i}`)).toEqual(value);
        expect(await values.get('never')).toBeUndefined();
      });
    });

    it('replaces a value, and deletes it: true when it was there, false when not', async () => {
      await withValues(fixture, async (values) => {
        await values.set('k', { v: 1 });
        await values.set('k', { v: 2 });
        expect(await values.get('k')).toEqual({ v: 2 });
        expect(await values.delete('k')).toBe(true);
        expect(await values.get('k')).toBeUndefined();
        expect(await values.delete('k')).toBe(false);
      });
    });

    it('forgets a value once its time to live has passed; a value set without one stays', async () => {
      await withValues(fixture, async (values, clock) => {
        await values.set('short', 'soon gone', { ttlMs: 40 });
        await values.set('long', 'stays');
        await clock.advance(39);
        expect(await values.get('short')).toBe('soon gone');
        await clock.advance(1);
        expect(await values.get('short')).toBeUndefined();
        expect(await values.delete('short')).toBe(false);
        expect(await values.get('long')).toBe('stays');
      });
    });

    it('refuses what it could not keep: an empty key, undefined, a bad time to live', async () => {
      await withValues(fixture, async (values) => {
        await expect(values.set('', 1)).rejects.toThrow(/non-empty string/);
        await expect(values.get('')).rejects.toThrow(/non-empty string/);
        await expect(values.set('k', undefined)).rejects.toThrow(/plain JSON/);
        await expect(values.set('k', 1, { ttlMs: -5 })).rejects.toThrow(/ttlMs must be a positive/);
        await expect(values.add('k', Number.NaN)).rejects.toThrow(/finite number/);
      });
    });
  });

  describe(`${kind} store: key-value counters`, () => {
    it('adds from 0 and returns each new total, fractions and negatives too; get reads the number', async () => {
      await withValues(fixture, async (values) => {
        expect(await values.add('n', 2)).toBe(2);
        expect(await values.add('n', 0.5)).toBe(2.5);
        expect(await values.add('n', -1.5)).toBe(1);
        expect(await values.get('n')).toBe(1);
      });
    });

    it('goes on from a number that was set, and starts at delta on a value that is not a number', async () => {
      await withValues(fixture, async (values) => {
        await values.set('n', 40);
        expect(await values.add('n', 2)).toBe(42);
        await values.set('o', { not: 'a number' });
        expect(await values.add('o', 3)).toBe(3);
      });
    });

    it('loses no add of many at once', async () => {
      await withValues(fixture, async (values) => {
        const totals = await Promise.all(Array.from({ length: 40 }, () => values.add('n', 1)));
        expect([...totals].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
        expect(await values.get('n')).toBe(40);
      });
    });

    it('keeps the expiry a counter was created with (a fixed window), then starts again at delta', async () => {
      await withValues(fixture, async (values, clock) => {
        await values.add('window', 1, { ttlMs: 60 });
        await clock.advance(30);
        // A later add keeps the expiry the counter was created with, whatever ttlMs it gives.
        expect(await values.add('window', 1, { ttlMs: 60 })).toBe(2);
        await clock.advance(30);
        expect(await values.get('window')).toBeUndefined();
        expect(await values.add('window', 5, { ttlMs: 60_000 })).toBe(5);
        // The new window's expiry is the one the restart gave: far ahead.
        await clock.advance(100);
        expect(await values.get('window')).toBe(5);
      });
    });

    it('set replaces a counter and its expiry', async () => {
      await withValues(fixture, async (values, clock) => {
        await values.add('n', 7, { ttlMs: 40 });
        await values.set('n', 1);
        await clock.advance(80);
        expect(await values.add('n', 1)).toBe(2);
      });
    });
  });

  const { raw } = fixture;
  if (raw !== undefined) {
    describe(`${kind} store: key-value table upkeep`, () => {
      it('deletes expired rows as writes go by, a bounded batch every hundred writes', async () => {
        const db = await raw();
        try {
          for (let i = 0; i < 250; i++) await db.exec('INSERT INTO koagent_kv (key, value, expires_at) VALUES ($1, $2, 1)', `old${i}`, String(i));
          const expired = () => db.count('expires_at IS NOT NULL AND expires_at < 1000');
          const values = db.store.keyValues!;
          expect(await values.get('old1')).toBeUndefined();
          const left: number[] = [];
          for (let i = 1; i <= 300; i++) {
            await values.set(`new${i % 7}`, i);
            if (i % 50 === 49 || i % 100 === 0) left.push(await expired());
          }
          expect(left).toEqual([250, 250, 150, 150, 150, 50, 50, 50, 0]);
          expect(await db.count('1 = 1')).toBe(7);
        } finally {
          await db.close();
        }
      });
    });
  }
}
