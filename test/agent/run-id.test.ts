// A run's id given by the caller (`run(input, { runId })`): a job queue hands the id out before
// the run starts, so the store must take that id, and refuse a second start under it.
import { describe, expect, it } from 'vitest';
import { createAgent, KoagentError, memoryStore } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';

describe('agent.run(input, { runId })', () => {
  it('starts the run under that id, in the store too', async () => {
    const store = memoryStore();
    const agent = createAgent({ name: 'teller', model: mockModel(['Hello.']), store });
    const started: string[] = [];
    const result = await agent.run('Hi', { runId: 'run_given-1', onEvent: (e) => void (e.type === 'run.start' && started.push(e.runId)) });
    expect(result).toMatchObject({ runId: 'run_given-1', status: 'completed', text: 'Hello.' });
    expect(started).toEqual(['run_given-1']);
    expect(await store.loadRun('run_given-1')).toEqual(result.state);
  });

  it('starts a session run under that id with send()', async () => {
    const store = memoryStore();
    const agent = createAgent({ name: 'teller', model: mockModel(['One.', 'Two.']), store });
    await agent.send('First', { sessionId: 'session-1' });
    const second = await agent.send('Second', { sessionId: 'session-1', runId: 'run_given-2' });
    expect(second).toMatchObject({ runId: 'run_given-2', sessionId: 'session-1', text: 'Two.' });
    expect((await store.loadRun('run_given-2'))!.messages.map((m) => m.content)).toEqual(['First', 'One.', 'Second', 'Two.']);
  });

  it('refuses a second run under an id the store has, with invalid_resume, and writes nothing', async () => {
    const store = memoryStore();
    const model = mockModel(['First.', 'Second.']);
    const agent = createAgent({ name: 'teller', model, store });
    const first = await agent.run('Hi', { runId: 'run_twice' });
    const events: string[] = [];
    const error = await agent.run('Hi again', { runId: 'run_twice', onEvent: (e) => void events.push(e.type) }).then(() => undefined, (e: unknown) => e);
    expect(KoagentError.is(error) && error.code).toBe('invalid_resume');
    expect((error as Error).message).toMatch(/run run_twice is already in the store/);
    expect(model.calls).toHaveLength(1);
    expect(events).toEqual([]);
    expect(await store.loadRun('run_twice')).toEqual(first.state);
    expect(await store.listRuns({ agentName: 'teller' })).toHaveLength(1);
  });

  it('is refused by resume(), whose run is its first argument', async () => {
    const store = memoryStore();
    const agent = createAgent({ name: 'teller', model: mockModel(['Hello.']), store });
    const first = await agent.run('Hi');
    await expect(agent.resume(first.runId, {}, { runId: 'run_other' } as never)).rejects.toThrow(TypeError);
    await expect(agent.resume(first.runId, {}, { runId: 'run_other' } as never)).rejects.toThrow('agent.resume(state, decisions, options): runId names the run a run() or send() starts; the run to resume is the first argument');
  });

  it('must be a non-empty string', async () => {
    const agent = createAgent({ name: 'teller', model: mockModel(['Hello.']) });
    await expect(agent.run('Hi', { runId: '' })).rejects.toThrow(/runId must be a non-empty string of at most 200 characters/);
  });
});
