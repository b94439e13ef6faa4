// contextEditingMiddleware: past a token threshold, old tool results read a placeholder instead
// of their content; the most recent `keep` stay, calls and results stay paired (the provider
// gets a valid conversation), excluded tools are left alone, and what it saved is counted. The
// edit is in the kept transcript, so the run store holds less (measured on SQLite and memory).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { compactionMiddleware } from '../../src/middleware.js';
import { createAgent, defineTool, memoryStore, type AgentEvent, type Message } from '../../src/index.js';
import { CLEARED_PLACEHOLDER } from '../../src/middleware/context-editing-middleware.js';
import { contextEditingMiddleware } from '../../src/middleware.js';
import { sqliteStore } from '../../src/sqlite.js';
import { estimateTokens } from '../../src/api.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { toolMessages } from '../support/core.js';

/** `read` returns `size` characters (size / 4 tokens) about the file it reads. */
const read = (size = 400) => defineTool({ name: 'read', description: 'Reads a file', input: z.object({ path: z.string() }), execute: ({ path }) => `${path}:`.padEnd(size, '.') });
const note = defineTool({ name: 'note', description: 'Reads the plan', input: z.object({}), execute: () => 'The plan: '.padEnd(400, '!') });

/** `n` turns, each reading one file (or two at once on every third turn), then an answer. */
function reads(n: number): MockReply[] {
  return [...Array.from({ length: n }, (_, t): MockReply => ({ toolCalls: Array.from({ length: t % 3 === 2 ? 2 : 1 }, (_, i) => ({ name: 'read', args: { path: `f${t}_${i}.txt` } })) })), 'Done.'];
}

/** What a provider needs of a conversation: every call answered right after its message, every result answering a call. */
function checkPairs(messages: readonly Message[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'tool') expect(messages.slice(0, i).some((a) => a.role === 'assistant' && a.toolCalls?.some((c) => c.id === m.toolCallId)), `result ${m.toolCallId} answers a call`).toBe(true);
    if (m.role !== 'assistant' || !m.toolCalls?.length) continue;
    const answers = messages.slice(i + 1, i + 1 + m.toolCalls.length);
    expect(answers.map((r) => (r.role === 'tool' ? r.toolCallId : r.role))).toEqual(m.toolCalls.map((c) => c.id));
  }
}

const tokensOf = (messages: readonly Message[]) => messages.reduce((sum, m) => sum + estimateTokens(m.content) + (m.role === 'assistant' && m.toolCalls ? Math.ceil(JSON.stringify(m.toolCalls).length / 4) : 0), 0);

describe('contextEditingMiddleware: what it clears', () => {
  it('leaves the transcript alone under the threshold', async () => {
    const model = mockModel(reads(3));
    const result = await createAgent({ model, tools: [read()], middleware: [contextEditingMiddleware({ triggerTokens: 10_000 })] }).run('Go');
    expect(toolMessages(result.messages).some((m) => m.content === CLEARED_PLACEHOLDER)).toBe(false);
    expect(result.usage.contextTokensCleared).toBeUndefined();
  });

  it('past the threshold, replaces the content of all but the `keep` most recent results with the placeholder, and marks them', async () => {
    const model = mockModel(reads(6));
    const result = await createAgent({ model, tools: [read()], middleware: [contextEditingMiddleware({ triggerTokens: 500, keep: 2 })] }).run('Go');
    const results = toolMessages(result.messages);
    expect(results).toHaveLength(8);
    // Cleared before the last model call: all but the last two.
    expect(results.map((m) => m.content === CLEARED_PLACEHOLDER)).toEqual([true, true, true, true, true, true, false, false]);
    expect(results[0]).toEqual({ role: 'tool', toolCallId: 'call_1', name: 'read', content: CLEARED_PLACEHOLDER, metadata: { contextCleared: true } });
    // What the model was sent last: the same, and under the threshold again.
    const last = model.calls.at(-1)!.messages;
    expect(toolMessages(last).filter((m) => m.content !== CLEARED_PLACEHOLDER).map((m) => m.toolCallId)).toEqual(['call_7', 'call_8']);
    expect(tokensOf(last)).toBeLessThanOrEqual(500);
  });

  it('keeps every call with its result: each request the provider gets is a valid conversation', async () => {
    for (const keep of [0, 1, 2, 3]) {
      const model = mockModel(reads(9));
      const result = await createAgent({ model, tools: [read()], middleware: [contextEditingMiddleware({ triggerTokens: 300, keep, clearArgs: true })] }).run('Go');
      expect(result.text).toBe('Done.');
      for (const call of model.calls) checkPairs(call.messages);
      checkPairs(result.messages);
    }
  });

  it('never clears the results of excluded tools, and they still count toward keep', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'note', args: {} }] }, ...reads(4)]);
    const result = await createAgent({ model, tools: [read(), note], middleware: [contextEditingMiddleware({ triggerTokens: 300, keep: 1, excludeTools: ['note'] })] }).run('Go');
    const results = toolMessages(result.messages);
    expect(results[0]).toMatchObject({ name: 'note', content: expect.stringMatching(/^The plan: /) });
    expect(results.slice(1).map((m) => m.content === CLEARED_PLACEHOLDER)).toEqual([true, true, true, true, false]);
  });

  it('with clearArgs, empties the arguments of the cleared calls only', async () => {
    const model = mockModel(reads(3));
    const result = await createAgent({ model, tools: [read()], middleware: [contextEditingMiddleware({ triggerTokens: 200, keep: 1, clearArgs: true })] }).run('Go');
    const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls ?? [] : []));
    expect(calls.map((c) => c.args)).toEqual([{}, {}, {}, { path: 'f2_1.txt' }]);
  });

  it('takes a placeholder of its own, and leaves results shorter than it as they are', async () => {
    const model = mockModel(reads(4));
    const result = await createAgent({ model, tools: [read()], middleware: [contextEditingMiddleware({ triggerTokens: 200, keep: 1, placeholder: '[gone]' })] }).run('Go');
    expect(toolMessages(result.messages).map((m) => m.content)).toEqual(['[gone]', '[gone]', '[gone]', '[gone]', expect.stringMatching(/^f3_0\.txt:/)]);
    const tiny = mockModel(reads(4));
    const kept = await createAgent({ model: tiny, tools: [read(8)], middleware: [contextEditingMiddleware({ triggerTokens: 1, keep: 1 })] }).run('Go');
    expect(toolMessages(kept.messages).some((m) => m.content === CLEARED_PLACEHOLDER)).toBe(false);
  });
});

describe('contextEditingMiddleware: what it reports', () => {
  it('counts the tokens it saved in usage.contextTokensCleared and says so in context_editing.cleared events', async () => {
    const before: number[] = [];
    const model = mockModel(reads(6));
    const events: AgentEvent[] = [];
    const measure = { name: 'measure', model: (ctx: { messages: Message[] }, next: () => Promise<unknown>) => { before.push(tokensOf(ctx.messages)); return next(); } };
    const result = await createAgent({ model, tools: [read()], middleware: [measure as never, contextEditingMiddleware({ triggerTokens: 500, keep: 2 })] }).run('Go', { onEvent: (e) => events.push(e) });
    const cleared = events.filter((e) => e.type === 'context_editing.cleared');
    expect(cleared.length).toBeGreaterThan(0);
    for (const e of cleared) {
      expect(e.tokensBefore).toBe(before[e.step - 1]);
      expect(e.tokensAfter).toBe(tokensOf(model.calls[e.step - 1].messages));
      expect(e.tokensCleared).toBe(e.tokensBefore - e.tokensAfter);
    }
    const total = cleared.reduce((sum, e) => sum + e.tokensCleared, 0);
    expect(result.usage.contextTokensCleared).toBe(total);
    expect(cleared.reduce((sum, e) => sum + e.results, 0)).toBe(6);
  });

  it('survives suspend → JSON → resume: cleared results stay cleared and are not counted again', async () => {
    const build = () => {
      const ask = defineTool({ name: 'ask', description: 'Needs a human', input: z.object({}), needsApproval: true, execute: () => 'approved' });
      return createAgent({ model: mockModel([...reads(4).slice(0, 4), { toolCalls: [{ name: 'ask', args: {} }] }, ...reads(2)], { resumable: true }), tools: [read(), ask], middleware: [contextEditingMiddleware({ triggerTokens: 300, keep: 1 })] });
    };
    const first = await build().run('Go');
    expect(first.status).toBe('suspended');
    const clearedBefore = first.usage.contextTokensCleared!;
    expect(clearedBefore).toBeGreaterThan(0);
    const done = await build().resume(JSON.parse(JSON.stringify(first.state)), { [first.pendingApprovals[0].toolCallId]: true });
    const results = toolMessages(done.messages);
    // The short 'approved' result is cheaper kept than cleared.
    expect(results.slice(0, -1).every((m) => m.content === CLEARED_PLACEHOLDER || m.name === 'ask')).toBe(true);
    // Only what was cleared after the resume was added: each read result is 100 tokens.
    const wasCleared = new Set(toolMessages(first.messages).filter((m) => m.content === CLEARED_PLACEHOLDER).map((m) => m.toolCallId));
    const newly = results.filter((m) => m.content === CLEARED_PLACEHOLDER && !wasCleared.has(m.toolCallId));
    expect(newly.length).toBeGreaterThan(0);
    expect(done.usage.contextTokensCleared! - clearedBefore).toBe(newly.length * (100 - estimateTokens(CLEARED_PLACEHOLDER)));
  });
});

describe('contextEditingMiddleware: where it sits and what the store holds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-context-editing-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A long run of big results, with and without clearing, on `store`. */
  async function longRun(store: ReturnType<typeof memoryStore>, clearing: boolean) {
    const model = mockModel(reads(30));
    const middleware = clearing ? [contextEditingMiddleware({ triggerTokens: 8_000, keep: 3 })] : [];
    const result = await createAgent({ model, tools: [read(4_000)], middleware, store, maxSteps: 50 }).run('Go');
    const stored = (await store.loadRun(result.runId))!;
    return { result, storedBytes: JSON.stringify(stored.messages).length, written: store.stats.bytes, sent: model.calls.reduce((sum, c) => sum + JSON.stringify(c.messages).length, 0) };
  }

  it('edits the kept transcript: the run store holds the cleared transcript, far smaller (memory and SQLite)', async () => {
    for (const [name, open] of [['memory', () => memoryStore()], ['sqlite', (tag: string) => sqliteStore({ path: join(dir, `${tag}.db`) })]] as const) {
      const plainStore = open('plain');
      const clearedStore = open('cleared');
      const plain = await longRun(plainStore, false);
      const cleared = await longRun(clearedStore, true);
      expect(cleared.result.text).toBe('Done.');
      // 40 results of 4 000 characters, all but 3 cleared: the stored run is under a fifth of the other.
      expect(cleared.storedBytes, name).toBeLessThan(plain.storedBytes / 5);
      expect(cleared.sent, name).toBeLessThan(plain.sent / 3);
      // Rewriting the tail after each clearing costs writes: bounded, at most half again as many bytes.
      expect(cleared.written, name).toBeLessThan(plain.written * 1.5);
      console.log(`${name}: stored ${plain.storedBytes} → ${cleared.storedBytes} bytes; written ${plain.written} → ${cleared.written}; sent to the model ${plain.sent} → ${cleared.sent}`);
      await plainStore.close();
      await clearedStore.close();
    }
  });

  it('outside compaction, clears first, so compaction has less to summarise (or nothing)', async () => {
    const summaries: string[] = [];
    const summariser = mockModel(Array.from({ length: 20 }, (_, i) => { summaries.push(`s${i}`); return `summary ${i}`; }));
    const model = mockModel(reads(8));
    const events: AgentEvent[] = [];
    await createAgent({ model, tools: [read()], middleware: [contextEditingMiddleware({ triggerTokens: 600, keep: 2 }), compactionMiddleware({ maxTokens: 800, keepRecent: 4, model: summariser })] }).run('Go', { onEvent: (e) => events.push(e) });
    expect(events.some((e) => e.type === 'context_editing.cleared')).toBe(true);
    expect(events.filter((e) => e.type === 'compaction.done')).toHaveLength(0);
    expect(summariser.calls).toHaveLength(0);
  });
});

describe('contextEditingMiddleware: options', () => {
  it.each([
    [{}, 'contextEditingMiddleware: triggerTokens must be a whole number ≥ 1 (got undefined)'],
    [{ triggerTokens: 1000, keepLast: 2 }, 'contextEditingMiddleware: keepLast is not a context-editing option; did you mean `keep`?'],
    [{ triggerTokens: 1000, exludeTools: ['a'] }, 'contextEditingMiddleware: exludeTools is not a context-editing option; did you mean `excludeTools`?'],
    [{ triggerTokens: 1000, keep: -1 }, 'contextEditingMiddleware: keep must be a whole number ≥ 0 (got -1)'],
    [{ triggerTokens: 1000, clearArgs: 'yes' }, 'contextEditingMiddleware: clearArgs must be true or false (got the string "yes")'],
  ])('refuses %o, saying what to fix', (options, message) => {
    expect(() => contextEditingMiddleware(options as never)).toThrow(new TypeError(message));
  });

  it('is a named middleware with a named function', () => {
    const m = contextEditingMiddleware({ triggerTokens: 1 });
    expect([m.name, m.model?.name]).toEqual(['context-editing', 'clearOldToolResults']);
  });
});
