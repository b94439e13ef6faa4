// The types refuse what the runtime refuses: each `@ts-expect-error` below is a compile error
// today (`npm run typecheck` fails with "Unused '@ts-expect-error'" the day it is not), and the
// same call throws at run time.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';

const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ text: z.string() }), execute: ({ text }) => text });

describe('misuse the types refuse', () => {
  it('a bare function given to use() (a middleware is an object { name, tool(ctx, next) })', () => {
    const agent = createAgent({ model: mockModel([]) });
    // @ts-expect-error a middleware is an object, not a function
    expect(() => agent.use(async (_ctx: unknown, next: () => Promise<unknown>) => next())).toThrow(/a middleware is an object/);
  });

  it('a middleware whose tool layer returns the result instead of the outcome (it is not taken for an AgentHook)', async () => {
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'echo', args: { text: 'hi' } }] }, 'Done.']), tools: [echo] });
    // @ts-expect-error a tool layer resolves to the call's outcome ({ result } or { error }), not to its result
    agent.use({ name: 'unwrap', async tool(_ctx, next) { return (await next()).result; } });
    await expect(agent.run('Echo hi')).rejects.toThrow(/unwrap/);
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
