import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Tool } from '../../src/index.js';
import { isToolset } from '../../src/tools/toolset.js';
import type { Toolset, ToolSpec } from '../../src/types.js';
import { mockModel } from '../../src/testing/index.js';
import type { MockCall } from '../../src/testing/mock-model.js';
import { answerTo } from '../fixtures/counting-tools.js';

/** A toolset whose list the test changes by hand (a new array each time, as the contract asks). */
function handToolset(name: string, initial: Tool[]) {
  let list: readonly Tool[] = initial;
  const closed: string[] = [];
  const set: Toolset & { set(tools: Tool[]): void } = {
    name,
    tools: () => list,
    set(tools) {
      list = tools;
    },
    async close() {
      closed.push(name);
    },
  };
  return { set, closed };
}

/** The names of the tools the model was told of in one call. */
const offered = (call: MockCall) => (call.request.tools as ToolSpec[]).map((spec) => spec.name);

const tool = (name: string, execute: () => unknown = () => `${name} ran`) => defineTool({ name, description: `The ${name} tool`, input: z.object({}), execute });

describe('toolsets: tools known at run time go through the one pipeline', () => {
  it('a toolset is recognised as one, and a tool is not', () => {
    expect(isToolset(handToolset('x', []).set)).toBe(true);
    expect(isToolset(tool('t'))).toBe(false);
  });

  it("the model is told of the toolset's tools beside the agent's own, and their calls run", async () => {
    const { set } = handToolset('remote', [tool('remote_echo')]);
    const model = mockModel([{ toolCalls: [{ id: 'c', name: 'remote_echo', args: {} }] }, 'Done.']);
    const result = await createAgent({ model, tools: [tool('local'), set] }).run('go');
    expect(offered(model.calls[0])).toEqual(['local', 'remote_echo']);
    expect(answerTo(result.messages, 'c').content).toBe('remote_echo ran');
  });

  it("permission rules apply to a toolset's tools", async () => {
    const runs: string[] = [];
    const { set } = handToolset('remote', [tool('remote_rm', () => runs.push('rm'))]);
    const model = mockModel([{ toolCalls: [{ id: 'c', name: 'remote_rm', args: {} }] }, 'Done.']);
    const result = await createAgent({ model, tools: [set], permissions: [{ tool: 'remote_*', decision: 'deny', reason: 'No remote tools' }] }).run('go');
    expect(answerTo(result.messages, 'c').content).toBe('Error (denied): No remote tools');
    expect(runs).toEqual([]);
  });

  it('a new list is read at the next model turn: a tool added during a turn can be called in the next one', async () => {
    const { set } = handToolset('remote', []);
    const unlock = tool('unlock', () => (set.set([tool('secret')]), 'unlocked'));
    const model = mockModel([{ toolCalls: [{ id: 'a', name: 'unlock', args: {} }] }, { toolCalls: [{ id: 'b', name: 'secret', args: {} }] }, 'Done.']);
    const result = await createAgent({ model, tools: [unlock, set] }).run('go');
    expect(model.calls.map(offered)).toEqual([['unlock'], ['unlock', 'secret'], ['unlock', 'secret']]);
    expect(answerTo(result.messages, 'b').content).toBe('secret ran');
  });

  it("a toolset's tool named like one of the agent's own is left out, with a warning, so it cannot shadow it", async () => {
    const warnings: string[] = [];
    const { set } = handToolset('remote', [tool('read', () => 'the remote read'), tool('other')]);
    const model = mockModel([{ toolCalls: [{ id: 'c', name: 'read', args: {} }] }, 'Done.']);
    const agent = createAgent({ model, tools: [tool('read', () => 'the local read'), set], logger: { warn: (m: string) => warnings.push(m) } });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toBe('the local read');
    expect(offered(model.calls[0])).toEqual(['read', 'other']);
    expect(warnings).toEqual([`koagent: toolset "remote" offers a tool named "read", as one of the agent's own tools does; it is left out (give the toolset a prefix to tell them apart)`]);
  });

  it('the same toolset given twice is refused', () => {
    const { set } = handToolset('remote', []);
    expect(() => createAgent({ model: mockModel([]), tools: [set, set] })).toThrow('createAgent: tools[1] is the toolset "remote" a second time; give each toolset once');
  });

  it("a toolset's middleware runs in the agent's runs, outermost", async () => {
    const order: string[] = [];
    const set: Toolset = { name: 'remote', tools: () => [], middleware: { name: 'remote', run: async (_ctx, next) => (order.push('toolset in'), await next()) } };
    await createAgent({ model: mockModel(['Hi.']), tools: [set], middleware: [{ name: 'mine', run: async (_ctx, next) => (order.push('mine in'), await next()) }] }).run('go');
    expect(order).toEqual(['toolset in', 'mine in']);
  });

  it("a state resumes when a toolset's tools changed: they are not in the tools fingerprint", async () => {
    const { set } = handToolset('remote', [tool('remote_pay')]);
    const model = mockModel([{ toolCalls: [{ id: 'c', name: 'remote_pay', args: {} }] }, 'Paid.']);
    const agent = createAgent({ model, tools: [set], permissions: [{ tool: 'remote_pay', decision: 'ask' }] });
    const paused = await agent.run('go');
    set.set([tool('remote_pay', () => 'paid'), tool('remote_new')]);
    const done = await agent.resume(JSON.parse(JSON.stringify(paused.state)), { c: true });
    expect(answerTo(done.messages, 'c').content).toBe('paid');
  });
});

describe('toolsets: agent.close()', () => {
  it('closes every toolset of the agent', async () => {
    const a = handToolset('a', []);
    const b = handToolset('b', []);
    await createAgent({ model: mockModel([]), tools: [a.set, b.set] }).close();
    expect([...a.closed, ...b.closed]).toEqual(['a', 'b']);
  });

  it('closes the others when one fails, then rejects naming it', async () => {
    const b = handToolset('b', []);
    const failing: Toolset = { name: 'a', tools: () => [], close: () => Promise.reject(new Error('socket stuck')) };
    await expect(createAgent({ model: mockModel([]), tools: [failing, b.set] }).close()).rejects.toThrow('agent.close(): toolset "a": socket stuck');
    expect(b.closed).toEqual(['b']);
  });
});
