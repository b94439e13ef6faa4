// Structured output: a run's final answer as the value of a zod schema — through the provider's
// JSON response format or a final-answer tool, repaired a bounded number of times, checked
// when a layer ends the run, typed in result.output.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, InvalidOutputError, KoagentError, RunFailedError, type AgentEvent, type Middleware } from '../../src/index.js';
import type { AgentHook, Hook } from '../../src/hooks.js';
import { mockModel } from '../../src/testing/index.js';

const Weather = z.object({ city: z.string(), celsius: z.number() });

async function failure(promise: Promise<unknown>): Promise<RunFailedError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RunFailedError) return error;
    throw error;
  }
  throw new Error('expected the run to fail');
}

describe('native mode: the provider\'s JSON response format', () => {
  it('asks every turn for JSON fitting the schema and gives the parsed value as result.output', async () => {
    const model = mockModel(['{"city":"Oslo","celsius":4}']);
    const events: AgentEvent[] = [];
    const result = await createAgent({ model, output: Weather }).run('Weather in Oslo?', { onEvent: (e) => events.push(e) });
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
    expect(model.calls[0].request.responseFormat).toEqual({
      type: 'json',
      name: 'final_answer',
      description: expect.any(String),
      schema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] },
    });
    expect(result.state.output).toEqual({ city: 'Oslo', celsius: 4 });
    expect(events.filter((e) => e.type === 'output')).toEqual([expect.objectContaining({ output: { city: 'Oslo', celsius: 4 } })]);
    expect(events.findIndex((e) => e.type === 'output')).toBeLessThan(events.findIndex((e) => e.type === 'run.end'));
  });

  it('sends a reply that does not fit back with the validation error, and takes the repaired answer', async () => {
    const model = mockModel(['It is 4 degrees.', '{"city":"Oslo","celsius":"four"}', '{"city":"Oslo","celsius":4}']);
    const result = await createAgent({ model, output: Weather }).run('Weather in Oslo?');
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
    const repairs = result.messages.filter((m) => m.role === 'user').slice(1).map((m) => m.content as string);
    expect(repairs).toHaveLength(2);
    expect(repairs[0]).toMatch(/^The reply is not JSON\.\nReply again with only JSON that fits this JSON schema:\n\{"type":"object"/);
    expect(repairs[1]).toMatch(/does not fit the required output:\n✖ Invalid input: expected number, received string\n  → at celsius/);
    expect(result.usage.modelCalls).toBe(3);
  });

  it('fails with invalid_output carrying the last raw reply once the repairs are used up', async () => {
    const model = mockModel(['nope', 'still nope']);
    const error = await failure(createAgent({ model, output: { schema: Weather, repairs: 1 } }).run('Weather?'));
    expect(error.code).toBe('invalid_output');
    expect(error.message).toMatch(/does not fit the output schema after 1 repair\. The reply is not JSON\.\nLast answer: still nope/);
    expect(error.cause).toBeInstanceOf(InvalidOutputError);
    expect((error.cause as InvalidOutputError).raw).toBe('still nope');
    expect(error.state.status).toBe('failed');
    expect(error.state.error?.code).toBe('invalid_output');
    expect(model.remaining).toBe(0);
  });

  it('takes JSON inside a code fence, as some models write it even when asked for JSON', async () => {
    const result = await createAgent({ model: mockModel(['```json\n{"city":"Rome","celsius":19}\n```']), output: Weather }).run('Rome?');
    expect(result.output).toEqual({ city: 'Rome', celsius: 19 });
  });

  it('gives the schema\'s output (transforms applied) while the state keeps the JSON the model wrote', async () => {
    const Dated = z.object({ on: z.iso.date().transform((d) => new Date(`${d}T00:00:00Z`)) });
    const result = await createAgent({ model: mockModel(['{"on":"2026-12-01"}']), output: Dated }).run('When?');
    expect(result.output.on).toBeInstanceOf(Date);
    expect(result.output.on.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(JSON.parse(JSON.stringify(result.state)).output).toEqual({ on: '2026-12-01' });
  });

  it('wraps a schema that is not an object as { value }, since response formats and tool arguments are objects', async () => {
    const model = mockModel(['{"value":["a","b"]}']);
    const result = await createAgent({ model, output: z.array(z.string()) }).run('List');
    expect(result.output).toEqual(['a', 'b']);
    expect(result.state.output).toEqual(['a', 'b']);
    expect(model.calls[0].request.responseFormat).toMatchObject({ schema: { type: 'object', properties: { value: { type: 'array', items: { type: 'string' } } }, required: ['value'] } });
  });

  it('lets tool turns happen first: only the final reply must fit', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Looks up the temperature', input: z.object({ city: z.string() }), execute: () => 4 });
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { city: 'Oslo' } }] }, '{"city":"Oslo","celsius":4}']);
    const result = await createAgent({ model, tools: [lookup], output: Weather }).run('Oslo?');
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
    expect(model.calls[1].request.responseFormat).toMatchObject({ type: 'json' });
  });
});

describe('tool mode: a final-answer tool', () => {
  it('is used when the provider has no JSON-schema format, and its arguments are the answer', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'final_answer', args: { city: 'Oslo', celsius: 4 } }] }], { structuredOutputs: false });
    const result = await createAgent({ model, output: Weather }).run('Oslo?');
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
    expect(result.stopReason).toBe('final');
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0].request.responseFormat).toBeUndefined();
    expect(model.calls[0].request.tools).toEqual([expect.objectContaining({ name: 'final_answer', parameters: expect.objectContaining({ required: ['city', 'celsius'] }) })]);
  });

  it('gives the model the validation error of an answer that does not fit, and takes the corrected one', async () => {
    const model = mockModel([
      { toolCalls: [{ name: 'final_answer', args: { city: 'Oslo' } }] },
      { toolCalls: [{ name: 'final_answer', args: { city: 'Oslo', celsius: 4 } }] },
    ]);
    const result = await createAgent({ model, output: { schema: Weather, mode: 'tool' } }).run('Oslo?');
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', name: 'final_answer', content: expect.stringMatching(/does not fit the required output:\n✖ Invalid input: expected number, received undefined\n  → at celsius\nCall final_answer again/) });
  });

  it('asks for the tool when the model answers in text, and fails with invalid_output when answers keep not fitting', async () => {
    const model = mockModel(['Oslo, 4 degrees.', { toolCalls: [{ name: 'final_answer', args: { city: 4 } }] }, { toolCalls: [{ name: 'final_answer', args: { town: 'Oslo' } }] }]);
    const error = await failure(createAgent({ model, output: { schema: Weather, mode: 'tool', repairs: 2 } }).run('Oslo?'));
    expect(model.calls[1].messages.at(-1)).toEqual({ role: 'user', content: 'The reply gave no answer through final_answer.\nGive your final answer by calling final_answer.' });
    expect(error.code).toBe('invalid_output');
    expect((error.cause as InvalidOutputError).raw).toEqual({ town: 'Oslo' });
    expect(model.remaining).toBe(0);
  });

  it('unwraps the answer to a schema that is not an object once: the tool\'s { value } is the answer', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'final_answer', args: { value: 5 } }] }]);
    const result = await createAgent({ model, output: { schema: z.number(), mode: 'tool' } }).run('How many?');
    expect(result.output).toBe(5);
    expect(result.state.output).toBe(5);
    expect(model.calls).toHaveLength(1);
  });

  it('refuses a tool of the agent with the final-answer tool\'s name, and takes another name', async () => {
    const clash = defineTool({ name: 'final_answer', description: 'x', execute: () => 'x' });
    expect(() => createAgent({ model: mockModel([]), tools: [clash], output: { schema: Weather, mode: 'tool' } })).toThrow(/a tool is named "final_answer".*give the output another name/);
    const model = mockModel([{ toolCalls: [{ name: 'report', args: { city: 'Oslo', celsius: 4 } }] }]);
    const result = await createAgent({ model, tools: [clash], output: { schema: Weather, mode: 'tool', name: 'report' } }).run('Oslo?');
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
  });
});

describe('an output a layer ends the run with', () => {
  it('is kept in the state as the layer gave it: text that reads as JSON stays text', async () => {
    const cached: Middleware = { name: 'cached', run: (ctx) => ctx.end('123') };
    const result = await createAgent({ model: mockModel([]), output: z.string() }).use(cached).run('Code?');
    expect(result.output).toBe('123');
    expect(result.state.output).toBe('123');
  });

  it('must fit the schema too: from a model layer and from a run layer', async () => {
    const fromModel: Middleware = { name: 'cached', model: (ctx) => ctx.end({ city: 'Oslo', celsius: 4 }) };
    expect((await createAgent({ model: mockModel([]), output: Weather, middleware: [fromModel] }).run('x')).output).toEqual({ city: 'Oslo', celsius: 4 });
    const badRun: Middleware = { name: 'quota', run: (ctx) => ctx.end('quota used up') };
    const error = await failure(createAgent({ model: mockModel([]), output: Weather, middleware: [badRun] }).run('x'));
    expect(error.code).toBe('invalid_output');
    expect(error.message).toMatch(/The output the layer gave does not fit/);
    expect((error.cause as InvalidOutputError).raw).toBe('quota used up');
  });
});

describe('an output schema of one run', () => {
  it('replaces the agent\'s for that run only', async () => {
    const agent = createAgent({ model: mockModel(['{"city":"Oslo","celsius":4}', '{"verdict":"yes"}', 'plain']), output: Weather });
    expect((await agent.run('a')).output).toEqual({ city: 'Oslo', celsius: 4 });
    const verdict = await agent.run('b', { output: z.object({ verdict: z.enum(['yes', 'no']) }) });
    expect(verdict.output.verdict).toBe('yes');
    const plain = createAgent({ model: mockModel(['plain']) });
    expect((await plain.run('c')).output).toBe('plain');
  });

  it('is asked for again by resume, since the run state holds no schema', async () => {
    const rm = defineTool({ name: 'rm', description: 'Removes', input: z.object({ path: z.string() }), needsApproval: true, execute: () => 'removed' });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'rm', args: { path: '/tmp/x' } }] }, '{"done":true}']), tools: [rm] });
    const Done = z.object({ done: z.boolean() });
    const suspended = await agent.run('Clean up', { output: Done });
    expect(suspended.status).toBe('suspended');
    expect(suspended.output).toBeUndefined();
    const state = JSON.parse(JSON.stringify(suspended.state));
    const decisions = { [suspended.pendingApprovals[0].toolCallId]: true };
    await expect(agent.resume(state, decisions)).rejects.toThrow(/was started with an output schema; pass it again/);
    const resumed = await agent.resume(state, decisions, { output: Done });
    expect(resumed.output).toEqual({ done: true });
  });
});

describe('structured output with streaming and the dialects', () => {
  it('streams the partial text, and the parsed value arrives at the end', async () => {
    const agent = createAgent({ model: mockModel(['{"city": "Oslo", "celsius": 4}'], { streamChunk: 5 }), output: Weather });
    const stream = agent.stream('Oslo?');
    const seen: string[] = [];
    for await (const event of stream) if (event.type === 'text.delta' || event.type === 'output') seen.push(event.type === 'output' ? 'output' : event.delta);
    expect(seen.slice(0, -1).join('')).toBe('{"city": "Oslo", "celsius": 4}');
    expect(seen.at(-1)).toBe('output');
    expect((await stream.result).output).toEqual({ city: 'Oslo', celsius: 4 });
  });

  it('leaves hooks of both dialects as they were: they see the JSON replies and the repair turns', async () => {
    const generated: string[] = [];
    const agentHook: AgentHook = { name: 'watch', postGenerate: (ctx) => { generated.push(String(ctx.messages.length)); } };
    const afterModel: string[] = [];
    const criogen: Hook = { name: 'criogen-watch', afterModel: (ctx) => { afterModel.push(String(ctx.messages.at(-1)?.content)); } };
    const model = mockModel(['oops', '{"city":"Oslo","celsius":4}']);
    const result = await createAgent({ model, output: Weather, hooks: [agentHook, criogen] }).run('Oslo?');
    expect(result.output).toEqual({ city: 'Oslo', celsius: 4 });
    expect(afterModel).toEqual(['oops', '{"city":"Oslo","celsius":4}']);
    expect(generated).toHaveLength(2);
  });
});

describe('structured output: options', () => {
  it('names a misspelled option and a value that is not a schema', () => {
    expect(() => createAgent({ model: mockModel([]), output: { schema: Weather, retries: 1 } as never })).toThrow(/retries is not .*did you mean `repairs`\?/);
    expect(() => createAgent({ model: mockModel([]), output: { shape: Weather } as never })).toThrow(/createAgent: output/);
    expect(() => createAgent({ model: mockModel([]), outputSchema: Weather } as never)).toThrow(/did you mean `output`\?/);
  });

  it('is a KoagentError code a caller can branch on', async () => {
    const error = await failure(createAgent({ model: mockModel(['x']), output: { schema: Weather, repairs: 0 } }).run('x'));
    expect(KoagentError.is(error) && error.code === 'invalid_output').toBe(true);
  });
});

describe('a sub-agent with an output schema', () => {
  it('gives the lead its checked answer as JSON', async () => {
    const analyst = createAgent({ name: 'analyst', model: mockModel(['{"city":"Oslo","celsius":4}']), output: Weather });
    const lead = createAgent({ model: mockModel([{ toolCalls: [{ name: 'analyst', args: { task: 'Oslo' } }] }, 'Done.']), tools: [analyst.asTool({ description: 'Analyses the weather' })] });
    const result = await lead.run('Weather?');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toBe('{"city":"Oslo","celsius":4}');
  });
});
