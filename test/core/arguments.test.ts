// A model's arguments for one call, bounded in depth and size: the walk that checks them.
import { describe, expect, it } from 'vitest';
import { argsObject, DEFAULT_ARGUMENT_BOUNDS } from '../../src/core/arguments.js';

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('checking the bounds of arguments', () => {
  it('stops at the depth bound, however deep the arguments go', () => {
    expect(argsObject(nested(10_000), DEFAULT_ARGUMENT_BOUNDS)).toBe('the arguments are nested deeper than 64 levels');
  });

  it('walks arguments deeper than a call stack allows when the bound lets them be that deep', () => {
    const deep = nested(200_000);
    expect(argsObject(deep, { maxDepth: 300_000, maxBytes: 100_000_000 })).toBe(deep);
  });

  it('counts the bytes of JSON the arguments take, and refuses past maxBytes', () => {
    expect(argsObject({ text: 'x'.repeat(90) }, { maxDepth: 64, maxBytes: 100 })).toEqual({ text: 'x'.repeat(90) });
    expect(argsObject({ text: 'x'.repeat(100) }, { maxDepth: 64, maxBytes: 100 })).toBe('the arguments are larger than the 100 bytes of JSON allowed');
    expect(argsObject({ list: [1, 2, 3], deep: { k: 'v' } }, { maxDepth: 2, maxBytes: 1_000 })).toEqual({ list: [1, 2, 3], deep: { k: 'v' } });
    expect(argsObject({ list: [1, 2, 3], deep: { k: 'v' } }, { maxDepth: 1, maxBytes: 1_000 })).toBe('the arguments are nested deeper than 1 levels');
  });

  it('refuses a "__proto__" key at any depth', () => {
    expect(argsObject(JSON.parse('{"a":{"b":{"__proto__":{"admin":true}}}}'))).toBe('the arguments contain a "__proto__" key, which is refused');
  });
});
