// How error messages show a value they were given: its JSON, cut short; otherwise its kind.
import { describe, expect, it } from 'vitest';
import { preview } from '../../src/core/json.js';

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
