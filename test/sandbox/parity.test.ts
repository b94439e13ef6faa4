// The seeds' AgentHook recipes and criogen examples (examples/agent-hooks, examples/hooks), given
// as hook source text: each runs once in-process and once in the sandbox, in the example's own
// scenario, and the two runs must agree — transcript, what the model was sent, what the tools
// ran with, stop reason, output and hook state.
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Message, type RunState } from '../../src/index.js';
import type { AgentHook, Hook } from '../../src/hooks.js';
import { mockModel } from '../../src/testing/index.js';
import { sandboxedHooks, type SandboxedHooks } from '../../src/sandbox.js';
import { hookSource, inProcessHooks } from './support.js';

type Hooks = Array<AgentHook | Hook>;
type Scenario = (hooks: Hooks) => Promise<unknown>;

const opened: SandboxedHooks[] = [];
afterAll(() => opened.forEach((s) => s.close()));

/** The scenario's findings with in-process hooks and with sandboxed hooks from the same source. */
async function bothWays(file: string, scenario: Scenario): Promise<{ inProcess: unknown; sandboxed: unknown }> {
  const source = hookSource(file);
  const sandbox = await sandboxedHooks(source, { timeoutMs: TIME[file] ?? 1000 });
  opened.push(sandbox);
  return { inProcess: await scenario(await inProcessHooks(source)), sandboxed: await scenario(sandbox.hooks) };
}

// The redaction's pattern backtracks over the 5000 dots of the log: about 70 ms in V8 and a
// second in QuickJS, an interpreter. Its sandbox is given the time that work takes there.
const TIME: Record<string, number> = { 'mask-emails.js': 10_000 };

const sent = (model: ReturnType<typeof mockModel>) => model.calls.map((call) => ({ messages: call.messages, temperature: call.request.temperature }));

const scenarios: Record<string, Scenario> = {
  // outcomes: a denied shell, a search given limit 10, a result cut to 2000 characters.
  'gatekeeper.js': async (hooks) => {
    const ran: unknown[] = [];
    const shell = defineTool({ name: 'shell', description: 'Run a command', input: z.object({ command: z.string() }), execute: ({ command }) => `ran ${command}` });
    const search = defineTool({ name: 'search', description: 'Search', input: z.object({ query: z.string(), limit: z.number().optional() }), execute: (args) => (ran.push(args), `hit for ${args.query} `.repeat(500)) });
    const model = mockModel([{ toolCalls: [{ name: 'shell', args: { command: 'grep -r todo .' } }, { name: 'search', args: { query: 'todo' } }] }, { text: 'Searched instead.' }]);
    const result = await createAgent({ provider: model, instructions: 'You research things.', tools: [shell, search], hooks }).run('Find the TODOs');
    return { messages: result.messages, sent: sent(model), ran };
  },
  'five-by-default.js': async (hooks) => {
    const ran: unknown[] = [];
    const search = defineTool({ name: 'search', description: 'Search', input: z.object({ query: z.string(), limit: z.number().optional() }), execute: (args) => (ran.push(args), args) });
    const model = mockModel([{ toolCalls: [{ name: 'search', args: { query: 'middleware' } }] }, { text: 'Five hits.' }]);
    const result = await createAgent({ provider: model, tools: [search], hooks }).run('Search for middleware');
    return { messages: result.messages, ran };
  },
  'mask-emails.js': async (hooks) => {
    const tailLog = defineTool({ name: 'tail_log', description: 'Log', input: z.object({}), execute: () => 'login ok: grace@navy.example from 10.0.0.7; ' + '.'.repeat(5000) });
    const model = mockModel([{ toolCalls: [{ name: 'tail_log', args: {} }] }, { text: 'One login.' }]);
    const result = await createAgent({ provider: model, tools: [tailLog], hooks }).run('Who logged in last?');
    return { messages: result.messages, sent: sent(model) };
  },
  'date-and-determinism.js': async (hooks) => {
    const model = mockModel(['Good morning!']);
    const result = await createAgent({ instructions: 'You greet people.', provider: model, hooks }).run('Hi there');
    return { messages: result.messages, sent: sent(model) };
  },
  'forecast-cache.js': async (hooks) => {
    const lookups: string[] = [];
    const forecast = defineTool({ name: 'forecast', description: 'Forecast', input: z.object({ city: z.string() }), execute: ({ city }) => (lookups.push(city), { city, sky: city === 'Lisbon' ? 'clear' : 'showers' }) });
    const model = mockModel([
      { toolCalls: [{ name: 'forecast', args: { city: 'Lisbon' } }] },
      { toolCalls: [{ name: 'forecast', args: { city: 'lisbon' } }, { name: 'forecast', args: { city: 'Bergen' } }] },
      'Lisbon: clear. Bergen: showers.',
    ]);
    const result = await createAgent({ name: 'weather', model, tools: [forecast], hooks, toolConcurrency: 1 }).run('Lisbon, then Lisbon and Bergen?');
    return { messages: result.messages, lookups };
  },
  // state: the notes survive a suspend, JSON and a resume by a fresh agent.
  'reply-notes.js': async (hooks) => {
    const lookup = defineTool({ name: 'lookup', description: 'Find', input: z.object({ order: z.string() }), execute: ({ order }) => ({ order, paid: 40 }) });
    const refund = defineTool({ name: 'refund', description: 'Refund', input: z.object({ order: z.string() }), needsApproval: true, execute: ({ order }) => `refunded ${order}` });
    const agent = (script: Parameters<typeof mockModel>[0]) => createAgent({ name: 'support', model: mockModel(script), tools: [lookup, refund], hooks });
    const paused = await agent([{ toolCalls: [{ name: 'lookup', args: { order: 'A-17' } }] }, { toolCalls: [{ name: 'refund', args: { order: 'A-17' } }] }]).run('Refund A-17');
    const state = JSON.parse(JSON.stringify(paused.state)) as RunState;
    const done = await agent(['Refunded.']).resume(state, { [state.pendingApprovals[0].toolCallId]: true });
    return { status: paused.status, whilePaused: paused.state.hookState, atTheEnd: done.state.hookState, messages: done.messages };
  },
  'model-call-budget.js': async (hooks) => {
    const roll = defineTool({ name: 'roll', description: 'Roll a die', execute: () => 4 });
    const result = await createAgent({ model: mockModel(Array.from({ length: 10 }, () => ({ toolCalls: [{ name: 'roll' }] }))), tools: [roll], hooks }).run('Roll until six.');
    return { stopReason: result.stopReason, output: result.output, usage: result.usage, messages: result.messages };
  },
  'short-memory.js': async (hooks) => {
    const model = mockModel(['Noted: tea, no sugar.']);
    const history: Message[] = [
      { role: 'user', content: 'I like coffee.' },
      { role: 'assistant', content: 'Coffee it is.' },
      { role: 'user', content: 'Actually, make it tea.' },
      { role: 'assistant', content: 'Tea, then.' },
      { role: 'user', content: 'No sugar, please.' },
    ];
    const result = await createAgent({ instructions: 'You take drink orders.', model, hooks }).run(history);
    return { messages: result.messages, sent: sent(model) };
  },
  'mask-reply-emails.js': async (hooks) => {
    const result = await createAgent({ model: mockModel(['Write to maria.lopez@example.org or to billing@example.org.']), hooks }).run('Who handles invoices?');
    return { text: result.text, messages: result.messages };
  },
  'parse-invoice.js': async (hooks) => {
    const result = await createAgent({ instructions: 'Answer as JSON.', model: mockModel(['Here it is: {"vendor": "Acme Paper", "total": 129.5}']), hooks }).run('Vendor and total?');
    return { stopReason: result.stopReason, output: result.output, messages: result.messages };
  },
};

describe('the seeds\' recipes and examples, as source text, give the same results in the sandbox as in-process', () => {
  it.each(Object.keys(scenarios))('%s', async (file) => {
    const { inProcess, sandboxed } = await bothWays(file, scenarios[file]);
    expect(sandboxed).toEqual(inProcess);
  });

  it('and do what the examples say (so the comparison is of runs where the hooks acted)', async () => {
    const gate = (await scenarios['gatekeeper.js']((await sandboxedHooks(hookSource('gatekeeper.js'))).hooks)) as { ran: unknown[]; messages: Message[] };
    expect(gate.ran).toEqual([{ query: 'todo', limit: 10 }]);
    expect(gate.messages.find((m) => m.role === 'tool')?.content).toBe('Error (denied): Use the workspace tools, not the shell');
    const injected = (await scenarios['date-and-determinism.js']((await sandboxedHooks(hookSource('date-and-determinism.js'))).hooks)) as { sent: { messages: Message[]; temperature?: number }[] };
    expect(injected.sent[0].temperature).toBe(0);
    expect(injected.sent[0].messages.at(-1)?.content).toMatch(/^The date today is \d{4}-\d\d-\d\d\.$/);
    const cache = (await scenarios['forecast-cache.js']((await sandboxedHooks(hookSource('forecast-cache.js'))).hooks)) as { lookups: string[] };
    expect(cache.lookups).toEqual(['Lisbon', 'Bergen']);
    const notes = (await scenarios['reply-notes.js']((await sandboxedHooks(hookSource('reply-notes.js'))).hooks)) as { atTheEnd: Record<string, unknown> };
    expect(notes.atTheEnd.ReplyNotes).toEqual({ replies: 3, tools: ['lookup', 'refund'] });
    const invoice = (await scenarios['parse-invoice.js']((await sandboxedHooks(hookSource('parse-invoice.js'))).hooks)) as { stopReason: string; output: unknown };
    expect(invoice).toMatchObject({ stopReason: 'hook_end', output: { vendor: 'Acme Paper', total: 129.5 } });
  });
});
