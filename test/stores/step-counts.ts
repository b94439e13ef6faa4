// Runs of a given number of durable steps, and what a step costs a store by its counters: the
// helpers of step-cost.test.ts (SQLite) and step-cost-postgres.test.ts.
import { expect } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';

/** A model that calls the tool `steps` times, one call a reply, then answers. */
const scripted = (steps: number) => mockModel([...Array.from({ length: steps }, (_, i) => ({ toolCalls: [{ name: 'add', args: { a: i, b: 1 } }] })), 'done']);

const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

/** Run an agent on `store` whose run takes `steps` steps of one tool call each. */
export async function run(store: RunStore, steps: number): Promise<void> {
  const result = await createAgent({ model: scripted(steps), maxSteps: steps + 1, tools: [add], store }).run('go');
  expect(result.usage.toolCalls).toBe(steps);
}

/** Commits and statements per step: the difference between a long run and a short one, so the run's start and end cancel out. */
export async function perStep(store: RunStore): Promise<{ commits: number; statements: number }> {
  const counts = async (steps: number) => {
    const before = store.stats;
    await run(store, steps);
    return { commits: store.stats.writes - before.writes, statements: (store.stats.statements ?? 0) - (before.statements ?? 0) };
  };
  const short = await counts(5);
  const long = await counts(25);
  return { commits: (long.commits - short.commits) / 20, statements: (long.statements - short.statements) / 20 };
}
