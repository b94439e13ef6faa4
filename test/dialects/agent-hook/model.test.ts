// The AgentHook dialect around model calls: preGenerate and postGenerate, the live request and
// transcript, ctx.emit and ctx.generate. Test names quote the seed (000_…txt) or DESIGN.md §3.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, RunFailedError, type GenerateResult, type Message } from '../../../src/index.js';
import type { AgentHook, GenerateHookContext } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { callTool, eventLog, searchTool } from './fixtures.js';
import { textOf } from '../../../src/core/vocabulary/content.js';

describe('preGenerate and postGenerate', () => {
  it('"preGenerate(ctx): before each model call"; "postGenerate(ctx, result): after each model call resolves, with its GenerateResult"', async () => {
    const log: string[] = [];
    const replies: GenerateResult[] = [];
    const hook: AgentHook = {
      name: 'count',
      preGenerate(ctx) { log.push(`pre ${ctx.step}`); },
      postGenerate(ctx, result) { log.push(`post ${ctx.step}`); replies.push(result); },
    };
    const result = await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'done']), tools: [searchTool().tool], hooks: [hook] }).run('go');
    expect(log).toEqual(['pre 1', 'post 1', 'pre 2', 'post 2']);
    expect(replies.map((r) => r.message)).toEqual(result.messages.filter((m) => m.role === 'assistant'));
    expect(replies[1]).toMatchObject({ finishReason: 'stop', usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) } });
  });

  it('"request (the live GenerateOptions about to be sent)": changing a request field changes what the model is sent', async () => {
    const model = mockModel(['hi']);
    const hook: AgentHook = { name: 'tune', preGenerate(ctx) { ctx.request.temperature = 0; ctx.request.headers = { 'x-trace': 'abc' }; } };
    await createAgent({ model, hooks: [hook], modelSettings: { temperature: 0.7 } }).run('go');
    expect(model.calls[0].request).toMatchObject({ temperature: 0, headers: { 'x-trace': 'abc' } });
  });

  it('"ctx.messages is the live transcript; ctx.request is the live request. A message pushed in preGenerate stays in the transcript" (DESIGN §3)', async () => {
    const model = mockModel(['hi']);
    let seen: GenerateHookContext | undefined;
    const hook: AgentHook = {
      name: 'note',
      preGenerate(ctx) { seen = ctx; ctx.messages.push({ role: 'system', content: 'Answer briefly.' }); },
    };
    const result = await createAgent({ model, hooks: [hook] }).run('go');
    // Live: the hook's ctx.messages and ctx.request.messages are one view of the transcript, which shows the reply that came after.
    expect(seen!.request.messages).toBe(seen!.messages);
    expect(seen!.messages).toEqual(result.messages);
    expect(model.calls[0].messages.at(-1)).toEqual({ role: 'system', content: 'Answer briefly.' });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant']);
  });

  it('the common fields are there on a GenerateHookContext: agentId, agentName, sessionId, metadata; subagent unset in a lead agent', async () => {
    let seen: GenerateHookContext | undefined;
    const hook: AgentHook = { name: 'look', postGenerate(ctx) { seen = ctx; } };
    await createAgent({ name: 'writer', model: mockModel(['hi']), hooks: [hook], metadata: { tier: 'gold' } }).run('go', { sessionId: 'sess-1' });
    expect(seen).toMatchObject({ agentId: 'writer', agentName: 'writer', sessionId: 'sess-1', metadata: { tier: 'gold' } });
    expect(seen!.subagent).toBeUndefined();
  });

  it('what preGenerate and postGenerate return is ignored ("Nothing; mutate ctx.messages or ctx.request, or throw"), so an arrow function returning push()\'s count is fine', async () => {
    const notes: string[] = [];
    const hook: AgentHook = { name: 'arrow', preGenerate: () => notes.push('pre'), postGenerate: () => ({ result: 'ignored' }) };
    const result = await createAgent({ model: mockModel(['hi']), hooks: [hook] }).run('go');
    expect(result.text).toBe('hi');
    expect(notes).toEqual(['pre']);
  });

  it('a model call that fails does not reach postGenerate: the run fails with the provider\'s error', async () => {
    const log: string[] = [];
    const hook: AgentHook = { name: 'watch', preGenerate() { log.push('pre'); }, postGenerate() { log.push('post'); } };
    const error = await createAgent({ model: mockModel([{ error: 'rate limited' }]), hooks: [hook] }).run('go').catch((e) => e);
    expect(error).toMatchObject({ code: 'model_error' });
    expect(log).toEqual(['pre']);
  });
});

describe('ctx.emit', () => {
  it('"ctx.emit exists when the run has listeners (createAgent({ onEvent }))", and what it emits joins the run\'s events', async () => {
    const log = eventLog();
    const hook: AgentHook = {
      name: 'compactor',
      preGenerate(ctx) { ctx.emit?.({ type: 'compaction.start', messages: ctx.messages.length, tokens: 10 }); },
      preToolCall(ctx) { ctx.emit?.({ type: 'audit.tool', tool: ctx.toolName }); },
    };
    const result = await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks: [hook], onEvent: log.onEvent }).run('go');
    expect(log.ofType('compaction.start')).toEqual([
      expect.objectContaining({ type: 'compaction.start', messages: 1, tokens: 10, runId: result.runId }),
      expect.objectContaining({ type: 'compaction.start', messages: 3, tokens: 10, runId: result.runId }),
    ]);
    expect(log.events.filter((e) => (e.type as string) === 'audit.tool')).toEqual([expect.objectContaining({ tool: 'search', runId: result.runId })]);
  });

  it('an onEvent given to one run makes ctx.emit exist for that run', async () => {
    const present: boolean[] = [];
    const hook: AgentHook = { name: 'probe', preGenerate(ctx) { present.push(typeof ctx.emit === 'function'); } };
    const agent = createAgent({ model: mockModel(['a', 'b']), hooks: [hook] });
    await agent.run('one');
    await agent.run('two', { onEvent: () => undefined });
    expect(present).toEqual([false, true]);
  });

  it('"ctx.emit exists when the run … is streamed": a streamed run\'s hooks get it, and what they emit comes out of the stream', async () => {
    const present: boolean[] = [];
    const hook: AgentHook = { name: 'probe', preGenerate(ctx) { present.push(typeof ctx.emit === 'function'); ctx.emit?.({ type: 'probe.seen' }); } };
    const stream = createAgent({ model: mockModel(['hi']), hooks: [hook] }).stream('go');
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(present).toEqual([true]);
    expect(types).toContain('probe.seen');
    expect((await stream.result).text).toBe('hi');
  });

  it('"ctx.emit exists" only then: without listeners it is absent, on model and tool contexts alike', async () => {
    const present: boolean[] = [];
    const hook: AgentHook = { name: 'probe', preGenerate(ctx) { present.push('emit' in ctx); }, preToolCall(ctx) { present.push('emit' in ctx); } };
    await createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks: [hook] }).run('go');
    expect(present).toEqual([false, false, false]);
  });
});

describe('ctx.generate', () => {
  it('"preGenerate also gets ctx.generate(provider, request, purpose): a side model call" that "counts in the run\'s usage"', async () => {
    const summarizer = mockModel([{ text: 'a summary', usage: { inputTokens: 100, outputTokens: 7 } }]);
    let summary = '';
    const hook: AgentHook = {
      name: 'summarize',
      async preGenerate(ctx) {
        const side = await ctx.generate(summarizer, { messages: [{ role: 'user', content: 'Summarize the chat' }] }, 'summary');
        summary = textOf(side.message.content);
      },
    };
    const model = mockModel([{ text: 'hi', usage: { inputTokens: 5, outputTokens: 1 } }]);
    const result = await createAgent({ model, hooks: [hook] }).run('go');
    expect(summary).toBe('a summary');
    expect(summarizer.calls[0].messages).toEqual([{ role: 'user', content: 'Summarize the chat' }]);
    expect(result.usage).toMatchObject({ modelCalls: 2, inputTokens: 105, outputTokens: 8, totalTokens: 113 });
  });

  it('"counts in the run\'s usage and budgets": a side call counts toward limits.modelCalls', async () => {
    const hook: AgentHook = { name: 'side', async preGenerate(ctx) { await ctx.generate(mockModel(['aside']), { messages: [] }, 'aside'); } };
    const model = mockModel([callTool('search', { query: 'q' }), 'done']);
    const result = await createAgent({ model, tools: [searchTool().tool], hooks: [hook], limits: { modelCalls: 2 } }).run('go');
    // One turn plus its side call reach the budget of 2, so the second turn never happens.
    expect(model.calls).toHaveLength(1);
    expect(result.stopReason).toBe('limit:model_calls');
  });

  it('"gets its own chat span tagged with the purpose": its model.start and model.done events carry the purpose', async () => {
    const log = eventLog();
    const hook: AgentHook = { name: 'classify', async preGenerate(ctx) { await ctx.generate(mockModel(['safe']), { messages: ctx.messages }, 'classifier'); } };
    await createAgent({ model: mockModel(['hi']), hooks: [hook], onEvent: log.onEvent }).run('go');
    const calls = log.events.filter((e) => e.type === 'model.start' || e.type === 'model.done').map((e) => `${e.type} ${(e as { purpose: string }).purpose}`);
    expect(calls).toEqual(['model.start turn', 'model.start classifier', 'model.done classifier', 'model.done turn']);
  });
});

describe('content a hook puts in the transcript', () => {
  // Every message and part a hook writes is checked where it enters, so no run hands back a
  // state that resume would refuse.
  const photo = (image: unknown) => ({ role: 'user', content: [{ type: 'image', image }] }) as Message;
  const approvedTool = defineTool({ name: 'publish', description: 'Publish it', input: z.object({}), needsApproval: true, execute: () => 'published' });

  it.each([
    ['pushes a message whose image is a number', (ctx: GenerateHookContext): void => void ctx.messages.push(photo(12345)), /ctx\.messages\[1\]\.content\[0\]\.image must be a string: a URL or base64 data$/],
    ['pushes a part into a message', (ctx: GenerateHookContext): void => void (ctx.messages[0].content as unknown[]).push({ type: 'image', image: 12345 }), /ctx\.messages\[0\]\.content\[1\]\.image must be a string.*\(the change was undone\)/],
    ['edits a part in place', (ctx: GenerateHookContext): void => void ((ctx.messages[0].content as { image: unknown }[])[0].image = 12345), /ctx\.messages\[0\]\.content\[0\]\.image must be a string.*\(the change was undone\)/],
    ['pushes bytes (a Uint8Array)', (ctx: GenerateHookContext): void => void ctx.messages.push(photo(new Uint8Array([1, 2, 3]))), /got bytes: a transcript is JSON, so pass Buffer\.from\(bytes\)\.toString\('base64'\)/],
  ] as const)('a preGenerate that %s fails the run with hook_failed naming the hook; the model is not called and the state stays resumable', async (_what, write, message) => {
    const model = mockModel(['never']);
    const error = await createAgent({ model, hooks: [{ name: 'attach', preGenerate: write }] }).run([photo('https://example.com/cat.png')]).catch((e: unknown) => e as RunFailedError);
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'attach' });
    expect((error as RunFailedError).message).toMatch(message);
    expect(model.calls).toHaveLength(0);
    expect((error as RunFailedError).state.messages).toEqual([photo('https://example.com/cat.png')]);
  });

  it('a message a hook pushed is kept as it was checked: a change the hook makes later through its own reference reaches neither the model nor the state, and the suspended run resumes', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'publish', args: {} }] }, 'done']);
    const hook: AgentHook = {
      name: 'attach',
      async preGenerate(ctx) {
        if (ctx.step !== 1) return;
        const mine = photo('https://example.com/dog.png');
        ctx.messages.push(mine);
        await Promise.resolve();
        (mine.content as { image: unknown }[])[0].image = new Uint8Array([1, 2, 3]);
      },
    };
    const agent = createAgent({ model, tools: [approvedTool], hooks: [hook] });
    const paused = await agent.run('go');
    expect(paused.status).toBe('suspended');
    expect(model.calls[0].messages[1]).toEqual(photo('https://example.com/dog.png'));
    const stored = JSON.parse(JSON.stringify(paused.state));
    expect(stored.messages[1]).toEqual(photo('https://example.com/dog.png'));
    const done = await agent.resume(stored, { [paused.pendingApprovals[0].toolCallId]: true });
    expect(done.text).toBe('done');
  });
});
