// A model's arguments for one call, bounded in depth and size: the walk that checks them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argsObject, DEFAULT_ARGUMENT_BOUNDS } from '../../../src/core/run/arguments.js';

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

  it('counts an array by its elements and an object by its own keys, as JSON does', () => {
    // "list" (4 + 4) and three numbers (8 + 1 each): 35 bytes.
    expect(argsObject({ list: [1, 2, 3] }, { maxDepth: 64, maxBytes: 35 })).toEqual({ list: [1, 2, 3] });
    expect(argsObject({ list: [1, 2, 3] }, { maxDepth: 64, maxBytes: 34 })).toBe('the arguments are larger than the 34 bytes of JSON allowed');
    // What an object inherits is no part of its JSON, however large.
    const inherited = Object.assign(Object.create({ big: 'x'.repeat(10_000) }) as Record<string, unknown>, { a: 1 });
    expect(argsObject(inherited, { maxDepth: 64, maxBytes: 100 })).toBe(inherited);
  });

  it('walks keys a model may write that shadow Object methods, and objects without a prototype', () => {
    const shadowing = JSON.parse('{"hasOwnProperty": 1, "constructor": "x"}') as Record<string, unknown>;
    expect(argsObject(shadowing, { maxDepth: 64, maxBytes: 100 })).toBe(shadowing);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 'x'.repeat(200) });
    expect(argsObject(bare, { maxDepth: 64, maxBytes: 100 })).toBe('the arguments are larger than the 100 bytes of JSON allowed');
    expect(argsObject(bare, { maxDepth: 2_000, maxBytes: 100 })).toBe('the arguments are larger than the 100 bytes of JSON allowed');
  });

  it('counts the same with a bound too deep for recursion, where it walks with a stack of its own', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 })),
    })).value;
    // The bytes a walk counts: the smallest maxBytes it accepts the arguments with.
    const counted = (args: Record<string, unknown>, maxDepth: number): number => {
      let low = 0;
      let high = 1_000_000;
      while (low < high) {
        const mid = Math.floor((low + high) / 2);
        if (typeof argsObject(args, { maxDepth, maxBytes: mid }) === 'string') low = mid + 1;
        else high = mid;
      }
      return low;
    };
    fc.assert(fc.property(fc.dictionary(fc.string({ maxLength: 6 }).filter((key) => key !== '__proto__'), json, { maxKeys: 5 }), (args) => {
      expect(counted(args, 5_000)).toBe(counted(args, 64));
    }), { numRuns: 200 });
  });

  it('refuses a "__proto__" key at any depth', () => {
    expect(argsObject(JSON.parse('{"a":{"b":{"__proto__":{"admin":true}}}}'))).toBe('the arguments contain a "__proto__" key, which is refused');
  });
});
