// Fail closed on misspelled options: every options object a user writes is described once as a
// zod schema, and an unknown key is a TypeError naming it and the key most likely meant.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactionMiddleware, retryMiddleware, timeoutMiddleware } from '../../../src/middleware.js';
import { createAgent, defineTool, openai } from '../../../src/index.js';
import { HookRegistry } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { add } from '../../support/core.js';

const model = () => mockModel(['Hi.']);
const tool = () => ({ name: 'rm', description: 'Remove a file', input: z.object({ path: z.string() }), execute: () => 'removed' });

describe('a misspelled option that would switch a protection off is refused at construction', () => {
  it.each([
    ['permissions: { rules, defualt: "deny" } (an allow-list would allow everything)', () => createAgent({ model: model(), permissions: { rules: [], defualt: 'deny' } as never }), 'createAgent: permissions.defualt is not a field of permissions; did you mean `default`?'],
    ['a rule { tool, decison: "deny" }', () => createAgent({ model: model(), permissions: [{ tool: 'rm', decison: 'deny' }] as never }), 'createAgent: permissions[0].decison is not a field of a permission rule; did you mean `decision`?'],
    ['defineTool({ needsApprovel: true }) (the tool would run without approval)', () => defineTool({ ...tool(), needsApprovel: true } as never), 'defineTool("rm"): needsApprovel is not a field of a tool definition; did you mean `needsApproval`?'],
    ['guardrails: { inputs: [...] } (the guardrail would never run)', () => defineTool({ ...tool(), guardrails: { inputs: [() => undefined] } } as never), 'defineTool("rm"): guardrails.inputs is not a kind of guardrail; did you mean `input`?'],
    ['createAgent({ systemPrompt }) (the instructions would be lost)', () => createAgent({ model: model(), systemPrompt: 'Never delete files.' } as never), 'createAgent: systemPrompt is not an option; did you mean `instructions`?'],
  ])('%s', (_what, make, message) => {
    expect(make).toThrow(new TypeError(message));
  });
});

describe('every options object a user writes refuses an unknown key, naming the closest valid one', () => {
  it.each([
    ['agent options', () => createAgent({ model: model(), maxStep: 3 } as never), /createAgent: maxStep is not an option; did you mean `maxSteps`\?/],
    ['limits', () => createAgent({ model: model(), limits: { tokenz: 5 } } as never), /limits\.tokenz is not a limit; did you mean `tokens`\?/],
    ['bounds on tool arguments', () => createAgent({ model: model(), toolArguments: { maxDepht: 5 } } as never), /toolArguments\.maxDepht is not a bound on tool arguments; did you mean `maxDepth`\?/],
    ['compaction', () => compactionMiddleware({ maxMessages: 10, keepRecnt: 2 } as never), /compaction: keepRecnt is not a compaction option; did you mean `keepRecent`\?/],
    ['retry options', () => retryMiddleware({ maxRetires: 2 } as never), /retryMiddleware: maxRetires is not a retry option; did you mean `maxRetries`\?/],
    ['timeout options', () => timeoutMiddleware({ tools: 100 } as never), /timeoutMiddleware: tools is not a timeout; did you mean `tool`\?/],
    ['provider options', () => openai({ model: 'm', baseUrl: 'http://127.0.0.1:1/v1' } as never), /openai\(options\): baseUrl is not an option of openai\(\); did you mean `baseURL`\?/],
    ['HookRegistry options', () => new HookRegistry({ loger: console } as never), /new HookRegistry\(options\): loger is not an option of HookRegistry; did you mean `logger`\?/],
    ['a scripted reply', () => mockModel([{ txt: 'x' } as never]), /mockModel\(script\): \[0\]\.txt is not a field of a scripted reply; did you mean `text`\?/],
    ['asTool options', () => createAgent({ name: 'helper', model: model() }).asTool({ description: 'Helps', nam: 'h' } as never), /agent\.asTool\(options\): nam is not an option of asTool; did you mean `name`\?/],
  ])('%s', (_what, make, message) => {
    expect(make).toThrow(TypeError);
    expect(make).toThrow(message);
  });

  it.each([
    ['run', (agent: ReturnType<typeof createAgent>) => agent.run('Hi', { sesionId: 's' } as never)],
    ['send', (agent: ReturnType<typeof createAgent>) => agent.send('Hi', { singal: undefined } as never)],
    ['resume', (agent: ReturnType<typeof createAgent>) => agent.resume({} as never, {}, { metdata: {} } as never)],
  ])('the options of %s (the promise rejects before anything runs)', async (_what, call) => {
    const m = model();
    await expect(call(createAgent({ model: m }))).rejects.toThrow(/is not an option; did you mean `(sessionId|signal|metadata)`\?/);
    expect(m.calls).toHaveLength(0);
  });

  it('the recognised shapes of hook objects: a misspelled method of either dialect, or of a middleware', () => {
    const agent = createAgent({ model: model() });
    expect(() => agent.use({ name: 'audit', preToolCall() {}, postToolcall() {} } as never)).toThrow('agent.use(): AgentHook "audit": postToolcall is not an AgentHook method; did you mean `postToolCall`?');
    expect(() => agent.use({ name: 'log', beforeTool() {}, aftertool() {} } as never)).toThrow('agent.use(): log: aftertool is not a Hook method; did you mean `afterTool`?');
    expect(() => agent.use({ name: 'm', tool: (_c: unknown, next: () => Promise<unknown>) => next(), modle: () => undefined } as never)).toThrow('agent.use(): m: modle is not a field of a middleware; did you mean `model`?');
    class Audit { name = 'audit'; preToolCall() {} postToolcall() {} }
    expect(() => agent.use(new Audit() as never)).toThrow(/postToolcall is not an AgentHook method; did you mean `postToolCall`\?/);
  });

  it('keeps a middleware\'s own fields that are no misspelling (its state, say)', async () => {
    const counter = { name: 'counter', calls: 0, tool(_ctx: unknown, next: () => Promise<never>) { this.calls++; return next(); } };
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 2 } }] }, 'Three.']), tools: [add] }).use(counter as never);
    await agent.run('1 + 2?');
    expect(counter.calls).toBe(1);
  });
});

describe('a value of the wrong type says what it got', () => {
  it.each([
    [{ maxSteps: '5' }, 'createAgent: maxSteps must be a whole number ≥ 1 (got the string "5")'],
    [{ instructions: 42 }, 'createAgent: instructions must be a string (got 42)'],
    [{ onEvent: 'log' }, 'createAgent: onEvent must be a function (got the string "log")'],
    [{ modelSettings: { temperature: 'hot' } }, 'createAgent: modelSettings.temperature must be a number (got the string "hot")'],
    [{ modelSettings: { messages: [] } }, "createAgent: modelSettings.messages is the run's own transcript; add messages with instructions or input instead (got an array)"],
  ])('%o', (options, message) => {
    expect(() => createAgent({ model: model(), ...options } as never)).toThrow(new TypeError(message));
  });
});
