// The layer trace is kept with the run: through a SQLite store file, and across suspend → resume
// (the calls of the next segment are added after those of the first).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, type Middleware } from '../../../src/index.js';
import { sqliteStore } from '../../../src/sqlite.js';
import { mockModel } from '../../../src/testing/index.js';
import { traceOf } from '../../../src/trace.js';
import { callsOf, deploy, layer } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const prod: Middleware = { name: 'prod-only', tool: (ctx, next) => { ctx.args = { env: 'prod' }; return next(); } };
const deployOnce = () => mockModel([{ toolCalls: [{ name: 'deploy', args: { env: 'staging' }, id: 'd1' }] }, 'Deployed.']);

describe('in a SQLite store', () => {
  it('keeps the trace with the run: another store on the same file reads it back whole', async () => {
    const path = join(dir, 'runs.db');
    const store = sqliteStore({ path });
    const result = await createAgent({ name: 'ops', model: deployOnce(), tools: [deploy], middleware: [prod], store, layerTrace: true }).run('Deploy');
    await store.close();
    const again = sqliteStore({ path });
    const loaded = await again.loadRun(result.runId);
    await again.close();
    expect(traceOf(loaded)).toEqual(traceOf(result.state));
    expect(layer(callsOf({ state: loaded }).find((c) => c.id === 'd1')!, 'prod-only').effects[0]).toMatchObject({ type: 'rewrote-args' });
  });

  it('continues the trace when a suspended run is resumed from the store: the approved call again, in segment 2', async () => {
    const path = join(dir, 'resume.db');
    const store = sqliteStore({ path });
    const agent = createAgent({ name: 'ops', model: deployOnce(), tools: [deploy], middleware: [prod], store, layerTrace: true });
    const first = await agent.run('Deploy');
    expect(first.status).toBe('suspended');
    const done = await agent.resume(first.runId, { d1: true });
    expect(done.status).toBe('completed');
    const stored = await store.loadRun(first.runId);
    await store.close();
    const calls = callsOf({ state: stored });
    expect(calls.map((c) => [c.id, c.segment, c.outcome])).toEqual([['model:1:1', 1, 'ok'], ['d1', 1, 'approval'], ['d1', 2, 'ok'], ['model:2:1', 2, 'ok']]);
  });
});

describe('in memory', () => {
  it('survives the state going through JSON between suspend and resume, and never changes the state handed out before', async () => {
    const agent = createAgent({ name: 'ops', model: deployOnce(), tools: [deploy], layerTrace: true });
    const first = await agent.run('Deploy');
    const json = JSON.stringify(first.state);
    const done = await agent.resume(JSON.parse(json), { d1: true });
    expect(callsOf(done)).toHaveLength(4);
    expect(JSON.stringify(first.state)).toBe(json);
  });
});

describe('a record stored before effects carried `type`', () => {
  it('is read with each effect\'s `kind` as its `type`, the stored record unchanged, and resuming the run goes on with it', async () => {
    const agent = createAgent({ name: 'ops', model: deployOnce(), tools: [deploy], middleware: [prod], layerTrace: true });
    const first = await agent.run('Deploy');
    // The first segment's record as a release before the rename wrote it: `kind` where `type` is now.
    const stored = JSON.parse(JSON.stringify(first.state).replaceAll('"type":"rewrote-args"', '"kind":"rewrote-args"').replaceAll('"type":"asked-approval"', '"kind":"asked-approval"'));
    const written = JSON.stringify(stored);
    expect(written).toContain('"kind":"rewrote-args"');
    expect(layer(callsOf({ state: stored }).find((c) => c.id === 'd1')!, 'prod-only').effects).toEqual([expect.objectContaining({ type: 'rewrote-args' })]);
    expect(JSON.stringify(stored)).toBe(written);
    const done = await agent.resume(stored, { d1: true });
    const effects = callsOf(done).filter((c) => c.id === 'd1').flatMap((c) => c.layers.flatMap((l) => l.effects));
    expect(effects.every((e) => typeof e.type === 'string' && !('kind' in e))).toBe(true);
    expect(layer(callsOf(done).find((c) => c.id === 'd1' && c.segment === 1)!, 'prod-only').effects).toEqual([expect.objectContaining({ type: 'rewrote-args' })]);
  });
});
