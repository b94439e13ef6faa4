// How error messages show a value they were given (its JSON, cut short; otherwise its kind), and
// when two JSON values are the same.
import { describe, expect, it } from 'vitest';
import { preview, sameJson } from '../../../src/core/vocabulary/json.js';

describe('preview', () => {
  it('shows a value as its JSON', () => {
    expect(preview({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(preview('text')).toBe('"text"');
    expect(preview(null)).toBe('null');
  });

  it('cuts JSON longer than the limit to exactly the limit, ending in "..."', () => {
    const long = 'x'.repeat(200);
    expect(preview(long)).toHaveLength(120);
    expect(preview(long, 80)).toBe(`"${'x'.repeat(76)}...`);
    expect(preview('x'.repeat(78), 80)).toBe(`"${'x'.repeat(78)}"`);
  });

  it('names a function rather than printing its source', () => {
    expect(preview(() => 'secret')).toBe('a function');
  });

  it('shows what has no JSON as a string, even an object without toString', () => {
    expect(preview(undefined)).toBe('undefined');
    expect(preview(10n)).toBe('10');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(preview(cyclic)).toBe('[object Object]');
    const bare = Object.create(null) as Record<string, unknown>;
    bare.self = bare;
    expect(preview(bare)).toBe('[object Object]');
  });
});

describe('sameJson', () => {
  it('compares objects by their keys and values, in any order, and arrays element by element', () => {
    expect(sameJson({ a: 1, b: { c: [1, 'x', null] } }, { b: { c: [1, 'x', null] }, a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 2 })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson([1, 2], [1, 2, 3])).toBe(false);
    expect(sameJson('x', 'x')).toBe(true);
    expect(sameJson(1, '1')).toBe(false);
  });

  it('counts a key whose value is undefined as absent, as JSON does', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(sameJson({ a: 1, b: 2 }, { a: 1, c: 2 })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 0 })).toBe(false);
    expect(sameJson({ a: 1, b: 0 }, { a: 1 })).toBe(false);
  });

  it('tells an array from an object with the same keys, and null from an empty object', () => {
    expect(sameJson([1], { 0: 1 })).toBe(false);
    expect(sameJson(null, {})).toBe(false);
    expect(sameJson({}, {})).toBe(true);
  });

  it('reads own keys only', () => {
    const inherited = Object.create({ a: 1 }) as Record<string, unknown>;
    expect(sameJson(inherited, {})).toBe(true);
    expect(sameJson(inherited, { a: 1 })).toBe(false);
  });
});
