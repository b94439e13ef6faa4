// AgentHooks that throw, return something that is no outcome, or are malformed. Test names
// quote the seed (000_…txt) or DESIGN.md §3.
import { describe, expect, it } from 'vitest';
import { createAgent, RunFailedError, ToolError } from '../../../src/index.js';
import type { AgentHook } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { callTool, searchTool } from './fixtures.js';

async function failure(hook: AgentHook) {
  const model = mockModel([callTool('search', { query: 'q' }), 'ok']);
  const search = searchTool();
  const error = await createAgent({ model, tools: [search.tool], hooks: [{ name: 'fine', preToolCall() {} }, hook] }).run('go').catch((e: unknown) => e);
  return { error: error as RunFailedError, model, search };
}

describe('a hook that throws', () => {
  const boom = new Error('hook exploded');
  it.each([
    ['preToolCall', { name: 'bad', preToolCall() { throw boom; } }],
    ['postToolCall', { name: 'bad', postToolCall() { throw boom; } }],
    ['preGenerate', { name: 'bad', preGenerate() { throw boom; } }],
    ['postGenerate', { name: 'bad', postGenerate() { throw boom; } }],
    ['an async preToolCall', { name: 'bad', async preToolCall() { await Promise.resolve(); throw boom; } }],
  ] as [string, AgentHook][])('"a hook that throws still rejects the run" (%s): hook_failed, the hook\'s name as layer, what it threw as cause', async (_method, hook) => {
    const { error } = await failure(hook);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'bad', cause: boom, message: 'bad failed: hook exploded' });
    expect(error.state.status).toBe('failed');
  });

  it('"hooks are trusted code: the error is not turned into a tool result for the model"', async () => {
    const { model, search } = await failure({ name: 'bad', preToolCall() { throw new Error('nope'); } });
    expect(model.calls).toHaveLength(1);
    expect(search.calls).toEqual([]);
  });

  it('a thrown ToolError rejects the run too (unlike in a criogen beforeTool)', async () => {
    const thrown = new ToolError('no such user');
    const { error, model } = await failure({ name: 'strict', preToolCall() { throw thrown; } });
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'strict', cause: thrown });
    expect(model.calls).toHaveLength(1);
  });

  it('a thrown non-Error value is the cause as is', async () => {
    const { error } = await failure({ name: 'odd', postToolCall() { throw 'plain text'; } });
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'odd', cause: 'plain text' });
  });
});

describe('a hook that returns something that is no outcome', () => {
  it.each([
    ['a string', 'Not allowed', /"bad" returned "Not allowed" from preToolCall; return nothing, \{ deny: reason \}, \{ result \} or \{ input \} \(to deny the call, return \{ deny: "Not allowed" \}\)/],
    ['an object with none of the keys', { denied: 'typo' }, /returned an object with none of deny, result or input \(keys: denied\) from preToolCall/],
    ['an object with two of the keys', { deny: 'x', result: 1 }, /returned an object with deny and result together from preToolCall; return exactly one of/],
    ['a deny that is not a string', { deny: 42 }, /returned \{ deny: 42 \} from preToolCall; the reason must be a string/],
  ])('from preToolCall, %s fails the run, naming the hook and the fix', async (_what, value, message) => {
    const { error, search } = await failure({ name: 'bad', preToolCall: () => value as never });
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'bad' });
    expect(error.message).toMatch(message);
    expect(search.calls).toEqual([]);
  });

  it('from postToolCall, an object without result fails the run, naming the hook and the fix', async () => {
    const { error } = await failure({ name: 'bad', postToolCall: () => ({ value: 'x' }) as never });
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'bad' });
    expect(error.message).toMatch(/"bad" returned \{"value":"x"\} from postToolCall; return nothing to keep the result, or \{ result \} to replace what the model sees/);
  });

  it('numbers and booleans count as nothing, so `(ctx) => seen.push(ctx.toolName)` only watches', async () => {
    const seen: string[] = [];
    const model = mockModel([callTool('search', { query: 'q' }), 'ok']);
    const search = searchTool();
    const hook = { name: 'arrow', preToolCall: (ctx: { toolName: string }) => seen.push(ctx.toolName), postToolCall: () => false } as unknown as AgentHook;
    const result = await createAgent({ model, tools: [search.tool], hooks: [hook] }).run('go');
    expect(result.text).toBe('ok');
    expect(search.calls).toEqual([{ query: 'q' }]);
    expect(seen).toEqual(['search']);
  });

  it('an empty deny reason still denies, with a message naming the hook', async () => {
    const model = mockModel([callTool('search', { query: 'q' }), 'ok']);
    await createAgent({ model, tools: [searchTool().tool], hooks: [{ name: 'terse', preToolCall: () => ({ deny: '' }) }] }).run('go');
    expect(model.calls[1].messages.at(-1)).toMatchObject({ content: 'Error (denied): Denied by hook terse' });
  });
});

describe('malformed AgentHooks are refused where they are given', () => {
  const model = mockModel([]);
  it('"an object that mixes this dialect\'s methods with the other dialect\'s is a TypeError naming it"', () => {
    const mixed = { name: 'mixed', preToolCall() {}, beforeTool() {} };
    expect(() => createAgent({ model, hooks: [mixed as never] })).toThrow(TypeError);
    expect(() => createAgent({ model, hooks: [mixed as never] })).toThrow('createAgent({ hooks }): mixed mixes preToolCall (AgentHook) and beforeTool (Hook); split it into one object per kind');
    expect(() => createAgent({ model }).use(mixed as never)).toThrow('agent.use(): mixed mixes preToolCall (AgentHook) and beforeTool (Hook)');
  });

  it('an AgentHook mixed with middleware hook points is refused the same way', () => {
    expect(() => createAgent({ model }).use({ name: 'both', tool: (_c: unknown, next: () => unknown) => next(), postGenerate() {} } as never)).toThrow(/both mixes tool \(middleware\) and postGenerate \(AgentHook\)/);
  });

  it('an AgentHook needs a name: it appears in errors, permission records and replacedByHook', () => {
    expect(() => createAgent({ model, hooks: [{ preToolCall() {} } as never] })).toThrow(new TypeError("createAgent({ hooks }): the AgentHook with preToolCall has no name; give it name: '<a non-empty string>' (the name appears in errors, permission records and replacedByHook)"));
    expect(() => createAgent({ model }).use({ name: '', postToolCall() {} } as never)).toThrow(/agent\.use\(\): the AgentHook with postToolCall has no name/);
  });

  it('an AgentHook method that is there must be a function', () => {
    expect(() => createAgent({ model, hooks: [{ name: 'half', preToolCall() {}, postToolCall: 'later' } as never] })).toThrow('createAgent({ hooks }): AgentHook "half".postToolCall must be a function (or left out), got string');
  });

  it('agent.use(hook) takes an AgentHook, and it joins the AgentHooks given to createAgent, after them', async () => {
    const log: string[] = [];
    const agent = createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks: [{ name: 'first', preToolCall() { log.push('first'); } }] });
    agent.use({ name: 'second', preToolCall() { log.push('second'); } });
    await agent.run('go');
    expect(log).toEqual(['first', 'second']);
  });
});
