// What a store does not keep and a recovering worker gives again: the run context (never
// stored) and a run's own output schema. And the structured output's repair turns, stored.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, type ModelProvider, type ToolContext } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import { mortal } from '../support/durable.js';
import { manualClock } from '../support/clock.js';

interface App {
  userId: string;
}

const whoami = defineTool({ name: 'whoami', description: 'The user', execute: (_args, ctx: ToolContext<App>) => ctx.context.userId });

/** Asks for whoami, then answers with what it said; dies (never answers) on its second turn when told. */
function model(die?: () => void): ModelProvider {
  let turns = 0;
  return {
    name: 'asker',
    async generate(request) {
      turns++;
      if (die !== undefined && turns === 2) return (die(), new Promise(() => undefined));
      const said = request.messages.find((m) => m.role === 'tool');
      if (said === undefined) return { message: { role: 'assistant', content: '', toolCalls: [{ id: 'w1', name: 'whoami', args: {} }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' };
      return { message: { role: 'assistant', content: `{"user":${JSON.stringify(said.content)}}` }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
    },
  };
}

const contextSchema = z.object({ userId: z.string() });

/** A run of `options` started by a worker that died after its tool call: its store and clock. */
async function abandoned(options: { output?: z.ZodType } = {}): Promise<{ store: RunStore; advance(ms: number): Promise<void> }> {
  const clock = manualClock();
  const store = memoryStore({ leaseMs: 1000, clock });
  const a = mortal(store);
  const agent = createAgent<App>({ name: 'me', model: model(() => a.die()), tools: [whoami], contextSchema, store: a.store });
  void agent.run('Who am I?', { context: { userId: 'alice' }, ...(options.output ? { output: options.output } : {}) });
  await a.died;
  await clock.advance(1001);
  return { store, advance: clock.advance };
}

describe('the run context of recovered runs', () => {
  it('is given again by recover({ context }), checked against the contextSchema before anything is claimed', async () => {
    const { store } = await abandoned();
    const b = createAgent<App>({ name: 'me', model: model(), tools: [whoami], contextSchema, store });
    await expect(b.runs.recover({ context: { userId: 5 } as never })).rejects.toThrow(/agent\.runs\.recover\(options\): context does not fit the agent's contextSchema/);
    expect((await store.listRuns())[0].status).toBe('running');
    const [recovered] = await b.runs.recover({ context: { userId: 'alice' } });
    expect(recovered.result).toMatchObject({ status: 'completed', text: '{"user":"alice"}' });
  });

  it('is made per run by contextFor(state), from what the store kept', async () => {
    const { store } = await abandoned();
    const seen: string[] = [];
    const b = createAgent<App>({ name: 'me', model: model(), tools: [whoami], contextSchema, store });
    const [recovered] = await b.runs.recover({ contextFor: (state) => (seen.push(state.runId), { userId: `owner of ${state.sessionId}` }) });
    expect(seen).toEqual([recovered.runId]);
    // The tool had run before the crash: its stored result stands; a new call would see the new context.
    expect(recovered.result!.text).toBe('{"user":"alice"}');
    await expect(b.runs.recover({ context: { userId: 'x' }, contextFor: () => ({ userId: 'y' }) })).rejects.toThrow('agent.runs.recover(options): give context or contextFor, not both');
    await expect(b.runs.recover({ contextFr: () => ({}) } as never)).rejects.toThrow('agent.runs.recover(options): contextFr is not an option; did you mean `contextFor`?');
  });
});

describe('the output schema of recovered runs', () => {
  const Answer = z.object({ user: z.string() });

  it("is the run's own, given again to recover; without it the run is stored failed, to be resumed with it", async () => {
    const { store } = await abandoned({ output: Answer });
    const b = createAgent<App>({ name: 'me', model: model(), tools: [whoami], contextSchema, store });
    const [refused] = await b.runs.recover({ context: { userId: 'alice' } });
    expect(refused.error!.code).toBe('invalid_resume');
    expect(refused.error!.message).toMatch(/it was started with an output schema of its own; give it again: agent\.resume\('run_[\w-]+', \{\}, \{ output \}\), or agent\.runs\.recover\(\{ output \}\)/);
    expect((await store.loadRun(refused.runId))!.status).toBe('failed');
    await expect(b.resume(refused.runId, {}, { context: { userId: 'alice' } })).rejects.toThrow(/was started with an output schema; pass it again/);
    const retried = await b.resume(refused.runId, {}, { context: { userId: 'alice' }, output: Answer });
    expect(retried.output).toEqual({ user: 'alice' });
    expect((await store.loadRun(refused.runId))!.output).toEqual({ user: 'alice' });
  });

  it('recovers with it given', async () => {
    const { store } = await abandoned({ output: Answer });
    const b = createAgent<App>({ name: 'me', model: model(), tools: [whoami], contextSchema, store });
    const [recovered] = await b.runs.recover({ context: { userId: 'alice' }, output: Answer });
    expect(recovered.result!.output).toEqual({ user: 'alice' });
  });

  it('stores the repair turns of an answer that did not fit, and the answer that did', async () => {
    const store = memoryStore();
    const agent = createAgent({ name: 'me', model: mockModel(['not json', '{"user":"bob"}']), output: Answer, store });
    const result = await agent.run('Who?');
    expect(result.output).toEqual({ user: 'bob' });
    const stored = (await store.loadRun(result.runId))!;
    expect(stored).toEqual(result.state);
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });
});
