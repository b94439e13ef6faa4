// sandboxedHooks(source, options): which module syntax gives which hooks, what the options grant,
// and how a sandboxed hook's reads and writes of its context reach the run.
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import { HookRegistry, type AgentHook, type Hook } from '../../src/hooks.js';
import { mockModel } from '../../src/testing/index.js';
import { sandboxedHooks, type SandboxedHooks } from '../../src/sandbox.js';
import { inProcessHooks } from './support.js';

const lookup = defineTool({ name: 'lookup', description: 'Look up', input: z.object({ sku: z.string(), limit: z.number().optional() }), execute: (args) => args });
const opened: SandboxedHooks[] = [];
afterAll(() => opened.forEach((s) => s.close()));

async function sandbox(source: string, options: Parameters<typeof sandboxedHooks>[1] = {}): Promise<SandboxedHooks> {
  const made = await sandboxedHooks(source, options);
  opened.push(made);
  return made;
}

function run(hooks: Array<AgentHook | Hook> | HookRegistry, metadata: Record<string, unknown> = {}) {
  return createAgent({ model: mockModel([{ toolCalls: [{ name: 'lookup', args: { sku: 'A1' } }] }, 'done']), tools: [lookup], hooks, metadata }).run('go');
}

const toolMessage = (result: Awaited<ReturnType<typeof run>>) => result.messages.find((m) => m.role === 'tool')?.content;

describe('the module: which exports are hooks, in which order', () => {
  it('named exports are hooks in the order of the source (not the namespace\'s alphabetical order); constants and functions are skipped', async () => {
    const made = await sandbox("export const zeta = { name: 'zeta', preToolCall() {} };\nexport const LIMIT = 3;\nexport function helper() {}\nexport const alpha = { name: 'alpha', preToolCall() {} };");
    expect(made.hooks.map((h) => h.name)).toEqual(['zeta', 'alpha']);
  });

  it('a default export gives the hooks alone: a list in its order, or one hook', async () => {
    expect((await sandbox("const a = { name: 'a', onStart() {} }; const b = { name: 'b', onStart() {} }; export const c = { name: 'c', onStart() {} }; export default [b, a];")).hooks.map((h) => h.name)).toEqual(['b', 'a']);
    expect((await sandbox("export default { name: 'only', afterTool() {} };")).hooks.map((h) => h.name)).toEqual(['only']);
  });

  it('an exported class is instantiated and known by its class name, as a criogen Hook instance is', async () => {
    const made = await sandbox('export class AuditTrail { onStart() {} }');
    expect(made.hooks.map((h) => h.name)).toEqual(['AuditTrail']);
  });

  it('a module with a syntax error does not load, saying where', async () => {
    await expect(sandboxedHooks('export default { name: "x", preToolCall( };')).rejects.toThrow(/the hook module did not load: SyntaxError/);
  });

  it('registry() holds the AgentHooks; with a criogen Hook among them it refuses, naming it', async () => {
    const agentHooks = await sandbox("export default [{ name: 'a', preToolCall() {} }, { name: 'b', postToolCall() {} }];");
    const registry = agentHooks.registry();
    expect(registry.list().map((h) => h.name)).toEqual(['a', 'b']);
    expect((await run(registry)).text).toBe('done');
    const mixed = await sandbox("export default [{ name: 'a', preToolCall() {} }, { name: 'c', onStart() {} }];");
    expect(() => mixed.registry()).toThrow(/c is a criogen Hook, which a HookRegistry does not hold/);
  });
});

describe('options', () => {
  it('refuse an unknown key naming the closest one, and bad limits saying what fits', async () => {
    await expect(sandboxedHooks('export default {}', { timeout: 10 } as never)).rejects.toThrow(/timeoutMs/);
    await expect(sandboxedHooks('export default {}', { memoryMb: 8 })).rejects.toThrow(/memoryMb.*at least 24/);
    await expect(sandboxedHooks('export default {}', { timeoutMs: Infinity })).rejects.toThrow(/timeoutMs must be a number of milliseconds/);
    await expect(sandboxedHooks('export default {}', { functions: { JSON: () => 1 } })).rejects.toThrow(/"JSON" cannot be a global of the sandbox/);
  });
});

describe('what the sandbox is granted', () => {
  it('log and console.log reach the log option, as JSON copies; without it they print nothing', async () => {
    const lines: unknown[][] = [];
    const made = await sandbox("export default { name: 'talk', preToolCall(ctx) { log('calling', ctx.toolName, ctx.args); console.log('again'); } };", { log: (...args) => lines.push(args) });
    await run(made.hooks);
    expect(lines).toEqual([['calling', 'lookup', '{"sku":"A1"}'], ['again']]);
    const quiet = await sandbox("export default { name: 'talk', preToolCall() { console.log('nobody hears'); } };");
    expect((await run(quiet.hooks)).text).toBe('done');
  });

  it('without the log option, log(...) is still defined and prints nothing, on either thread', async () => {
    for (const thread of ['worker', 'inline'] as const) {
      const quiet = await sandbox("export default { name: 'talk', preToolCall(ctx) { log('calling', ctx.toolName); return { result: typeof log }; } };", { thread });
      expect(toolMessage(await run(quiet.hooks))).toBe('function');
    }
  });

  it('a granted function is a global that returns a promise of its JSON answer; its failure is the hook\'s to catch', async () => {
    const asked: unknown[] = [];
    const functions = {
      price: async (sku: string) => (asked.push(sku), { sku, eur: 12.5 }),
      broken: async () => {
        throw new Error('price service down');
      },
    };
    const made = await sandbox("export default { name: 'pricing', async postToolCall(ctx, r) { const p = await price(ctx.args.sku); let note; try { await broken(); } catch (e) { note = e.message; } return { result: { ...r.result, eur: p.eur, note } }; } };", { functions });
    expect(JSON.parse(toolMessage(await run(made.hooks)) as string)).toEqual({ sku: 'A1', eur: 12.5, note: 'price service down' });
    expect(asked).toEqual(['A1']);
  });

  it('a granted function that does not answer in time fails the call at timeoutMs', async () => {
    const made = await sandbox("export default { name: 'waits', async preToolCall() { await never(); } };", { timeoutMs: 50, functions: { never: () => new Promise(() => undefined) } });
    await expect(run(made.hooks)).rejects.toThrow(/waits\.preToolCall\(\) went over its time limit \(timeoutMs: 50\)/);
  });

  it('no timers: setTimeout and setInterval do not exist', async () => {
    const made = await sandbox("export default { name: 'timer', preToolCall() { setTimeout(() => {}, 10); } };");
    await expect(run(made.hooks)).rejects.toThrow(/'setTimeout' is not defined/);
  });
});

describe('the context: copies in, changes out through the context API', () => {
  it('an AgentHook that edits ctx.args in place runs the tool with the edited arguments', async () => {
    const made = await sandbox("export default { name: 'cap', preToolCall(ctx) { ctx.args.limit = 7; } };");
    expect(JSON.parse(toolMessage(await run(made.hooks)) as string)).toEqual({ sku: 'A1', limit: 7 });
  });

  it('an AgentHook\'s ctx.setHookState keeps JSON in the run state; a later call reads it in ctx.state.hookState', async () => {
    const made = await sandbox("export default { name: 'counter', preGenerate(ctx) { const n = ctx.state.hookState.counter?.n ?? 0; ctx.setHookState('counter', { n: n + 1 }); } };");
    expect((await run(made.hooks)).state.hookState.counter).toEqual({ n: 2 });
  });

  it('ctx.state is read-only in the sandbox too: writing to it fails the hook', async () => {
    const made = await sandbox("export default { name: 'writer', preToolCall(ctx) { ctx.state.usage.toolCalls = 99; } };");
    await expect(run(made.hooks)).rejects.toThrow(/writer failed: .*read-only|writer failed: .*TypeError/);
  });

  it('metadata the hook changes is changed for the layers after it; the run\'s own context object stays in the host', async () => {
    const seen: unknown[] = [];
    const made = await sandbox("export default { name: 'tagger', preToolCall(ctx) { ctx.metadata.tagged = ctx.toolName; return { result: { context: typeof ctx.context } }; } };");
    const after: AgentHook = { name: 'after', postToolCall: (ctx) => void seen.push(ctx.metadata.tagged) };
    const result = await run([...made.hooks, after], { tenant: 't1' });
    expect(seen).toEqual(['lookup']);
    expect(JSON.parse(toolMessage(result) as string)).toEqual({ context: 'undefined' });
  });

  it('a __proto__ key the hook defines on ctx.metadata or ctx.request, or returns, stays an own key in the host, as in-process: no host object gets a new prototype', async () => {
    const source = `const define = (target) => Object.defineProperty(target, '__proto__', { value: { polluted: 'yes' }, enumerable: true, writable: true, configurable: true });
      export default { name: 'proto', preToolCall(ctx) { define(ctx.metadata); }, preGenerate(ctx) { define(ctx.request); }, postToolCall() { return { result: define({ kept: true }) }; } };`;
    /** What the hooks after it see of metadata and the request, and the tool result the model reads. */
    const observe = async (hooks: Array<AgentHook | Hook>) => {
      const seen: unknown[] = [];
      const look = (where: string, target: object) => seen.push({ where, prototypeKept: Object.getPrototypeOf(target) === Object.prototype, own: Object.hasOwn(target, '__proto__') ? (target as Record<string, unknown>)['__proto__'] : 'none', inherited: (target as Record<string, unknown>).polluted });
      const after: AgentHook = { name: 'after', postToolCall: (ctx) => void look('metadata', ctx.metadata), postGenerate: (ctx) => void look('request', ctx.request) };
      const result = await run([...hooks, after]);
      return { seen, result: toolMessage(result) };
    };
    const inProcess = await observe(await inProcessHooks(source));
    expect(inProcess.seen).toContainEqual({ where: 'metadata', prototypeKept: true, own: { polluted: 'yes' }, inherited: undefined });
    expect(inProcess.seen).toContainEqual({ where: 'request', prototypeKept: true, own: { polluted: 'yes' }, inherited: undefined });
    expect(inProcess.result).toBe('{"kept":true,"__proto__":{"polluted":"yes"}}');
    for (const thread of ['worker', 'inline'] as const) {
      const made = await sandbox(source, { thread });
      expect(await observe(made.hooks)).toEqual(inProcess);
    }
  });

  it('ctx.setHookState("__proto__", value) keeps an own key, sandboxed as in-process, rather than setting the prototype of the run state\'s hookState', async () => {
    const source = "export default { name: 'proto-state', preToolCall(ctx) { ctx.setHookState('__proto__', { polluted: 'yes' }); } };";
    for (const hooks of [await inProcessHooks(source), (await sandbox(source)).hooks]) {
      const { hookState } = (await run(hooks)).state;
      expect(Object.getPrototypeOf(hookState)).toBe(Object.prototype);
      expect(Object.hasOwn(hookState, '__proto__') && (hookState as Record<string, unknown>)['__proto__']).toEqual({ polluted: 'yes' });
    }
  });

  it('a transcript change the transcript refuses fails the hook, as in-process', async () => {
    const made = await sandbox("export default { name: 'breaker', preGenerate(ctx) { ctx.messages.push({ role: 'robot', content: 1 }); } };");
    await expect(run(made.hooks)).rejects.toThrow(/breaker failed/);
  });

  it('a criogen Hook\'s { state } and ToolError reach the dialect as in-process ones do', async () => {
    const made = await sandbox("import { ToolError } from 'koagent'; export default { name: 'guard', onStart(ctx) { return { state: { started: ctx.runId.length > 0 } }; }, beforeTool(call) { throw new ToolError('no lookups today'); } };");
    const result = await run(made.hooks);
    expect(result.state.hookState.guard).toEqual({ started: true });
    expect(toolMessage(result)).toBe('Error (tool_error): no lookups today');
  });
});
