// The types refuse what the runtime refuses: each `@ts-expect-error` below is a compile error
// today (`npm run typecheck` fails with "Unused '@ts-expect-error'" the day it is not), and the
// same call throws at run time.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';

describe('misuse the types refuse', () => {
  it('a bare function given to use() (a middleware is an object { name, tool(ctx, next) })', () => {
    const agent = createAgent({ model: mockModel([]) });
    // @ts-expect-error a middleware is an object, not a function
    expect(() => agent.use(async (_ctx: unknown, next: () => Promise<unknown>) => next())).toThrow(/a middleware is an object/);
  });

  it('a tool whose input schema is not an object (models pass arguments as an object)', () => {
    // @ts-expect-error input must describe an object of arguments
    expect(() => defineTool({ name: 'echo', description: 'Echo', input: z.string(), execute: (text: string) => text })).toThrow(/input must be an object schema/);
  });

  it('stream: false given to agent.stream(), which always streams (run() is the promise)', () => {
    const agent = createAgent({ model: mockModel([]) });
    // @ts-expect-error agent.stream() takes no `stream` option
    expect(() => agent.stream('Hi', { stream: false })).toThrow(/agent\.stream\(\) always streams/);
  });

  it('a misspelled option (the runtime names the one meant)', () => {
    // @ts-expect-error there is no `systemPrompt`: the instructions are `instructions`
    expect(() => createAgent({ model: mockModel([]), systemPrompt: 'Be brief.' })).toThrow('createAgent: systemPrompt is not an option; did you mean `instructions`?');
  });
});
