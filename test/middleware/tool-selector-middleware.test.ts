// toolSelectorMiddleware: a side call picks the tools a user turn needs, and the request offers
// only those (and the always-included ones); the pick is kept for the rest of the user turn, and
// an answer that is no pick falls back to every tool.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, type AgentEvent, type Tool } from '../../src/index.js';
import { toolSelectorMiddleware } from '../../src/middleware.js';
import { readSelection } from '../../src/middleware/tool-selector-middleware.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';

const NAMES = ['weather', 'stocks', 'email', 'calendar', 'search', 'calculator', 'translate', 'maps'];
const tools: Tool[] = NAMES.map((name) => defineTool({
  name,
  description: `The ${name} tool`,
  input: z.object({ q: z.string() }),
  execute: ({ q }) => `${name}: ${q}`,
}));
const toolNames = (specs: readonly { name: string }[] | undefined) => (specs ?? []).map((spec) => spec.name);

/** A selector that answers each side call with the next of `answers` (JSON text). */
const selector = (...answers: string[]) => mockModel(answers);
const pick = (...names: string[]) => JSON.stringify({ tools: names });

/** Events a layer emitted of its own type (AgentEvent lists koagent's own types only). */
const ofType = (events: AgentEvent[], type: string) => events.filter((e) => (e.type as string) === type) as unknown as Record<string, unknown>[];

function warnings() {
  const messages: string[] = [];
  return { messages, logger: { warn: (message: string) => { messages.push(message); } } };
}

describe('toolSelectorMiddleware: what the provider is offered', () => {
  it('offers only the selected tools and the always-included ones, in the agent\'s order', async () => {
    const model = mockModel(['Sunny.']);
    const select = selector(pick('weather', 'maps'));
    const agent = createAgent({ model, tools, middleware: [toolSelectorMiddleware({ model: select, alwaysInclude: ['search'] })] });
    await agent.run('What is the weather in Oslo?');
    expect(toolNames(model.calls[0].request.tools)).toEqual(['weather', 'search', 'maps']);
  });

  it('shows the selector names and descriptions, not the always-included tools, and asks for JSON fitting the names', async () => {
    const select = selector(pick('weather'));
    await createAgent({ model: mockModel(['ok']), tools, middleware: [toolSelectorMiddleware({ model: select, alwaysInclude: ['search'] })] }).run('Rain tomorrow?');
    const [call] = select.calls;
    const asked = String(call.messages[1].content);
    expect(asked).toContain('- weather: The weather tool');
    expect(asked).not.toContain('- search:');
    expect(asked).toContain('Rain tomorrow?');
    expect(call.request.tools).toEqual([]);
    expect(call.request.responseFormat).toMatchObject({ type: 'json', schema: { properties: { tools: { items: { enum: NAMES.filter((n) => n !== 'search') } } } } });
  });

  it('keeps at most maxTools of the selection, the ones the selector ranked first', async () => {
    const model = mockModel(['ok']);
    const select = selector(pick('translate', 'email', 'weather', 'stocks'));
    await createAgent({ model, tools, middleware: [toolSelectorMiddleware({ model: select, maxTools: 2, alwaysInclude: ['maps'] })] }).run('Mail this in French');
    // translate and email were ranked first; the always-included tool is not counted in the cap.
    expect(toolNames(model.calls[0].request.tools)).toEqual(['email', 'translate', 'maps']);
    expect(String(select.calls[0].messages[1].content)).toContain('Choose at most 2 tools.');
  });

  it('does nothing for an agent with fewer tools than minTools: no side call', async () => {
    const model = mockModel(['ok']);
    const select = selector(pick('weather'));
    const result = await createAgent({ model, tools: tools.slice(0, 4), middleware: [toolSelectorMiddleware({ model: select })] }).run('Hi');
    expect(select.calls).toHaveLength(0);
    expect(toolNames(model.calls[0].request.tools)).toEqual(NAMES.slice(0, 4));
    expect(result.usage.modelCalls).toBe(1);
  });

  it('lets a call to a tool that was not offered run as any other call', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'stocks', args: { q: 'ACME' } }] }, 'ACME is up.']);
    const result = await createAgent({ model, tools, middleware: [toolSelectorMiddleware({ model: selector(pick('weather')) })] }).run('Weather?');
    expect(toolNames(model.calls[0].request.tools)).toEqual(['weather']);
    expect(result.messages.find((m) => m.role === 'tool')).toMatchObject({ name: 'stocks', content: 'stocks: ACME' });
  });
});

describe('toolSelectorMiddleware: what the selection costs', () => {
  it('counts the side call in usage (modelCalls and tokens), with purpose select-tools', async () => {
    const events: AgentEvent[] = [];
    const select = mockModel([{ text: pick('weather'), usage: { inputTokens: 120, outputTokens: 6 } }]);
    const model = mockModel([{ text: 'Sunny.', usage: { inputTokens: 50, outputTokens: 2 } }]);
    const result = await createAgent({ model, tools, middleware: [toolSelectorMiddleware({ model: select })] }).run('Weather?', { onEvent: (e) => events.push(e) });
    expect(result.usage).toMatchObject({ modelCalls: 2, inputTokens: 170, outputTokens: 8 });
    // The side call is answered before the turn's own call is made.
    expect(events.filter((e) => e.type === 'model.done').map((e) => (e as { purpose: string }).purpose)).toEqual(['select-tools', 'turn']);
  });

  it('uses the agent\'s model for the side call when no model is given', async () => {
    const model = mockModel([pick('calendar'), 'Booked.']);
    const result = await createAgent({ model, tools, middleware: [toolSelectorMiddleware()] }).run('Book Monday');
    expect(model.calls).toHaveLength(2);
    expect(toolNames(model.calls[1].request.tools)).toEqual(['calendar']);
    expect(result.usage.modelCalls).toBe(2);
  });

  it('selects once per user turn: the tool turns that follow reuse the selection', async () => {
    const script: MockReply[] = [
      { toolCalls: [{ name: 'weather', args: { q: 'Oslo' } }] },
      { toolCalls: [{ name: 'maps', args: { q: 'Oslo' } }] },
      'Sunny, and here is the map.',
    ];
    const model = mockModel(script);
    const select = selector(pick('weather', 'maps'));
    const events: AgentEvent[] = [];
    const result = await createAgent({ model, tools, middleware: [toolSelectorMiddleware({ model: select })] }).run('Weather and map of Oslo', { onEvent: (e) => events.push(e) });
    expect(select.calls).toHaveLength(1);
    expect(model.calls.map((call) => toolNames(call.request.tools))).toEqual([['weather', 'maps'], ['weather', 'maps'], ['weather', 'maps']]);
    expect(result.usage.modelCalls).toBe(4);
    expect(ofType(events, 'tool-selector.selected')).toHaveLength(1);
  });

  it('selects again for a new user message', async () => {
    const model = mockModel(['Sunny.', 'Sent.']);
    const select = selector(pick('weather'), pick('email'));
    const agent = createAgent({ model, tools, middleware: [toolSelectorMiddleware({ model: select })] });
    await agent.send('Weather?');
    await agent.send('Now mail it to Ann');
    expect(select.calls).toHaveLength(2);
    expect(model.calls.map((call) => toolNames(call.request.tools))).toEqual([['weather'], ['email']]);
  });

  it('keeps the selection through suspend → JSON → resume: the resumed turn pays no side call', async () => {
    const send = defineTool({ name: 'email', description: 'The email tool', input: z.object({ q: z.string() }), needsApproval: true, execute: ({ q }) => `sent ${q}` });
    const all = [...tools.filter((t) => t.name !== 'email'), send];
    const model = mockModel([{ toolCalls: [{ id: 'm1', name: 'email', args: { q: 'hi' } }] }, 'Sent.']);
    const select = selector(pick('email', 'calendar'));
    const agent = createAgent({ model, tools: all, middleware: [toolSelectorMiddleware({ model: select })] });
    const paused = await agent.run('Mail Ann');
    expect(paused.status).toBe('suspended');
    const done = await agent.resume(JSON.parse(JSON.stringify(paused.state)), { m1: true });
    expect(done.status).toBe('completed');
    expect(select.calls).toHaveLength(1);
    expect(toolNames(model.calls[1].request.tools)).toEqual(['calendar', 'email']);
  });
});

describe('toolSelectorMiddleware: an answer that is no selection falls back to every tool', () => {
  it.each([
    ['prose instead of JSON', 'I would use the weather tool.'],
    ['JSON of another shape', '{"choice": "weather"}'],
    ['only names that were not offered', pick('teleport', 'time_travel')],
  ])('%s: all tools are offered and a warning is logged', async (_what, answer) => {
    const model = mockModel(['ok']);
    const log = warnings();
    const events: AgentEvent[] = [];
    await createAgent({ model, tools, logger: log.logger, middleware: [toolSelectorMiddleware({ model: selector(answer) })] }).run('Hi', { onEvent: (e) => events.push(e) });
    expect(toolNames(model.calls[0].request.tools)).toEqual(NAMES);
    expect(log.messages).toHaveLength(1);
    expect(log.messages[0]).toMatch(/^toolSelectorMiddleware: .*; this turn offers all 8 tools$/);
    expect(ofType(events, 'tool-selector.selected')[0]).toMatchObject({ fallback: true });
  });

  it('a selector that fails: all tools, a warning, and the run goes on', async () => {
    const model = mockModel(['ok']);
    const log = warnings();
    const result = await createAgent({ model, tools, logger: log.logger, middleware: [toolSelectorMiddleware({ model: mockModel([{ error: 'overloaded' }]) })] }).run('Hi');
    expect(result.status).toBe('completed');
    expect(toolNames(model.calls[0].request.tools)).toEqual(NAMES);
    expect(log.messages[0]).toMatch(/the selector's call failed/);
  });

  it('reads JSON inside prose or a code fence, a bare list, and drops repeats and unknown names (with a warning)', async () => {
    const offered = new Set(NAMES);
    expect(readSelection('Sure:\n```json\n{"tools": ["maps", "weather", "maps"]}\n```', offered)).toEqual({ tools: ['maps', 'weather'], unknown: [] });
    expect(readSelection('["email"]', offered)).toEqual({ tools: ['email'], unknown: [] });
    expect(readSelection('{"tools": []}', offered)).toEqual({ tools: [], unknown: [] });
    const model = mockModel(['ok']);
    const log = warnings();
    await createAgent({ model, tools, logger: log.logger, middleware: [toolSelectorMiddleware({ model: selector(pick('weather', 'teleport')) })] }).run('Hi');
    expect(toolNames(model.calls[0].request.tools)).toEqual(['weather']);
    expect(log.messages).toEqual(['toolSelectorMiddleware: the selector named tools that were not offered, left out: teleport']);
  });

  it('an empty selection is a selection: only the always-included tools are offered', async () => {
    const model = mockModel(['Hello!']);
    await createAgent({ model, tools, middleware: [toolSelectorMiddleware({ model: selector(pick()), alwaysInclude: ['search'] })] }).run('Hi there');
    expect(toolNames(model.calls[0].request.tools)).toEqual(['search']);
  });
});

describe('toolSelectorMiddleware: options', () => {
  it.each([
    [{ maxTool: 3 }, /maxTool is not a tool selector option; did you mean `maxTools`\?/],
    [{ always: ['x'] }, /always is not a tool selector option; did you mean `alwaysInclude`\?/],
    [{ maxTools: 0 }, /maxTools must be a whole number ≥ 1/],
    [{ alwaysInclude: 'search' }, /alwaysInclude must be an array of tool names/],
    [{ model: 'gpt-5-mini' }, /model must be a model provider/],
  ])('%o is refused', (options, message) => {
    expect(() => toolSelectorMiddleware(options as never)).toThrow(message);
  });

  it('returns a middleware named tool-selector whose layer is a named function', () => {
    const mw = toolSelectorMiddleware();
    expect(mw.name).toBe('tool-selector');
    expect(mw.model?.name).toBe('selectTools');
  });
});
