// The Agent's public surface: options, use(), native middleware names, run() and send().
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, createAgent, defineTool, KoagentError, type Middleware, type ModelContext, type GenerateResult, type ToolContext, type ToolOutcome } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { add, gate, provider, rejection, reply } from '../support/core.js';

describe('createAgent options', () => {
  it('new Agent(options) and createAgent(options) make the same kind of agent', async () => {
    expect(createAgent({ model: mockModel([]) })).toBeInstanceOf(Agent);
    expect((await new Agent({ model: mockModel(['hi']) }).run('Hi')).text).toBe('hi');
  });

  it('accepts the model under the name `provider` (AgentHook framework spelling)', async () => {
    const result = await createAgent({ provider: mockModel(['via provider']) }).run('Hi');
    expect(result.text).toBe('via provider');
  });

  it.each([
    ['a missing model', {}, /`model` must be a model provider/],
    ['both model and provider, different', { model: mockModel([]), provider: mockModel([]) }, /give the model as either `model` or `provider`, not both/],
    ['a model without generate()', { model: { name: 'x' } }, /`model` must be a model provider/],
    ['maxSteps 0', { model: mockModel([]), maxSteps: 0 }, /maxSteps must be a whole number ≥ 1 \(got 0\)/],
    ['maxSteps 2.5', { model: mockModel([]), maxSteps: 2.5 }, /maxSteps must be a whole number ≥ 1 \(got 2.5\)/],
    ['toolConcurrency "x"', { model: mockModel([]), toolConcurrency: 'x' }, /toolConcurrency must be a whole number ≥ 1 or Infinity \(got the string "x"\)/],
    ['toolConcurrency 0', { model: mockModel([]), toolConcurrency: 0 }, /toolConcurrency must be/],
    ['tools that are not an array', { model: mockModel([]), tools: add }, /tools must be an array/],
    ['a tool not made with defineTool', { model: mockModel([]), tools: [{ name: 'x', description: 'x', execute: () => 1 }] }, /tools\[0\] is not a tool; make tools with defineTool/],
    ['middleware that is not an array', { model: mockModel([]), middleware: { tool: () => undefined } }, /middleware must be an array/],
    ['a non-middleware in middleware', { model: mockModel([]), middleware: [42] }, /createAgent\(\{ middleware \}\): expected a middleware .* got number/],
    ['an empty name', { model: mockModel([]), name: '' }, /name must be a non-empty string/],
    ['metadata that is not an object', { model: mockModel([]), metadata: 'x' }, /metadata must be an object/],
    ['onToolException "ignore"', { model: mockModel([]), onToolException: 'ignore' }, /onToolException must be 'model', 'fail' or a function/],
  ])('rejects %s with a TypeError naming the option', (_what, options, message) => {
    expect(() => createAgent(options as never)).toThrow(TypeError);
    expect(() => createAgent(options as never)).toThrow(message);
  });

  it('rejects two tools with the same name, naming it and both positions', () => {
    const other = defineTool({ name: 'add', description: 'Another add', input: z.object({}), execute: () => 0 });
    expect(() => createAgent({ model: mockModel([]), tools: [add, other] })).toThrow(new TypeError('createAgent: two tools are named "add" (tools[0] and tools[1]); tool names must be unique'));
  });

  it('gives instructions to the model as the first, system message', async () => {
    const model = mockModel(['ok']);
    await createAgent({ model, instructions: 'You are terse.' }).run('Hi');
    expect(model.calls[0].messages).toEqual([{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hi' }]);
  });

  it('offers the tools\' JSON schemas to the model on every call', async () => {
    const model = mockModel(['ok']);
    await createAgent({ model, tools: [add] }).run('Hi');
    expect(model.calls[0].request.tools).toEqual([add.spec]);
  });
});

describe('agent.use()', () => {
  const noop = (): void => undefined;

  it('returns the agent, so calls chain, and each call adds an inner layer', async () => {
    const log: string[] = [];
    const agent = createAgent({ model: mockModel(['ok']) });
    const mw = (name: string): Middleware => ({ name, model: async (_c, next) => { log.push(name); return next(); } });
    expect(agent.use(mw('first')).use(mw('second'))).toBe(agent);
    await agent.run('Hi');
    expect(log).toEqual(['first', 'second']);
  });

  it('takes effect on the next run of an agent that has already run', async () => {
    const model = mockModel(['one', 'two']);
    const agent = createAgent({ model });
    await agent.run('first');
    agent.use({ name: 'late', model: async (_ctx, next) => { const r = await next(); return { ...r, message: { ...r.message, content: `${r.message.content} (late)` } }; } });
    expect((await agent.run('second')).text).toBe('two (late)');
  });

  it('puts layers added with use() inside those given as the middleware option', async () => {
    const log: string[] = [];
    const mw = (name: string): Middleware => ({ name, run: async (_c, next) => { log.push(name); return next(); } });
    await createAgent({ model: mockModel(['ok']), middleware: [mw('option')] }).use(mw('used')).run('Hi');
    expect(log).toEqual(['option', 'used']);
  });

  it('names a middleware without a name middleware#<position>', async () => {
    const anonymous: Middleware = { tool: async () => { throw new Error('x'); } };
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }]), tools: [add], middleware: [{ name: 'named', run: (_c, n) => n() }] }).use(anonymous);
    const error = await rejection(agent.run('Hi'));
    expect(error.layer).toBe('middleware#1');
  });

  it('takes a class instance whose hook methods live on the prototype, with `this` bound to the instance', async () => {
    class CountingMiddleware {
      readonly name = 'counting';
      calls = 0;
      async model(_ctx: ModelContext, next: () => Promise<GenerateResult>) {
        this.calls++;
        return this.tag(await next());
      }
      async tool(_ctx: ToolContext, next: () => Promise<ToolOutcome>) {
        this.calls++;
        return next();
      }
      private tag(result: GenerateResult): GenerateResult {
        return { ...result, message: { ...result.message, content: `${result.message.content} [seen by ${this.name}]` } };
      }
    }
    const counting = new CountingMiddleware();
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, 'two']);
    const result = await createAgent({ model, tools: [add] }).use(counting).run('1+1?');
    expect(counting.calls).toBe(3);
    expect(result.text).toBe('two [seen by counting]');
  });

  // A layer that is a method of its object is called as that method (see compose.ts), by the
  // wrapper of its kind: an `async` function has one of its own.
  it.each([
    ['plain', (mark: string, seen: string[]): NonNullable<Middleware['tool']> => (_ctx, next) => { seen.push(mark); return next(); }],
    ['async', (mark: string, seen: string[]): NonNullable<Middleware['tool']> => async (_ctx, next) => { seen.push(mark); return next(); }],
  ])('reads a hook point once, when it builds its stacks: a getter is not run per call, and a function put there later is not called (%s functions)', async (_kind, layerFn) => {
    const seen: string[] = [];
    let reads = 0;
    const viaGetter = {
      name: 'via-getter',
      get tool(): Middleware['tool'] {
        reads++;
        return layerFn('getter', seen);
      },
    };
    const replaced: Middleware = { name: 'replaced', tool: layerFn('original', seen) };
    const calls = [{ name: 'add', args: { a: 1, b: 1 } }, { name: 'add', args: { a: 2, b: 2 } }, { name: 'add', args: { a: 3, b: 3 } }];
    const agent = createAgent({ model: mockModel([{ toolCalls: calls }, 'done', { toolCalls: calls }, 'done']), tools: [add] }).use(viaGetter).use(replaced);
    await agent.run('sums');
    const readsAfterOneRun = reads;
    replaced.tool = layerFn('later', seen);
    const result = await agent.run('again');
    expect(result.usage.toolCalls).toBe(3);
    expect(seen.filter((s) => s === 'getter')).toHaveLength(6);
    expect(seen.filter((s) => s === 'original')).toHaveLength(6);
    expect(seen).not.toContain('later');
    expect(reads).toBe(readsAfterOneRun);
  });

  it.each([
    ['a number', 42, /agent\.use\(\): expected a middleware \{ name, run\?, model\?, tool\? \} or a hook object, got number/],
    ['null', null, /got null/],
    ['an empty object', {}, /agent\.use\(\): this object has none of run\/model\/tool \(middleware\)/],
    ['an object whose hook points are not functions', { name: 'lazy', tool: 'yes' }, /lazy has none of run\/model\/tool/],
    ['an object mixing tool with preToolCall', { name: 'mixed', tool: noop, preToolCall: noop }, /mixed mixes tool \(middleware\) and preToolCall \(AgentHook\); split it into one object per kind/],
    ['a middleware whose name is not a string', { name: 7, tool: noop }, /\.name must be a string/],
  ])('throws a TypeError at once for %s, naming the problem', (_what, value, message) => {
    const agent = createAgent({ model: mockModel([]) });
    expect(() => agent.use(value as never)).toThrow(TypeError);
    expect(() => agent.use(value as never)).toThrow(message);
  });
});

describe('agent.run()', () => {
  it('starts from a fresh transcript each time', async () => {
    const model = mockModel(['first answer', 'second answer']);
    const agent = createAgent({ model });
    await agent.run('first question');
    const second = await agent.run('second question');
    expect(model.calls[1].messages).toEqual([{ role: 'user', content: 'second question' }]);
    expect(second.messages).toHaveLength(2);
  });

  it('resolves to a RunResult with every field filled in', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 2 } }], usage: { inputTokens: 10, outputTokens: 3 } }, { text: 'Four.', usage: { inputTokens: 20, outputTokens: 2 } }]);
    const result = await createAgent({ model, tools: [add] }).run('2+2?', { sessionId: 'session-7' });
    expect(result).toMatchObject({ sessionId: 'session-7', status: 'completed', stopReason: 'final', text: 'Four.', output: 'Four.', pendingApprovals: [] });
    expect(result.runId).toMatch(/^run_/);
    expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 5, totalTokens: 35, modelCalls: 2, toolCalls: 1 });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(result.state).toMatchObject({ runId: result.runId, sessionId: 'session-7', status: 'completed', stopReason: 'final', output: 'Four.' });
    expect(result.state.messages).toBe(result.messages);
  });

  it('returns a state that survives a JSON round trip unchanged', async () => {
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 2 } }] }, 'Four.']), tools: [add] }).run('2+2?');
    expect(JSON.parse(JSON.stringify(result.state))).toStrictEqual(result.state);
  });

  it('merges run metadata over the agent\'s metadata into ctx.metadata, fresh for each run', async () => {
    const seen: Record<string, unknown>[] = [];
    const agentMetadata = { tenant: 'acme', tier: 'free' };
    const agent = createAgent({ model: mockModel(['a', 'b']), metadata: agentMetadata })
      .use({ name: 'spy', run: async (ctx, next) => { seen.push({ ...ctx.metadata }); ctx.metadata.touched = true; return next(); } });
    await agent.run('Hi', { metadata: { tier: 'pro', user: 'u1' } });
    await agent.run('Hi');
    expect(seen).toEqual([{ tenant: 'acme', tier: 'pro', user: 'u1' }, { tenant: 'acme', tier: 'free' }]);
    expect(agentMetadata).toEqual({ tenant: 'acme', tier: 'free' });
  });

  it('rejects (rather than throwing) input that is not a message, naming what is wrong', async () => {
    const agent = createAgent({ model: mockModel([]) });
    const error = await rejection(agent.run(42 as never));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toMatch(/input is not a message/);
    expect((await rejection(agent.run([{ role: 'user', content: 'ok' }, { role: 'user' }] as never))).message).toMatch(/input\[1\]\.content must be a string/);
  });
});

describe('agent.send()', () => {
  it('continues the agent\'s session: the second call\'s model sees the first exchange', async () => {
    const model = mockModel(['Hello, Ada.', 'Your name is Ada.']);
    const agent = createAgent({ model, instructions: 'Be kind.' });
    const first = await agent.send('My name is Ada.');
    const second = await agent.send('What is my name?');
    expect(model.calls[1].messages).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello, Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.runId).not.toBe(first.runId);
  });

  it('leaves an earlier result\'s messages as they were after a later send', async () => {
    const agent = createAgent({ model: mockModel(['one', 'two']) });
    const first = await agent.send('1');
    const before = structuredClone(first.messages);
    await agent.send('2');
    expect(first.messages).toEqual(before);
  });

  it('rejects a second send() while the first is running with session_busy, and works again afterwards', async () => {
    const release = gate();
    const model = provider(async (_req, n) => { if (n === 1) await release.promise; return reply(`answer ${n}`); });
    const agent = createAgent({ model });
    const first = agent.send('one');
    const busy = await rejection(agent.send('two'));
    expect(KoagentError.is(busy) && busy.code).toBe('session_busy');
    expect(busy.message).toMatch(/the previous send\(\) has not finished; await it first/);
    release.open();
    expect((await first).text).toBe('answer 1');
    expect((await agent.send('three')).text).toBe('answer 2');
  });

  it('stays usable after a failed send: the next send sees the history, with unsettled calls closed as not run', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, 'Fresh start.']);
    let fail = true;
    const agent = createAgent({ model, tools: [add] }).use({ name: 'flaky', tool: async (_ctx, next) => { if (fail) { fail = false; throw new Error('flaky'); } return next(); } });
    const failed = await rejection(agent.send('first'));
    expect(KoagentError.is(failed) && failed.code).toBe('hook_failed');
    const second = await agent.send('second');
    expect(second.text).toBe('Fresh start.');
    expect(model.calls[1].messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(model.calls[1].messages[2]).toMatchObject({ role: 'tool', content: 'Error (aborted): Not run: the run ended before this call' });
  });

  it('does not touch the session when run() is used', async () => {
    const model = mockModel(['session reply', 'independent reply', 'second session reply']);
    const agent = createAgent({ model });
    await agent.send('in session');
    await agent.run('independent');
    await agent.send('again');
    expect(model.calls[2].messages.map((m) => m.content)).toEqual(['in session', 'session reply', 'again']);
  });
});

describe('stopWhen of one call', () => {
  it('stops that segment before the next model turn, and no other', async () => {
    const model = mockModel([{ toolCalls: [{ id: 'c', name: 'add', args: { a: 1, b: 2 } }] }, 'Three.', { toolCalls: [{ id: 'd', name: 'add', args: { a: 2, b: 2 } }] }, 'Four.']);
    const agent = createAgent({ model, tools: [add] });
    const stopped = await agent.run('1 + 2?', { stopWhen: (state) => state.messages.at(-1)?.role === 'tool' && 'stop:after_tools' });
    expect([stopped.status, stopped.stopReason, stopped.messages.at(-1)?.role]).toEqual(['completed', 'stop:after_tools', 'tool']);
    expect(model.calls).toHaveLength(1);
    const later = await agent.run('2 + 2?');
    expect(later.stopReason).toBe('final');
  });

  it('applies to a resume too, and true gives stop reason stop_when', async () => {
    const model = mockModel([{ toolCalls: [{ id: 'c', name: 'add', args: { a: 1, b: 2 } }] }, 'Three.']);
    const agent = createAgent({ model, tools: [add], permissions: [{ tool: 'add', decision: 'ask' }] });
    const paused = await agent.run('1 + 2?');
    const done = await agent.resume(paused.state, { c: true }, { stopWhen: [() => true] });
    expect([done.stopReason, done.messages.at(-1)?.content]).toEqual(['stop_when', '3']);
    expect(model.calls).toHaveLength(1);
  });

  it('a stopWhen that is not a condition is refused', async () => {
    await expect(createAgent({ model: mockModel([]) }).run('x', { stopWhen: 'soon' as never })).rejects.toThrow(/stopWhen must be a stop condition/);
  });
});
