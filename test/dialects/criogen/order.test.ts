import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineMiddleware, defineTool, type AgentEvent, type Tool } from '../../../src/index.js';
import { ToolResult, type Hook, type HookContext } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';

function addTool(runs: { n: number }): Tool {
  return defineTool({
    name: 'add',
    description: 'Add two numbers',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => {
      runs.n++;
      return a + b;
    },
  });
}

/** A hook that writes each of its six methods into `log` as `<name>.<method>`. */
function recorder(name: string, log: string[], extra: Partial<Hook> = {}): Hook {
  return {
    name,
    onStart: () => void log.push(`${name}.onStart`),
    beforeModel: () => void log.push(`${name}.beforeModel`),
    afterModel: () => void log.push(`${name}.afterModel`),
    beforeTool: () => void log.push(`${name}.beforeTool`),
    afterTool: (_call, result) => void log.push(`${name}.afterTool(${JSON.stringify(result)})`),
    onEnd: (_ctx, outcome) => void log.push(`${name}.onEnd(${outcome})`),
    ...extra,
  };
}

describe('criogen hooks: order', () => {
  it('runs onStart, beforeModel and beforeTool in list order, and afterTool, afterModel and onEnd in reverse, across three hooks', async () => {
    const log: string[] = [];
    const runs = { n: 0 };
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] }, 'Five.']),
      tools: [addTool(runs)],
      hooks: [recorder('A', log), recorder('B', log), recorder('C', log)],
    });
    const result = await agent.run('2 + 3?');
    expect(result.text).toBe('Five.');
    const model = ['A.beforeModel', 'B.beforeModel', 'C.beforeModel', 'C.afterModel', 'B.afterModel', 'A.afterModel'];
    expect(log).toEqual([
      'A.onStart', 'B.onStart', 'C.onStart',
      ...model,
      'A.beforeTool', 'B.beforeTool', 'C.beforeTool', 'C.afterTool(5)', 'B.afterTool(5)', 'A.afterTool(5)',
      ...model,
      'C.onEnd(completed)', 'B.onEnd(completed)', 'A.onEnd(completed)',
    ]);
  });

  it('a ToolResult from a middle hook skips the tool and the hooks after it, while it and the hooks before it get afterTool with its value', async () => {
    const log: string[] = [];
    const runs = { n: 0 };
    const events: AgentEvent[] = [];
    const cached = recorder('B', log, {
      beforeTool: () => {
        log.push('B.beforeTool');
        return new ToolResult({ sum: 'from cache' });
      },
    });
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] }, 'Done.']);
    const agent = createAgent({ model, tools: [addTool(runs)], hooks: [recorder('A', log), cached, recorder('C', log)], onEvent: (e) => events.push(e) });
    await agent.run('2 + 3?');
    const toolPart = log.filter((line) => line.includes('Tool'));
    expect(toolPart).toEqual(['A.beforeTool', 'B.beforeTool', 'B.afterTool({"sum":"from cache"})', 'A.afterTool({"sum":"from cache"})']);
    expect(runs.n).toBe(0);
    // The model reads the value as JSON; the audit trail says which hook supplied it.
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: '{"sum":"from cache"}', metadata: { replacedBy: 'B' } });
    expect(events.find((e) => e.type === 'tool.done')).toMatchObject({ replacedBy: 'B' });
  });

  it('takes its place among native middleware in the order they were added', async () => {
    const log: string[] = [];
    const trace = (name: string) => defineMiddleware({
      name,
      async tool(_ctx, next) {
        log.push(`${name} in`);
        const outcome = await next();
        log.push(`${name} out`);
        return outcome;
      },
    });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, 'Two.']), tools: [addTool({ n: 0 })] })
      .use(trace('outer'))
      .use({ name: 'hook', beforeTool: () => void log.push('hook.beforeTool'), afterTool: () => void log.push('hook.afterTool') })
      .use(trace('inner'));
    await agent.run('1 + 1?');
    expect(log).toEqual(['outer in', 'hook.beforeTool', 'inner in', 'inner out', 'hook.afterTool', 'outer out']);
  });
});

describe('criogen hooks: names', () => {
  it('names a hook by its name, else its class name, else hook#<index> among the hooks, numbering repeats by position', async () => {
    class Counter implements Hook {
      onStart(ctx: HookContext) {
        return { state: ctx.runId.length > 0 };
      }
    }
    const named: Hook = { name: 'alpha', onStart: () => ({ state: true }) };
    const anonymous: Hook = { onStart: () => ({ state: true }) };
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [named, new Counter(), anonymous, new Counter()] });
    const result = await agent.run('Hello');
    expect(Object.keys(result.state.hookState)).toEqual(['alpha', 'Counter', 'hook#2', 'Counter#2']);
  });

  it('takes hooks, class instances included, from agent.use() as well as from the hooks option', async () => {
    const log: string[] = [];
    class Greeter implements Hook {
      onStart() {
        log.push('Greeter.onStart');
      }
    }
    const agent = createAgent({ model: mockModel(['Hi.']), hooks: [recorder('first', log)] }).use(new Greeter());
    await agent.run('Hello');
    expect(log.slice(0, 2)).toEqual(['first.onStart', 'Greeter.onStart']);
  });

  it('rejects a hook whose method is not a function, naming the hook and the method', () => {
    const broken = { name: 'broken', beforeTool: () => undefined, onEnd: 'log it' } as unknown as Hook;
    expect(() => createAgent({ model: mockModel([]), hooks: [broken] })).toThrow(/Hook broken: onEnd must be a method \(a function\), got string/);
  });

  it('rejects an object that mixes the Hook methods with another dialect, naming both', () => {
    const mixed = { name: 'mixed', beforeTool: () => undefined, preToolCall: () => undefined } as unknown as Hook;
    expect(() => createAgent({ model: mockModel([]), hooks: [mixed] })).toThrow(/mixed mixes preToolCall \(AgentHook\) and beforeTool \(Hook\)/);
  });
});
