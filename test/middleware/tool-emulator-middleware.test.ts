// toolEmulatorMiddleware: which tools it emulates, with a function or a side model call (counted
// in usage), and that it replaces the execution only: validation, permissions, the tool's
// guardrails, approval, the output schema and the layers outside all treat the call as real.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type AgentEvent, type RunState } from '../../src/index.js';
import { toolEmulatorMiddleware } from '../../src/middleware.js';
import { mockModel } from '../../src/testing/index.js';
import { toolError, toolMessages } from '../support/core.js';

function tools(ran: string[]) {
  const charge = defineTool({
    name: 'charge_card',
    description: 'Charge a card',
    input: z.object({ amount: z.number() }),
    output: z.object({ charged: z.number(), id: z.string() }),
    guardrails: { input: [({ amount }: { amount: number }) => (amount > 100 ? { block: 'Over the limit' } : undefined)] },
    execute: ({ amount }) => { ran.push('charge_card'); return { charged: amount, id: 'ch_real' }; },
  });
  const time = defineTool({ name: 'time', description: 'The time', input: z.object({}), execute: () => { ran.push('time'); return '12:00'; } });
  return [charge, time];
}

const calls = (...list: { name: string; args: unknown; id?: string }[]) => ({ toolCalls: list });

describe('toolEmulatorMiddleware: which tools, and what makes their results', () => {
  it('emulates the named tools with the function; the others run for real', async () => {
    const ran: string[] = [];
    const model = mockModel([calls({ name: 'charge_card', args: { amount: 30 } }, { name: 'time', args: {} }), 'Done.']);
    const events: AgentEvent[] = [];
    const emulator = toolEmulatorMiddleware({ tools: ['charge_card'], emulate: ({ amount }) => ({ charged: amount, id: 'ch_test' }) });
    const result = await createAgent({ model, tools: tools(ran), middleware: [emulator], onEvent: (e) => events.push(e) }).run('Charge 30');
    expect(ran).toEqual(['time']);
    const [charged, time] = toolMessages(result.messages);
    expect(charged).toMatchObject({ content: JSON.stringify({ charged: 30, id: 'ch_test' }), metadata: { replacedBy: 'tool-emulator' } });
    expect(time.content).toBe('12:00');
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool.done', toolName: 'charge_card', replacedBy: 'tool-emulator' }));
  });

  it('takes one function per tool name, and emulates every tool by default', async () => {
    const ran: string[] = [];
    const model = mockModel([calls({ name: 'time', args: {} }), 'Done.']);
    const result = await createAgent({ model, tools: tools(ran), middleware: [toolEmulatorMiddleware({ emulate: { time: () => '23:59' } })] }).run('Time?');
    expect(ran).toEqual([]);
    expect(toolMessages(result.messages)[0].content).toBe('23:59');
  });

  it("asks a model for a result where no function makes one: told the tool's description and schema, counted in usage", async () => {
    const emulating = mockModel([{ text: '```json\n{"charged": 12, "id": "ch_model"}\n```', usage: { inputTokens: 40, outputTokens: 9 } }]);
    const model = mockModel([{ ...calls({ name: 'charge_card', args: { amount: 12 } }), usage: { inputTokens: 5, outputTokens: 5 } }, { text: 'Done.', usage: { inputTokens: 5, outputTokens: 5 } }]);
    const ran: string[] = [];
    const result = await createAgent({ model, tools: tools(ran), middleware: [toolEmulatorMiddleware({ model: emulating, instructions: 'The card has 500 euros on it.' })] }).run('Charge 12');
    expect(ran).toEqual([]);
    expect(toolMessages(result.messages)[0].content).toBe(JSON.stringify({ charged: 12, id: 'ch_model' }));
    const [system, user] = emulating.calls[0].messages;
    expect(system.content).toEqual(expect.stringContaining('Charge a card'));
    expect(system.content).toEqual(expect.stringContaining('"amount"'));
    expect(system.content).toEqual(expect.stringContaining('The card has 500 euros on it.'));
    expect(user.content).toBe('{"amount":12}');
    expect(result.usage).toMatchObject({ modelCalls: 3, inputTokens: 50, outputTokens: 19 });
  });
});

describe('toolEmulatorMiddleware: it replaces the execution only', () => {
  it("the tool's guardrails still refuse a call, and the emulator is not asked", async () => {
    let asked = 0;
    const model = mockModel([calls({ name: 'charge_card', args: { amount: 500 } }), 'Refused.']);
    const result = await createAgent({ model, tools: tools([]), middleware: [toolEmulatorMiddleware({ emulate: () => { asked++; return { charged: 0, id: 'x' }; } })] }).run('Charge 500');
    expect(toolError(toolMessages(result.messages)[0])).toMatchObject({ kind: 'guardrail', message: expect.stringContaining('Over the limit') });
    expect(asked).toBe(0);
  });

  it("permission rules still apply, and an emulated result must fit the tool's output schema", async () => {
    const model = mockModel([calls({ name: 'charge_card', args: { amount: 5 } }, { name: 'time', args: {} }), 'Done.']);
    const agent = createAgent({ model, tools: tools([]), permissions: { rules: [{ tool: 'time', decision: 'deny' }] }, middleware: [toolEmulatorMiddleware({ emulate: () => ({ wrong: true }) })] });
    const [charged, time] = toolMessages((await agent.run('Go')).messages);
    expect(toolError(charged)).toMatchObject({ kind: 'execution', message: expect.stringContaining('does not fit its output schema') });
    expect(toolError(time)?.kind).toBe('denied');
  });

  it('a call that needs approval waits for it, and is emulated once approved, after suspend → JSON → resume', async () => {
    const ran: string[] = [];
    const wire = defineTool({ name: 'wire', description: 'Wire money', input: z.object({ to: z.string() }), needsApproval: true, execute: () => { ran.push('wire'); return 'wired'; } });
    const make = () => createAgent({ model: mockModel([calls({ name: 'wire', args: { to: 'Bob' }, id: 'w1' }), 'Wired.'], { resumable: true }), tools: [wire], middleware: [toolEmulatorMiddleware({ emulate: ({ to }) => `pretend-wired to ${to}` })] });
    const paused = await make().run('Wire Bob');
    expect(paused.status).toBe('suspended');
    const done = await make().resume(JSON.parse(JSON.stringify(paused.state)) as RunState, { w1: true });
    expect(ran).toEqual([]);
    expect(toolMessages(done.messages)[0]).toMatchObject({ content: 'pretend-wired to Bob', metadata: { replacedBy: 'tool-emulator' } });
  });

  it('layers outside see the emulated outcome as a real one, and the tool itself is left as it was', async () => {
    const seen: unknown[] = [];
    const agentTools = tools([]);
    const model = mockModel([calls({ name: 'time', args: {} }), 'Done.']);
    const outer = { name: 'outer', async tool(ctx: { tool?: unknown }, next: () => Promise<{ result: unknown }>) { const outcome = await next(); seen.push(outcome.result, ctx.tool === agentTools[1]); return outcome; } };
    await createAgent({ model, tools: agentTools, middleware: [outer as never, toolEmulatorMiddleware({ emulate: () => 'noon' })] }).run('Time?');
    expect(seen).toEqual(['noon', true]);
  });
});

describe('toolEmulatorMiddleware: options', () => {
  it('refuses a misspelled option and a model that is not a provider', () => {
    expect(() => toolEmulatorMiddleware({ tool: ['x'] } as never)).toThrow('toolEmulatorMiddleware: tool is not a tool emulator option; did you mean `tools`?');
    expect(() => toolEmulatorMiddleware({ model: 'gpt' as never })).toThrow(/model must be a model provider/);
  });
});
