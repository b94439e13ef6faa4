// Runs become tests (koagent/replay): a stored run exported as a fixture plays back offline —
// on mockModel and on the loopback OpenAI-compatible server — to the same final transcript, its
// tools' results given back, and a test asserts on its layer trace.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool, openai, type RunState } from '../../src/index.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel, openaiCompatibleServer } from '../../src/testing/index.js';
import { traceOf } from '../../src/trace.js';
import { compareTraces, fixtureOf, fixtureTools, playFixture, type RunFixture } from '../../src/replay.js';
import { effects, notingAgent, noteTool, turnCounter } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-fixture-'));
const file = join(dir, 'effects.txt');
let stored: RunState;
let fixture: RunFixture;

beforeAll(async () => {
  const store = sqliteStore({ path: join(dir, 'runs.db') });
  const run = await notingAgent(file, { store }).agent.run('Note four things');
  stored = (await store.loadRun(run.runId))!;
  await store.close();
  // As `koagent runs export --fixture` writes it, and a test reads it back.
  writeFileSync(join(dir, 'run.json'), JSON.stringify(fixtureOf(stored), null, 2));
  fixture = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunFixture;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fixtureOf', () => {
  it('holds the input without the instructions, the replies as a mockModel script, the tools\' results, the end', () => {
    expect(fixture.instructions).toBe('Note what you are asked to.');
    expect(fixture.input).toEqual([{ role: 'user', content: 'Note four things' }]);
    expect(fixture.replies).toHaveLength(4);
    expect(fixture.replies[1]).toMatchObject({ text: '', toolCalls: [{ id: 'c2', name: 'note', args: { text: 'two' } }, { id: 'c3', name: 'note', args: { text: 'three' } }] });
    expect(fixture.tools.map((t) => [t.id, t.result])).toEqual([['c1', { noted: 'one' }], ['c2', { noted: 'two' }], ['c3', { noted: 'three' }], ['c4', { noted: 'four' }]]);
    expect(fixture.messages).toEqual(stored.messages);
    expect(fixture.status).toBe('completed');
  });

  it('refuses a run recorded without its layer trace', async () => {
    const run = await notingAgent(file, { layerTrace: false }).agent.run('Note four things');
    expect(() => fixtureOf(run.state)).toThrow(/fixtureOf\(state\): run .* was not recorded/);
  });
});

describe('an exported fixture replays the run offline', () => {
  it('on mockModel, to the same final transcript, no tool run, the same layer trace', async () => {
    const quiet = join(dir, 'quiet.txt');
    const model = mockModel(fixture.replies);
    const agent = createAgent({ name: 'noter', instructions: fixture.instructions, model, tools: fixtureTools(fixture, [noteTool(quiet)]), middleware: [turnCounter], layerTrace: true });
    const result = await playFixture(agent, fixture);
    expect(result.messages).toEqual(fixture.messages);
    expect(model.remaining).toBe(0);
    expect(effects(quiet)).toEqual([]);
    expect(compareTraces(fixture.trace!, traceOf(result.state)!).same).toBe(true);
  });

  it('on the loopback OpenAI-compatible server, to the same final transcript', async () => {
    const server = await openaiCompatibleServer({ responses: fixture.responses });
    try {
      const agent = createAgent({ name: 'noter', instructions: fixture.instructions, model: openai({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' }), tools: fixtureTools(fixture, [noteTool(join(dir, 'server.txt'))]), middleware: [turnCounter] });
      const result = await playFixture(agent, fixture);
      expect(result.messages).toEqual(fixture.messages);
      expect(server.requests).toHaveLength(4);
    } finally {
      await server.close();
    }
  });

  it('a test that catches a regression: a changed layer no longer gives the stored trace', async () => {
    const agent = createAgent({ name: 'noter', instructions: fixture.instructions, model: mockModel(fixture.replies), tools: fixtureTools(fixture, [noteTool(join(dir, 'x.txt'))]), layerTrace: true });
    const result = await playFixture(agent, fixture);
    const comparison = compareTraces(fixture.trace!, traceOf(result.state)!);
    expect(comparison.same).toBe(false);
    expect(comparison.calls[0].layers.map((l) => [l.name, l.then !== undefined, l.now !== undefined, l.same])).toEqual([['turn-counter', true, false, false]]);
  });

  it('resumes with the human decisions the stored run was given', async () => {
    const pay = defineTool({ name: 'pay', description: 'Pays', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => `paid ${amount}` });
    const live = createAgent({ name: 'payer', model: mockModel([{ toolCalls: [{ id: 'p1', name: 'pay', args: { amount: 50 } }] }, 'Paid.'], { resumable: true }), tools: [pay], layerTrace: true });
    const first = await live.run('Pay 50');
    const done = await live.resume(first.state, { p1: { approved: false, reason: 'Too much' } });
    const payFixture = fixtureOf(done.state);
    const agent = createAgent({ name: 'payer', model: mockModel(payFixture.replies), tools: fixtureTools(payFixture, [pay]) });
    const result = await playFixture(agent, payFixture);
    expect(result.messages).toEqual(done.messages);
    expect(result.state.decisionLog?.map((d) => [d.decision, d.reason])).toEqual([['denied', 'Too much']]);
  });

  it('a tool call the fixture does not have fails, naming it', async () => {
    const tools = fixtureTools(fixture, [noteTool(join(dir, 'y.txt'))]);
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c9', name: 'note', args: { text: 'nine' } }] }, 'ok']), tools });
    const result = await agent.run('Note');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toMatch(/fixtureTools: run .* did not run note for call c9/);
  });
});
