// What a model writes is data, never code or structure koagent trusts: a `__proto__` key stays a
// key, a call id is only an id, and arguments past the bounds settle as a validation error while
// the run state stays writable as JSON.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent } from '../../src/index.js';
import type { Hook } from '../../src/hooks.js';
import { mockModel } from '../../src/testing/index.js';
import { toolMessages } from '../support/core.js';

/** A shell tool that records exactly what it was called with. */
function shell() {
  const received: Record<string, unknown>[] = [];
  const tool = defineTool({ name: 'shell', description: 'Run a command', input: z.looseObject({ cmd: z.string() }), execute: (args) => { received.push(args); return 'ran'; } });
  return { tool, received };
}

const pollutingArgs = () => JSON.parse('{"cmd":"ls","__proto__":{"sudo":true}}') as Record<string, unknown>;

describe('a "__proto__" key in the model\'s arguments stays a key', () => {
  it('settles the call as a validation error the model reads: no rule is asked, no human, and the tool does not run', async () => {
    const { tool, received } = shell();
    const ruleSaw: unknown[] = [];
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ name: 'shell', args: pollutingArgs(), id: 'c1' }] }, 'Done.']),
      tools: [tool],
      permissions: [{ tool: 'shell', when: (_name, args) => { ruleSaw.push(args); return true; }, decision: 'ask' }],
    }).use({ name: 'any-layer', tool: (_ctx, next) => next() });
    const result = await agent.run('List files');
    expect(result.status).toBe('completed');
    expect(toolMessages(result.messages)[0].metadata?.error).toEqual({ kind: 'validation', message: 'Invalid arguments for shell: the arguments contain a "__proto__" key, which is refused' });
    expect(ruleSaw).toEqual([]);
    expect(received).toEqual([]);
    // The transcript keeps a note in their place: no reader of the state meets the key either.
    expect(result.state.messages[1]).toMatchObject({ toolCalls: [{ args: 'koagent refused these arguments: the arguments contain a "__proto__" key, which is refused' }] });
    expect(({} as { sudo?: unknown }).sudo).toBeUndefined();
  });

  it('also when a layer hands such arguments on (a criogen beforeTool, say)', async () => {
    const { tool, received } = shell();
    const sneaky: Hook = { name: 'sneaky', beforeTool: (call) => ({ ...call, args: pollutingArgs() }) };
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ name: 'shell', args: { cmd: 'ls' } }] }, 'Done.']), tools: [tool], hooks: [sneaky] }).run('Go');
    expect((toolMessages(result.messages)[0].metadata?.error as { message: string }).message).toMatch(/"__proto__" key, which is refused/);
    expect(received).toEqual([]);
  });

  it('a criogen hook\'s { state } with a "__proto__" key is kept as a key, and nothing is polluted', async () => {
    const hook: Hook = { name: 'keeper', onStart: () => ({ state: JSON.parse('{"__proto__":{"admin":true},"n":1}') }) };
    const result = await createAgent({ model: mockModel(['Hi.']), hooks: [hook] }).run('Hello');
    const kept = result.state.hookState.keeper as Record<string, unknown>;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect((kept as { admin?: unknown }).admin).toBeUndefined();
    expect(Object.keys(kept).sort()).toEqual(['__proto__', 'n']);
    expect(({} as { admin?: unknown }).admin).toBeUndefined();
  });
});

describe('a tool call id is the model\'s string, never routing', () => {
  it('a pending call whose id contains "/" is approved like any other', async () => {
    const { tool, received } = shell();
    const gated = defineTool({ name: 'shell', description: tool.description, input: z.object({ cmd: z.string() }), needsApproval: true, execute: (args) => { received.push(args); return 'ran'; } });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'shell', args: { cmd: 'ls' }, id: 'tool/../call/1' }] }, 'Done.']), tools: [gated] });
    const paused = await agent.run('List');
    expect(paused.pendingApprovals.map((p) => p.toolCallId)).toEqual(['tool/../call/1']);
    const done = await agent.resume(paused.state, { 'tool/../call/1': true });
    expect(done.text).toBe('Done.');
    expect(received).toEqual([{ cmd: 'ls' }]);
  });
});

describe('arguments past the bounds settle as a validation error, and the state stays writable', () => {
  const deep = (levels: number) => {
    let value: unknown = 'bottom';
    for (let i = 0; i < levels; i++) value = { next: value };
    return value as Record<string, unknown>;
  };

  it('10,000 levels deep: the model reads why, the transcript keeps a note, JSON.stringify(state) works', async () => {
    const { tool, received } = shell();
    const model = mockModel([{ toolCalls: [{ name: 'shell', args: deep(10_000), id: 'c1' }] }, 'I will not do that again.']);
    const result = await createAgent({ model, tools: [tool] }).run('Go');
    expect(received).toEqual([]);
    const answer = toolMessages(result.messages)[0];
    expect(answer.metadata?.error).toEqual({ kind: 'validation', message: 'Invalid arguments for shell: the arguments are nested deeper than 64 levels' });
    expect(() => JSON.stringify(result.state)).not.toThrow();
    expect(result.messages[1]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'c1', name: 'shell', args: 'koagent refused these arguments: the arguments are nested deeper than 64 levels' }] });
    expect(JSON.stringify(model.calls[1].messages)).not.toContain('"next":{"next"');
  });

  it('the bounds are the agent\'s to set: toolArguments { maxDepth, maxBytes }', async () => {
    const { tool, received } = shell();
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ name: 'shell', args: { cmd: 'x'.repeat(500) } }, { name: 'shell', args: { cmd: 'ls', opts: deep(4) } }] }, 'Ok.']),
      tools: [tool],
      toolArguments: { maxBytes: 100, maxDepth: 3 },
    });
    const result = await agent.run('Go');
    expect(received).toEqual([]);
    expect(toolMessages(result.messages).map((m) => (m.metadata?.error as { message: string }).message)).toEqual([
      'Invalid arguments for shell: the arguments are larger than the 100 bytes of JSON allowed',
      'Invalid arguments for shell: the arguments are nested deeper than 3 levels',
    ]);
  });

  it('a listener that grows the kept arguments in place does not get them past the bounds to the tool', async () => {
    const { tool, received } = shell();
    const onEvent = (event: AgentEvent) => {
      if (event.type === 'model.done') for (const call of event.message.toolCalls ?? []) (call.args as Record<string, unknown>).cmd = 'x'.repeat(500);
    };
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ name: 'shell', args: { cmd: 'ls' } }] }, 'Ok.']), tools: [tool], toolArguments: { maxBytes: 100 }, onEvent }).run('Go');
    expect(received).toEqual([]);
    expect((toolMessages(result.messages)[0].metadata?.error as { message: string }).message).toBe('Invalid arguments for shell: the arguments are larger than the 100 bytes of JSON allowed');
  });

  it('arguments given as JSON text past the size bound are refused before they are parsed', async () => {
    const { tool } = shell();
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ name: 'shell', args: `{"cmd":"${'y'.repeat(2_000)}"}` }] }, 'Ok.']), tools: [tool], toolArguments: { maxBytes: 1_000 } }).run('Go');
    expect((toolMessages(result.messages)[0].metadata?.error as { message: string }).message).toMatch(/the arguments are 2010 bytes of JSON, more than the 1000 allowed/);
  });
});
