// The studio's API for forks, replays and evaluations, without a browser: a fork and a replay are
// changes, under the token, Origin and JSON checks of every change; a fork's refusals name what
// to do; a run's lineage lists its forks; the evaluations a store keeps are listed, two stored at
// once included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Middleware } from '../../src/index.js';
import { evaluate, exact } from '../../src/evals.js';
import { startStudio, type Studio } from '../../src/studio/server.js';
import { effects, notingAgent } from '../replay/support.js';
import { supportAgent, tempStore } from './fixtures.js';

const temp = tempStore();
const dir = mkdtempSync(join(tmpdir(), 'koagent-studio-lab-'));
const file = join(dir, 'notes.txt');
let studio: Studio;
let stored: string;
let untraced: string;
let otherAgents: string;

const api = (path: string, init: RequestInit = {}, headers: Record<string, string> = { 'x-koagent-token': studio.token, 'content-type': 'application/json' }) =>
  fetch(new URL(`/api/${path}`, studio.url), { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
const post = (path: string, body: unknown, headers?: Record<string, string>) => api(path, { method: 'POST', body: JSON.stringify(body) }, headers);

beforeAll(async () => {
  const { agent } = notingAgent(file, { store: temp.store });
  stored = (await agent.run('Note four things')).state.runId;
  untraced = (await notingAgent(file, { store: temp.store, layerTrace: false }).agent.run('Note four things')).state.runId;
  otherAgents = (await supportAgent(temp.store).run('How do refunds work?')).state.runId;
  studio = await startStudio({ store: temp.store, agents: [agent], pollMs: 50 });
});
afterAll(async () => {
  await studio.close();
  await temp.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('a fork from the studio', () => {
  it('is refused, and nothing runs, without the token, from another site\'s page, or without a JSON body', async () => {
    const before = effects(file).length;
    expect((await post(`runs/${stored}/fork`, { atStep: 1 }, { 'content-type': 'application/json' })).status).toBe(401);
    expect((await post(`runs/${stored}/fork`, { atStep: 1 }, { 'x-koagent-token': studio.token, 'content-type': 'application/json', origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(`runs/${stored}/fork`, { atStep: 1 }, { 'x-koagent-token': studio.token, 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(`runs/${stored}/replay`, {}, { 'content-type': 'application/json' })).status).toBe(401);
    expect(effects(file)).toHaveLength(before);
  });

  it('makes a new run from the step, in the store, that says where it came from; the run\'s lineage lists it', async () => {
    const answer = await post(`runs/${stored}/fork`, { atStep: 2 });
    expect(answer.status).toBe(200);
    const made = (await answer.json()) as { runId: string; status: string; forkedFrom: unknown };
    expect(made).toMatchObject({ status: 'completed', forkedFrom: { runId: stored, step: 2 } });
    expect((await temp.store.loadRun(made.runId))?.forkedFrom).toEqual({ runId: stored, step: 2 });
    const lineage = (await (await api(`runs/${stored}/lineage`)).json()) as { forks: { runId: string; step: number }[]; steps: number[]; recorded: boolean; agent: boolean };
    expect(lineage).toMatchObject({ recorded: true, agent: true, steps: [0, 1, 2, 3] });
    expect(lineage.forks).toContainEqual(expect.objectContaining({ runId: made.runId, step: 2 }));
    expect(await (await api(`runs/${made.runId}/lineage`)).json()).toMatchObject({ forkedFrom: { runId: stored, step: 2 } });
  });

  it('answers 400 for a step that is not a whole number, naming the body it takes', async () => {
    const answer = await post(`runs/${stored}/fork`, { atStep: 'two' });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: string }).error).toContain('{ "atStep": n }');
  });

  it('answers 409 for a step the run cannot be forked after, a run recorded without its layer trace, and a run whose agent the studio was not given, saying what to do', async () => {
    const late = await post(`runs/${stored}/fork`, { atStep: 9 });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: string }).error).toContain('9');
    const unrecorded = await post(`runs/${untraced}/fork`, { atStep: 1 });
    expect(unrecorded.status).toBe(409);
    expect(((await unrecorded.json()) as { error: string }).error).toContain('layer trace');
    expect(await (await api(`runs/${untraced}/lineage`)).json()).toMatchObject({ recorded: false, steps: [] });
    const noAgent = await post(`runs/${otherAgents}/fork`, { atStep: 0 });
    expect(noAgent.status).toBe(409);
    expect(((await noAgent.json()) as { error: string }).error).toContain('startStudio({ agents })');
  });

  it('answers 404 for a run the store does not hold', async () => {
    expect((await post('runs/run_nope/fork', { atStep: 1 })).status).toBe(404);
    expect((await post('runs/run_nope/replay', {})).status).toBe(404);
  });
});

describe('a replay from the studio', () => {
  it('gives each call then and now with its layers, the same when nothing changed, and calls no tool', async () => {
    const before = effects(file).length;
    const answer = await post(`runs/${stored}/replay`, {});
    expect(answer.status).toBe(200);
    const view = (await answer.json()) as { same: boolean; calls: { id: string; same: boolean; then: string; now: string; layers: { name: string; then: string; now: string }[] }[] };
    expect(view.same).toBe(true);
    expect(view.calls.map((call) => call.id)).toEqual(['model:1:1', 'c1', 'model:2:1', 'c2', 'c3', 'model:3:1', 'c4', 'model:4:1']);
    expect(view.calls.find((call) => call.id === 'c1')).toMatchObject({ same: true, then: 'ok', now: 'ok' });
    expect(view.calls[0]!.layers).toEqual([{ name: 'turn-counter', source: 'middleware', depth: 0, same: true, then: 'passed it on', now: 'passed it on' }]);
    expect(effects(file)).toHaveLength(before);
  });
});

describe('the evaluations', () => {
  it('lists every report the store keeps, the latest first, two stored at once included, each with its examples\' runs', async () => {
    const { agent } = notingAgent(join(dir, 'eval.txt'));
    const options = { agent, dataset: [{ id: 'four', input: 'Note four things', expected: 'Noted four things.' }], scorers: { answer: exact() }, store: temp.store };
    const [first, second] = await Promise.all([evaluate({ ...options, name: 'first' }), evaluate({ ...options, name: 'second' })]);
    const third = await evaluate({ ...options, name: 'third' });
    const listed = (await (await api('evaluations')).json()) as { id: string; name: string; examples: { runId: string }[] }[];
    expect(listed[0]!.id).toBe(third.id);
    expect(listed.map((r) => r.id).sort()).toEqual([first.id, second.id, third.id].sort());
    expect(listed[0]!.examples[0]!.runId).toBe(third.examples[0]!.runId);
    expect(await temp.store.loadRun(third.examples[0]!.runId!)).toBeDefined();
  });
});

describe('closing the studio', () => {
  it('waits for a fork it started: the fork\'s run is finished in the store when close resolves, though its request was cut', async () => {
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const gate: Middleware = { name: 'gate', tool: async (ctx, next) => {
      if (ctx.toolCallId === 'c2') {
        entered();
        await released;
      }
      return next();
    } };
    const { agent } = notingAgent(join(dir, 'gated.txt'), { store: temp.store, middleware: [gate] });
    const own = await startStudio({ store: temp.store, agents: [agent] });
    const cut = fetch(new URL(`/api/runs/${stored}/fork`, own.url), { method: 'POST', body: JSON.stringify({ atStep: 1 }), headers: { 'x-koagent-token': own.token, 'content-type': 'application/json' } }).then(() => 'answered', () => 'cut');
    await inside;
    const closing = own.close();
    expect(await cut).toBe('cut');
    release();
    await closing;
    const forks = await Promise.all((await temp.store.listRuns({ agentName: 'noter', limit: 500 })).map((summary) => temp.store.loadRun(summary.runId)));
    const gated = forks.filter((state) => state?.forkedFrom?.runId === stored && state.forkedFrom.step === 1);
    expect(gated.map((state) => state!.status)).toEqual(['completed']);
  });
});
