// Random JSON — `__proto__` keys, deep nesting, wrong types — thrown at `resume` and at tool
// arguments. Whatever comes in, the answer is a correct run or a clear koagent error: never code
// `internal`, never a state that cannot be written as JSON, never a touched Object.prototype.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, KoagentError, type RunResult, type RunState } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';

/** JSON values, with `__proto__` and other awkward keys among the object keys. */
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'role', 'args'));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 12 }), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map((entries) => JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`)),
})).value;

/** Nesting far deeper than any real value (100 to 1,000 levels; as JSON text, up to 20,000). */
const deepText = (max: number) => fc.integer({ min: 100, max }).map((levels) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);
const deep = deepText(1_000).map((text) => JSON.parse(text) as unknown);

const anything = fc.oneof({ weight: 4, arbitrary: json }, { weight: 1, arbitrary: deep });
const anyText = fc.oneof({ weight: 4, arbitrary: json.map((v) => JSON.stringify(v) ?? '') }, { weight: 1, arbitrary: deepText(20_000) }, { weight: 1, arbitrary: fc.string() });

function untouchedPrototype(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_NAMES);
  expect(({} as Record<string, unknown>).a).toBeUndefined();
}
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

/** The outcome is a correct run or a koagent error that says what was wrong; any state can be written. */
async function judged(outcome: Promise<RunResult>): Promise<void> {
  let state: RunState | undefined;
  try {
    const result = await outcome;
    expect(['completed', 'suspended']).toContain(result.status);
    state = result.state;
  } catch (error) {
    expect(KoagentError.is(error), String(error)).toBe(true);
    expect((error as KoagentError).code).not.toBe('internal');
    state = (error as { state?: RunState }).state;
  }
  if (state !== undefined) expect(() => JSON.stringify(state)).not.toThrow();
  untouchedPrototype();
}

/** A run that waits for approval of one call, as a template to spoil. */
async function suspendedState(): Promise<{ agent: ReturnType<typeof createAgent>; state: RunState }> {
  const tool = defineTool({ name: 'pay', description: 'Pay', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => `paid ${amount}` });
  const agent = createAgent({ name: 'payer', model: mockModel([{ toolCalls: [{ name: 'pay', args: { amount: 5 }, id: 'p' }] }, 'Paid.', 'Paid again.']), tools: [tool] });
  const result = await agent.run('Pay five');
  return { agent, state: JSON.parse(JSON.stringify(result.state)) };
}

/** Put `value` at a random place in `target` (a key of an object or an index of an array on the way down). */
function spoil(target: unknown, path: number[], value: unknown): unknown {
  if (path.length === 0 || typeof target !== 'object' || target === null) return value;
  const keys = Object.keys(target);
  if (keys.length === 0) return value;
  const k = keys[path[0] % keys.length];
  const copy: Record<string, unknown> = Array.isArray(target) ? ([...target] as unknown as Record<string, unknown>) : { ...target };
  copy[k] = spoil((target as Record<string, unknown>)[k], path.slice(1), value);
  return copy;
}

describe('random input at resume', () => {
  it('a state that is any JSON at all', async () => {
    const { agent } = await suspendedState();
    await fc.assert(fc.asyncProperty(anything, async (state) => judged(agent.resume(state as RunState, { p: true }))), { numRuns: 150 });
  });

  it('a real suspended state with one value somewhere replaced by any JSON', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), anything, async (path, value) => {
      const { agent, state } = await suspendedState();
      await judged(agent.resume(spoil(state, path, value) as RunState, { p: true }));
    }), { numRuns: 200 });
  });

  it('decisions that are any JSON', async () => {
    await fc.assert(fc.asyncProperty(anything, async (decisions) => {
      const { agent, state } = await suspendedState();
      await judged(agent.resume(state, decisions as never));
    }), { numRuns: 100 });
  });
});

describe('random input as tool arguments', () => {
  it('whatever the model writes as arguments (an object, JSON text, or anything), the run completes or fails clearly', async () => {
    const tool = defineTool({ name: 'echo', description: 'Echo', input: z.looseObject({ text: z.string().optional() }), execute: (args) => args });
    await fc.assert(fc.asyncProperty(fc.oneof(anything, anyText), async (args) => {
      const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'echo', args }] }, 'Done.']), tools: [tool] }).use({ name: 'any-layer', tool: (_ctx, next) => next() });
      await judged(agent.run('Echo'));
    }), { numRuns: 200 });
  });
});
