// memoryKeyValues and keyValuesOf: the key-value contract layers keep cross-run state in
// (caches, rate-limit windows, a session's counts), as the memory store gives it.
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/index.js';
import { keyValuesOf } from '../../src/stores/key-values.js';
import { memoryKeyValues } from '../../src/middleware.js';

describe('memoryKeyValues: values', () => {
  it('gives back what was set, as a copy no caller shares', async () => {
    const values = memoryKeyValues();
    const value = { reply: { text: 'hi' } };
    await values.set('k', value);
    value.reply.text = 'changed after set';
    const read = (await values.get('k')) as typeof value;
    expect(read).toEqual({ reply: { text: 'hi' } });
    read.reply.text = 'changed after get';
    expect(await values.get('k')).toEqual({ reply: { text: 'hi' } });
  });

  it('forgets a value once its time to live has passed', async () => {
    let now = 1_000;
    const values = memoryKeyValues({ now: () => now });
    await values.set('k', 1, { ttlMs: 100 });
    now += 99;
    expect(await values.get('k')).toBe(1);
    now += 1;
    expect(await values.get('k')).toBeUndefined();
    expect(await values.delete('k')).toBe(false);
  });

  it('refuses what it could not keep: an empty key, undefined, a bad time to live', async () => {
    const values = memoryKeyValues();
    await expect(values.set('', 1)).rejects.toThrow(/non-empty string/);
    await expect(values.set('k', undefined)).rejects.toThrow(/plain JSON/);
    await expect(values.set('k', 1, { ttlMs: -5 })).rejects.toThrow(/ttlMs must be a positive/);
  });
});

describe('memoryKeyValues: counters', () => {
  it('adds from 0 and returns each new total; many adds at once lose none', async () => {
    const values = memoryKeyValues();
    expect(await values.add('n', 2)).toBe(2);
    const totals = await Promise.all(Array.from({ length: 50 }, () => values.add('n', 1)));
    expect(Math.max(...totals)).toBe(52);
    expect(await values.get('n')).toBe(52);
  });

  it('keeps the expiry a counter was created with (a fixed window), then starts again from 0', async () => {
    let now = 0;
    const values = memoryKeyValues({ now: () => now });
    await values.add('window', 1, { ttlMs: 1_000 });
    now = 900;
    expect(await values.add('window', 1, { ttlMs: 1_000 })).toBe(2);
    now = 1_000;
    expect(await values.add('window', 1, { ttlMs: 1_000 })).toBe(1);
  });

  it('refuses a delta that is not a finite number', async () => {
    await expect(memoryKeyValues().add('n', Number.NaN)).rejects.toThrow(/finite number/);
  });
});

describe('keyValuesOf', () => {
  it("takes a key-value store as it is, a run store's own, or makes one in memory", async () => {
    const own = memoryKeyValues();
    expect(keyValuesOf(own)).toBe(own);
    const store = memoryStore();
    expect(keyValuesOf(store)).toBe(store.keyValues);
    const fresh = keyValuesOf(undefined);
    await fresh.set('k', 1);
    expect(await keyValuesOf(undefined).get('k')).toBeUndefined();
  });

  it('names what a store must have when it has none', () => {
    expect(() => keyValuesOf({} as never)).toThrow(/key-value store \(get, set, add, delete\) or a run store that has one/);
  });
});
