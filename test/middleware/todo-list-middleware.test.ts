// todoListMiddleware: the model plans with a write_todos tool the agent does not have; the list
// is kept in hook state and shown to the model on every request (that request only). (It survives
// a suspend → JSON → resume in another process: todo-list-middleware-processes.test.ts.)
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, textOf, type AgentEvent, type Message } from '../../src/index.js';
import { retryMiddleware, timeoutMiddleware } from '../../src/middleware.js';
import { promptCachingMiddleware, todoListMiddleware, todosOf, type Todo } from '../../src/middleware.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';

const search = defineTool({ name: 'search', description: 'Search the docs', input: z.object({ q: z.string() }), execute: ({ q }) => `found ${q}` });
const plan: Todo[] = [{ content: 'Find the docs', status: 'in_progress' }, { content: 'Summarise them', status: 'pending' }];
const writeTodos = (todos: unknown, id?: string) => ({ name: 'write_todos', args: { todos }, ...(id ? { id } : {}) });
const toolMessages = (messages: readonly Message[]) => messages.filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
const isReminder = (m: Message | undefined) => m?.role === 'user' && textOf(m.content).startsWith('<todo-list>');

describe('todoListMiddleware: the write_todos round trip', () => {
  it('offers the tool, answers its call and keeps the list, though the agent has no such tool', async () => {
    const model = mockModel([{ toolCalls: [writeTodos(plan)] }, 'Planned.']);
    const events: AgentEvent[] = [];
    const result = await createAgent({ model, tools: [search], middleware: [todoListMiddleware()] }).run('Summarise the docs', { onEvent: (e) => events.push(e) });
    expect(model.calls[0].request.tools?.map((spec) => spec.name)).toEqual(['search', 'write_todos']);
    expect(model.calls[0].request.tools?.[1].parameters).toMatchObject({ properties: { todos: { type: 'array' } } });
    const [answer] = toolMessages(result.messages);
    expect(answer).toMatchObject({ name: 'write_todos', content: 'Todo list updated: 2 items: 1 in progress, 1 pending.' });
    expect(answer.metadata?.error).toBeUndefined();
    expect(todosOf(result.state)).toEqual(plan);
    expect(events.find((e) => e.type === 'todo-list.updated')).toMatchObject({ todos: plan });
  });

  it('replaces the whole list on each call, dropping fields it does not keep', async () => {
    const model = mockModel([
      { toolCalls: [writeTodos(plan)] },
      { toolCalls: [writeTodos([{ content: 'Find the docs', status: 'completed', id: 7 }, { content: 'Summarise them', status: 'in_progress' }])] },
      'Halfway.',
    ]);
    const result = await createAgent({ model, middleware: [todoListMiddleware()] }).run('Go');
    expect(todosOf(result.state)).toEqual([{ content: 'Find the docs', status: 'completed' }, { content: 'Summarise them', status: 'in_progress' }]);
  });

  it('todosOf is empty for a run that wrote no list, and for no state', async () => {
    const result = await createAgent({ model: mockModel(['Hi.']), middleware: [todoListMiddleware()] }).run('Hi');
    expect(todosOf(result.state)).toEqual([]);
    expect(todosOf(undefined)).toEqual([]);
  });
});

describe('todoListMiddleware: bad arguments are a clear tool error and change nothing', () => {
  it.each([
    ['a status that is not one of the three', [{ content: 'x', status: 'done' }], /todos\[0\]\.status must be 'pending', 'in_progress' or 'completed'/],
    ['an empty item', [{ content: '  ', status: 'pending' }], /todos\[0\]\.content must not be empty/],
    ['no list at all', 'first this, then that', /todos must be the whole list/],
  ])('%s', async (_what, todos, message) => {
    const model = mockModel([{ toolCalls: [writeTodos(plan)] }, { toolCalls: [writeTodos(todos)] }, 'ok']);
    const result = await createAgent({ model, middleware: [todoListMiddleware()] }).run('Go');
    const bad = toolMessages(result.messages)[1];
    expect(bad.metadata?.error).toMatchObject({ kind: 'validation' });
    expect(String(bad.content)).toMatch(message);
    expect(String(bad.content)).toMatch(/The list was not changed\. Send the whole list/);
    expect(todosOf(result.state)).toEqual(plan);
  });

  it('two calls in one turn: neither is kept, and the model is told to call once', async () => {
    const model = mockModel([{ toolCalls: [writeTodos(plan), writeTodos([{ content: 'Other', status: 'pending' }])] }, 'ok']);
    const result = await createAgent({ model, middleware: [todoListMiddleware()] }).run('Go');
    for (const m of toolMessages(result.messages)) expect(String(m.content)).toMatch(/write_todos was called 2 times in one turn, so none of the lists was kept/);
    expect(todosOf(result.state)).toEqual([]);
  });
});

describe('todoListMiddleware: the list is shown to the model on each request, and only there', () => {
  it('each request after a write ends with the current list; the stored transcript holds none', async () => {
    const model = mockModel([
      { toolCalls: [writeTodos(plan)] },
      { toolCalls: [{ name: 'search', args: { q: 'docs' } }] },
      { toolCalls: [writeTodos([{ content: 'Find the docs', status: 'completed' }, { content: 'Summarise them', status: 'in_progress' }])] },
      'Summary.',
    ]);
    const result = await createAgent({ instructions: 'You summarise.', model, tools: [search], middleware: [todoListMiddleware()] }).run('Summarise the docs');
    const [first, second, third, fourth] = model.calls.map((call) => call.messages);
    expect(first.some(isReminder)).toBe(false);
    expect(isReminder(second.at(-1))).toBe(true);
    expect(textOf(second.at(-1)!.content)).toContain('1. [in_progress] Find the docs\n2. [pending] Summarise them');
    expect(textOf(third.at(-1)!.content)).toContain('1. [in_progress] Find the docs');
    expect(textOf(fourth.at(-1)!.content)).toContain('1. [completed] Find the docs\n2. [in_progress] Summarise them');
    // One copy per request, never piling up; none in what the run keeps.
    for (const sent of [second, third, fourth]) expect(sent.filter(isReminder)).toHaveLength(1);
    expect(result.messages.some(isReminder)).toBe(false);
    expect(result.messages[0]).toEqual({ role: 'system', content: 'You summarise.' });
  });

  it('adds the instructions to the system prompt of each request (or opens one), not to the transcript', async () => {
    const withPrompt = mockModel(['ok']);
    const result = await createAgent({ instructions: 'You summarise.', model: withPrompt, middleware: [todoListMiddleware({ instructions: 'Plan big tasks.' })] }).run('Hi');
    expect(withPrompt.calls[0].messages[0]).toEqual({ role: 'system', content: 'You summarise.\n\nPlan big tasks.' });
    expect(result.messages[0]).toEqual({ role: 'system', content: 'You summarise.' });
    const without = mockModel(['ok']);
    await createAgent({ model: without, middleware: [todoListMiddleware()] }).run('Hi');
    expect(without.calls[0].messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You can plan with the write_todos tool') });
    const none = mockModel(['ok']);
    await createAgent({ model: none, middleware: [todoListMiddleware({ instructions: false })] }).run('Hi');
    expect(none.calls[0].messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('a retry outside it sends the same request again: one reminder, one tool spec', async () => {
    let attempts = 0;
    const model = mockModel([{ toolCalls: [writeTodos(plan)] }, { error: 'overloaded' }, 'Done.']);
    const flaky = { ...model, name: 'flaky', generate: (request: Parameters<typeof model.generate>[0]) => { attempts++; return model.generate(request); } };
    const retry = retryMiddleware({ shouldRetry: () => true, sleep: async () => {} });
    await createAgent({ model: flaky, middleware: [retry, todoListMiddleware({ instructions: false })] }).run('Go');
    expect(attempts).toBe(3);
    const last = model.calls.at(-1)!;
    expect(last.messages.filter(isReminder)).toHaveLength(1);
    expect(last.request.tools?.filter((spec) => spec.name === 'write_todos')).toHaveLength(1);
  });
});

describe('todoListMiddleware: where it goes, and names', () => {
  it('adds its instructions to the system message without dropping what else it carries (a cache mark of a layer outside)', async () => {
    const model = mockModel(['ok']);
    await createAgent({ model, instructions: 'You help.', middleware: [promptCachingMiddleware({ breakpoints: ['instructions'] }), todoListMiddleware()] }).run('Go');
    const system = model.calls[0].messages[0];
    expect(system).toMatchObject({ role: 'system', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } });
    expect(String(system.content)).toMatch(/^You help\.\n\n/);
  });

  it('behind a middleware with a tool layer, it fails at once, saying where it belongs', async () => {
    const model = mockModel([{ toolCalls: [writeTodos(plan)] }, 'ok']);
    const agent = createAgent({ model, middleware: [timeoutMiddleware({ tool: 10_000 }), todoListMiddleware()] });
    await expect(agent.run('Go')).rejects.toThrow(/put todoListMiddleware before every middleware that has a tool layer/);
  });

  it('refuses an agent tool of the same name, and takes another name', async () => {
    const clash = defineTool({ name: 'write_todos', description: 'mine', input: z.object({}), execute: () => 'mine' });
    await expect(createAgent({ model: mockModel(['ok']), tools: [clash], middleware: [todoListMiddleware()] }).run('Go')).rejects.toThrow(/has a tool named write_todos already; give the planning tool another name with \{ toolName \}/);
    const model = mockModel([{ toolCalls: [{ name: 'plan', args: { todos: plan } }] }, 'ok']);
    const result = await createAgent({ model, tools: [clash], middleware: [todoListMiddleware({ toolName: 'plan' })] }).run('Go');
    expect(todosOf(result.state)).toEqual(plan);
  });

  it.each([
    [{ tool: 'plan' }, /tool is not a todo list option; did you mean `toolName`\?/],
    [{ instruction: 'x' }, /instruction is not a todo list option; did you mean `instructions`\?/],
    [{ instructions: true }, /instructions must be a string, or false for none/],
    [{ toolName: 'write todos' }, /toolName must be a tool name/],
  ])('%o is refused', (options, message) => {
    expect(() => todoListMiddleware(options as never)).toThrow(message);
  });
});
