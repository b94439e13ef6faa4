// fork (koagent/replay): a new run from a stored run's state after one of its steps, optionally
// edited, continued live — on a SQLite file, with every tool effect noted in a file, so a test
// sees that nothing before the fork point runs again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type RunState } from '../../src/index.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { traceOf } from '../../src/trace.js';
import { fork } from '../../src/replay.js';
import { effects, notingAgent, noteTool, SCRIPT } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-fork-'));
const file = join(dir, 'effects.txt');
const store = sqliteStore({ path: join(dir, 'runs.db') });
let stored: RunState;

beforeAll(async () => {
  const { agent } = notingAgent(file, { store });
  stored = (await agent.run('Note four things')).state;
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Where each step's end leaves the transcript (instructions, input, then each step's reply and results). */
const LENGTH_AFTER = [2, 4, 7, 9];
/** What each fork point leaves to run: the notes of the steps after it. */
const STILL_TO_RUN = [['one', 'two', 'three', 'four'], ['two', 'three', 'four'], ['four'], []];

describe('fork at every step of a multi-tool run', () => {
  it.each([0, 1, 2, 3])('after step %i: no effect before the fork point runs again, the fork completes, the stored run is unchanged', async (atStep) => {
    const before = (await store.loadRun(stored.runId))!;
    const noted = effects(file).length;
    const { agent } = notingAgent(file, { store });
    const forked = await fork(agent, stored.runId, { atStep });
    expect(effects(file).slice(noted)).toEqual(STILL_TO_RUN[atStep]);
    expect(forked.status).toBe('completed');
    expect(forked.text).toBe('Noted four things.');
    expect(forked.runId).not.toBe(stored.runId);
    expect(forked.messages.slice(0, LENGTH_AFTER[atStep])).toEqual(before.messages.slice(0, LENGTH_AFTER[atStep]));
    expect(forked.state.forkedFrom).toEqual({ runId: stored.runId, step: atStep });
    // The calls before the fork point are in its ledger, done, and not run again.
    expect(forked.state.ledger.map((c) => c.entry)).toEqual(['done', 'done', 'done', 'done']);
    expect(await store.loadRun(stored.runId)).toEqual(before);
    const kept = (await store.loadRun(forked.runId))!;
    expect(kept.forkedFrom).toEqual({ runId: stored.runId, step: atStep });
    expect(kept.status).toBe('completed');
  });

  it('takes the hook state and the usage as they were after the step, and goes on from them', async () => {
    const { agent } = notingAgent(file, { store });
    const forked = await fork(agent, stored.runId, { atStep: 1 });
    // One turn before the fork point, three after it: not the stored run's four, plus three.
    expect(forked.state.hookState.turns).toBe(4);
    expect(stored.hookState.turns).toBe(4);
    expect(forked.state.usage.modelCalls).toBe(4);
    expect(forked.state.usage.toolCalls).toBe(4);
    expect(forked.state.steps).toBe(4);
    // The layer trace holds the stored run's calls up to the fork point, then the fork's own.
    expect(traceOf(forked.state)!.calls.map((c) => c.id)).toEqual(['model:1:1', 'c1', 'model:2:1', 'c2', 'c3', 'model:3:1', 'c4', 'model:4:1']);
  });

  it('a fork of a fork: after a step of the fork, nothing before it runs again either', async () => {
    const { agent } = notingAgent(file, { store });
    const first = await fork(agent, stored.runId, { atStep: 1 });
    const noted = effects(file).length;
    const second = await fork(agent, first.runId, { atStep: 2 });
    expect(effects(file).slice(noted)).toEqual(['four']);
    expect(second.state.forkedFrom).toEqual({ runId: first.runId, step: 2 });
    expect(second.state.hookState.turns).toBe(4);
  });
});

describe('an edited fork', () => {
  it('sees a tool result it changed: the model reads the edit, and the stored run keeps the original', async () => {
    const { agent, model } = notingAgent(file, { store });
    const forked = await fork(agent, stored.runId, { atStep: 1, edit: { toolResults: { c1: 'The note was lost.' } } });
    const result = forked.messages.find((m) => m.role === 'tool' && m.toolCallId === 'c1');
    expect(result).toMatchObject({ content: 'The note was lost.', metadata: { editedInFork: true } });
    expect(model.calls[0].messages.find((m) => m.role === 'tool' && m.toolCallId === 'c1')?.content).toBe('The note was lost.');
    expect((await store.loadRun(stored.runId))!.messages.find((m) => m.role === 'tool' && m.toolCallId === 'c1')?.content).toBe('{"noted":"one"}');
  });

  it('sees a message it replaced', async () => {
    const { agent, model } = notingAgent(file, { store });
    await fork(agent, stored.runId, { atStep: 0, edit: { messages: { 1: { role: 'user', content: 'Note nothing at all' } } } });
    expect(model.calls[0].messages[1]).toEqual({ role: 'user', content: 'Note nothing at all' });
  });

  it('refuses an edit of a result the fork point does not have, naming those it has', async () => {
    const { agent } = notingAgent(file, { store });
    await expect(fork(agent, stored.runId, { atStep: 1, edit: { toolResults: { c4: 'x' } } })).rejects.toThrow(/no result of call "c4" at the fork point \(it has c1\)/);
    await expect(fork(agent, stored.runId, { atStep: 1, edit: { messages: { 9: { role: 'user', content: 'x' } } } })).rejects.toThrow(/edit.messages\[9\]: the transcript at the fork point has messages 0 to 3/);
  });
});

describe('what fork refuses', () => {
  it('a step whose end was not recorded, naming the steps it can fork after', async () => {
    const { agent } = notingAgent(file, { store });
    await expect(fork(agent, stored.runId, { atStep: 4 })).rejects.toThrow(/has no recorded end of step 4 to fork at \(it can be forked after step 0, 1, 2, 3\)/);
  });

  it('a run recorded without its layer trace', async () => {
    const { agent } = notingAgent(file, { store, layerTrace: false });
    const plain = await agent.run('Note four things');
    await expect(fork(agent, plain.runId, { atStep: 1 })).rejects.toThrow(/was not recorded: a run is forked from its record, kept with its layer trace/);
  });

  it('a run of another version of the agent (other tools), as resume does; { adopt: true } takes it over on purpose', async () => {
    const other = createAgent({ name: 'noter', model: mockModel(SCRIPT, { resumable: true }), tools: [noteTool(file), { ...noteTool(file), name: 'note2' }], store, layerTrace: true });
    await expect(fork(other, stored.runId, { atStep: 2 })).rejects.toMatchObject({ code: 'invalid_resume', message: expect.stringMatching(/belongs to another agent named "noter" \(other tools\); fork it with the agent that ran it, or take it over on purpose with \{ adopt: true \}/) });
    const adopted = await fork(other, stored.runId, { atStep: 2, adopt: true });
    expect(adopted.status).toBe('completed');
    expect(adopted.state.toolsFingerprint).not.toBe(stored.toolsFingerprint);
  });

  it('a misspelt option, naming the one meant, and a call without atStep', async () => {
    const { agent } = notingAgent(file, { store });
    await expect(fork(agent, stored.runId, { atStep: 1, edits: {} } as never)).rejects.toThrow(/edits is not an option of fork; did you mean `edit`\?/);
    await expect(fork(agent, stored.runId, {} as never)).rejects.toThrow(/give the step to fork after: \{ atStep: n \}/);
    await expect(fork(agent, 'run_missing', { atStep: 1 })).rejects.toThrow(/there is no run run_missing in the store \(sqlite\)/);
  });
});

describe('a fork without a store', () => {
  it('forks a run state in memory', async () => {
    const memoryFile = join(dir, 'memory.txt');
    const { agent } = notingAgent(memoryFile);
    const run = await agent.run('Note four things');
    const forked = await fork(agent, run.state, { atStep: 2 });
    expect(effects(memoryFile)).toEqual(['one', 'two', 'three', 'four', 'four']);
    expect(forked.state.forkedFrom).toEqual({ runId: run.runId, step: 2 });
  });
});
