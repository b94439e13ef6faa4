// What every run store must do with runs, leases and checkpoints: run against the memory,
// SQLite and PostgreSQL stores alike (each store's test file calls it with its own factory).
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, KoagentError, type RunState } from '../../src/index.js';
import type { Checkpoint, ClaimedRun, Clock, RunStore } from '../../src/store.js';
import { checkState } from '../../src/core/state/state-schema.js';
import { mockModel } from '../../src/testing/index.js';
import { storedState } from '../support/durable.js';
import { manualClock } from '../support/clock.js';

export interface StoreFactory {
  /** A new, empty store; with `clock`, a clock the test moves (to expire leases, age runs). */
  (options?: { leaseMs?: number; clock?: Clock }): Promise<RunStore>;
}

const add = defineTool({ name: 'add', description: 'Add', execute: () => 3 });
const twoTurns = () => mockModel([
  { toolCalls: [{ id: 'c1', name: 'add', args: {} }] },
  { toolCalls: [{ id: 'c2', name: 'add', args: {} }, { id: 'c3', name: 'add', args: {} }] },
  'done',
]);

/** A fresh state of agent `teller`, as `createRun` gets it. */
function newRun(runId: string, sessionId = `s_${runId}`): RunState {
  return storedState(runId, sessionId, 'teller', [{ role: 'system', content: 'Be careful.' }, { role: 'user', content: 'Pay Alice' }]);
}

/** A checkpoint with only the small fields, as a step that changed nothing else writes. */
function small(status: RunState['status'] = 'running', segment = 1): Checkpoint {
  return { status, segment, steps: 1, usage: JSON.stringify({ inputTokens: 1, outputTokens: 1, totalTokens: 2, modelCalls: 1, toolCalls: 0 }), stopReason: undefined, error: null };
}

async function leaseLost(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(KoagentError.is(error) && error.code).toBe('lease_lost');
  return (error as Error).message;
}

export function runConformance(kind: string, make: StoreFactory): void {
  describe(`${kind} store: runs and checkpoints`, () => {
    it('gives back, for a run the agent finished, the state the run ended with', async () => {
      const store = await make();
      const result = await createAgent({ name: 'teller', model: twoTurns(), tools: [add], store }).run('go');
      expect(await store.loadRun(result.runId)).toEqual(result.state);
      expect(await store.loadRun('run_nobody')).toBeUndefined();
      await store.close();
    });

    it('stores a suspended run with its pending approvals, decisions, held results, hook state and child runs', async () => {
      const store = await make();
      const pay = defineTool({ name: 'pay', description: 'Pay', needsApproval: true, execute: () => 'paid' });
      const model = mockModel([{ toolCalls: [{ id: 'a', name: 'add', args: {} }, { id: 'p', name: 'pay', args: {} }] }, 'ok']);
      const counter = { name: 'counter', tool: (ctx: { setHookState(n: string, v: unknown): void }, next: () => Promise<unknown>) => (ctx.setHookState('counter', { calls: 1, note: 'ünïcode ✓' }), next()) };
      const result = await createAgent({ name: 'teller', model, tools: [add, pay], store, middleware: [counter as never] }).run('go');
      expect(result.status).toBe('suspended');
      const loaded = await store.loadRun(result.runId);
      expect(loaded).toEqual(result.state);
      expect(loaded!.settled).toMatchObject([{ role: 'tool', toolCallId: 'a', content: '3' }]);
      expect(loaded!.hookState.counter).toEqual({ calls: 1, note: 'ünïcode ✓' });
      await store.close();
    });

    it('keeps the decision log across resumes: each decision added by the resume that claims the run, none lost', async () => {
      const store = await make();
      const pay = defineTool({ name: 'pay', description: 'Pay', needsApproval: true, execute: () => 'paid' });
      const model = mockModel([
        { toolCalls: [{ id: 'p1', name: 'pay', args: { amount: 42.5 } }] },
        { toolCalls: [{ id: 'p2', name: 'pay', args: { amount: 7 } }] },
        'ok',
      ], { resumable: true });
      const agent = createAgent({ name: 'teller', model, tools: [pay], store });
      const { runId } = await agent.run('go');
      await agent.resume(runId, { p1: { approved: true, args: { amount: 40 }, actor: { id: 'u_17', name: 'Grace' }, surface: 'cli' } });
      expect((await store.loadRun(runId))!.decisionLog).toHaveLength(1);
      const done = await agent.resume(runId, { p2: { approved: false, reason: 'No', actor: 'alan' } });
      const loaded = await store.loadRun(runId);
      expect(loaded).toEqual(done.state);
      expect(loaded!.decisionLog!.map((d) => [d.toolCallId, d.decision, d.args, d.editedArgs, d.actor, d.surface, d.segment])).toEqual([
        ['p1', 'approved', { amount: 42.5 }, { amount: 40 }, { id: 'u_17', name: 'Grace' }, 'cli', 2],
        ['p2', 'denied', { amount: 7 }, undefined, { id: 'alan' }, 'api', 3],
      ]);
      await store.close();
    });

    it('gives the ledger back in the order the calls were made, whatever order it keeps its rows in', async () => {
      const store = await make();
      const model = mockModel([{ toolCalls: [{ id: 'zz', name: 'add', args: {} }, { id: 'aa', name: 'add', args: {} }] }, { toolCalls: [{ id: 'mm', name: 'add', args: {} }] }, 'done']);
      const result = await createAgent({ name: 'teller', model, tools: [add], store }).run('go');
      const loaded = (await store.loadRun(result.runId))!;
      expect(loaded.ledger.map((call) => call.id)).toEqual(['zz', 'aa', 'mm']);
      expect(loaded).toEqual(result.state);
      await store.close();
    });

    it('keeps a state whole: the agent identity, and content parts in messages and tool results', async () => {
      const store = await make();
      const shot = defineTool({
        name: 'shot', description: 'Screenshot', execute: () => ({ url: 'https://example.com/s.png', png: 'iVBORw0KGgo=' }),
        toModelOutput: (r: { url: string; png: string }) => [{ type: 'text', text: r.url }, { type: 'image', image: r.png, mediaType: 'image/png' }],
      });
      const model = mockModel([{ reasoning: { text: 'Look first.', providerOptions: { anthropic: { signature: 'sig-1' } } }, toolCalls: [{ id: 's1', name: 'shot', args: {} }] }, 'Seen.']);
      const agent = createAgent({ name: 'teller', id: 'teller-v2', model, tools: [shot], store });
      const result = await agent.run({ role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image', image: 'aGVsbG8=', mediaType: 'image/png' }] });
      const loaded = (await store.loadRun(result.runId))!;
      expect(loaded).toEqual(result.state);
      expect(checkState(loaded)).toBe(loaded);
      expect(loaded).toMatchObject({ version: 3, agentName: 'teller', agentId: 'teller-v2', toolsFingerprint: result.state.toolsFingerprint });
      expect(loaded.messages.map((m) => m.content)).toEqual([
        [{ type: 'text', text: 'Look:' }, { type: 'image', image: 'aGVsbG8=', mediaType: 'image/png' }],
        [{ type: 'reasoning', text: 'Look first.', providerOptions: { anthropic: { signature: 'sig-1' } } }],
        [{ type: 'text', text: 'https://example.com/s.png' }, { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' }],
        'Seen.',
      ]);
      await store.close();
    });

    it("writes as many bytes per step at step 300 as at step 30: flat in the run's length", async () => {
      const store = await make();
      // One model reply with one tool call per step, as the bench's runs.
      const steps = (n: number) => mockModel([...Array.from({ length: n }, (_, i) => ({ toolCalls: [{ id: `c${i}`, name: 'add', args: {} }] })), 'done']);
      const perStep = async (n: number) => {
        const before = store.stats.bytes;
        const result = await createAgent({ name: 'teller', model: steps(n), tools: [add], maxSteps: n + 1, store }).run('go');
        expect(result.usage.toolCalls).toBe(n);
        return (store.stats.bytes - before) / n;
      };
      const short = await perStep(30);
      const long = await perStep(300);
      // What a step adds is a few hundred bytes; a store writing the transcript again would grow with it.
      expect(short).toBeLessThan(1000);
      expect(long / short).toBeLessThanOrEqual(1.2);
      await store.close();
    }, 30_000);

    it('writes each checkpoint as a difference: what a step adds, not the transcript again', async () => {
      const store = await make();
      const created = await store.createRun({ state: newRun('run_diff'), owner: 'w1' });
      const lease = 'lease' in created ? created.lease : expect.fail('not created');
      const long = 'x'.repeat(2000);
      await store.checkpoint(lease, { ...small(), messages: { from: 2, items: [JSON.stringify({ role: 'assistant', content: long })] } }, false);
      const before = store.stats;
      await store.checkpoint(lease, { ...small(), messages: { from: 3, items: [JSON.stringify({ role: 'user', content: 'short' })] } }, false);
      const step = store.stats.bytes - before.bytes;
      expect(store.stats.writes - before.writes).toBe(1);
      expect(step).toBeLessThan(1000);
      expect((await store.loadRun('run_diff'))!.messages.map((m) => m.content)).toEqual(['Be careful.', 'Pay Alice', long, 'short']);
      // A rewrite from position 1 replaces the rest, and a shorter transcript is shorter.
      await store.checkpoint(lease, { ...small(), messages: { from: 1, items: [JSON.stringify({ role: 'user', content: 'summary' })] } }, false);
      expect((await store.loadRun('run_diff'))!.messages.map((m) => m.content)).toEqual(['Be careful.', 'summary']);
      await store.close();
    });

    it('refuses a write whose lease another worker took over (fencing), and writes nothing of it', async () => {
      const clock = manualClock();
      const store = await make({ leaseMs: 1000, clock });
      const created = await store.createRun({ state: newRun('run_fenced'), owner: 'w1' });
      const stale = 'lease' in created ? created.lease : expect.fail('not created');
      await clock.advance(1001);
      const claimed = (await store.claimExpired('teller', 'w2')) as ClaimedRun | undefined;
      expect(claimed?.lease).toMatchObject({ runId: 'run_fenced', owner: 'w2' });
      expect(claimed!.lease.token).toBeGreaterThan(stale.token);
      const message = await leaseLost(store.checkpoint(stale, { ...small('completed'), messages: { from: 2, items: [JSON.stringify({ role: 'assistant', content: 'late' })] } }, true));
      expect(message).toMatch(/run run_fenced: this worker no longer holds the run's lease/);
      expect(await store.renew(stale)).toBe(false);
      const state = await store.loadRun('run_fenced');
      expect(state!.status).toBe('running');
      expect(state!.messages).toHaveLength(2);
      // The new holder writes as usual.
      await store.checkpoint(claimed!.lease, small('completed'), true);
      expect((await store.loadRun('run_fenced'))!.status).toBe('completed');
      await store.close();
    });

    it('lets recovery claim only runs whose lease expired, of the agent named, each once', async () => {
      // The clock stands still while the three claims below race: the winner's new lease cannot
      // expire before the others look (else a later claim would rightly take the run again).
      const clock = manualClock();
      const store = await make({ leaseMs: 1000, clock });
      const a = await store.createRun({ state: newRun('run_a'), owner: 'w1' });
      await store.createRun({ state: { ...newRun('run_other'), agentName: 'someone-else' }, owner: 'w1' });
      expect(await store.claimExpired('teller', 'w2')).toBeUndefined();
      // A renewed lease does not expire.
      await clock.advance(600);
      expect(await store.renew((a as { lease: never }).lease)).toBe(true);
      await clock.advance(600);
      expect(await store.claimExpired('teller', 'w2')).toBeUndefined();
      // Connections opened now (a database store's pool), so the claims race each other, not the connecting.
      await Promise.all([store.listRuns(), store.listRuns(), store.listRuns()]);
      await clock.advance(401);
      const claims = (await Promise.all([store.claimExpired('teller', 'w2'), store.claimExpired('teller', 'w3'), store.claimExpired('teller', 'w4')])) as (ClaimedRun | undefined)[];
      expect(claims.filter((c) => c !== undefined).map((c) => c!.state.runId)).toEqual(['run_a']);
      expect(claims.find((c) => c !== undefined)!.state).toEqual(newRun('run_a'));
      await store.close();
    });

    it('claims a named run only: when its lease expired, and when it is of the agent named', async () => {
      const clock = manualClock();
      const store = await make({ leaseMs: 1000, clock });
      await store.createRun({ state: newRun('run_first'), owner: 'w1' });
      await clock.advance(5);
      await store.createRun({ state: newRun('run_second'), owner: 'w1' });
      await store.createRun({ state: { ...newRun('run_theirs'), agentName: 'someone-else' }, owner: 'w1' });
      expect(await store.claimExpired('teller', 'w2', 'run_second')).toBeUndefined();
      await clock.advance(1001);
      expect(await store.claimExpired('someone-else', 'w2', 'run_second')).toBeUndefined();
      expect(await store.claimExpired('teller', 'w2', 'run_theirs')).toBeUndefined();
      expect(await store.claimExpired('teller', 'w2', 'run_nobody')).toBeUndefined();
      // Not the oldest expired run of the agent, as a claim without a run id takes: the one named.
      const claimed = (await store.claimExpired('teller', 'w2', 'run_second')) as ClaimedRun | undefined;
      expect(claimed?.lease).toMatchObject({ runId: 'run_second', owner: 'w2' });
      expect(claimed!.state).toEqual(newRun('run_second'));
      expect(await store.claimExpired('teller', 'w3', 'run_second')).toBeUndefined();
      expect(((await store.claimExpired('teller', 'w3')) as ClaimedRun | undefined)?.state.runId).toBe('run_first');
      await store.close();
    });

    it('gives the lease back with the final checkpoint: a finished run is never claimed', async () => {
      const clock = manualClock();
      const store = await make({ leaseMs: 1000, clock });
      const created = await store.createRun({ state: newRun('run_done'), owner: 'w1' });
      await store.checkpoint((created as { lease: never }).lease, small('completed'), true);
      await clock.advance(1001);
      expect(await store.claimExpired('teller', 'w2')).toBeUndefined();
      const [summary] = await store.listRuns({ agentName: 'teller' });
      expect(summary).toMatchObject({ runId: 'run_done', status: 'completed', leaseExpiresAt: 0 });
      await store.close();
    });

    it('claims a suspended run for exactly one of two resumes of the same segment', async () => {
      const store = await make();
      const created = await store.createRun({ state: newRun('run_s'), owner: 'w1' });
      const pending = [{ toolCallId: 'p', toolName: 'pay', args: {} }];
      await store.checkpoint((created as { lease: never }).lease, { ...small('suspended'), pendingApprovals: JSON.stringify(pending) }, true);
      const next = { ...newRun('run_s'), segment: 1, status: 'suspended' as const, decisions: { p: { approved: true, toolName: 'pay', args: {} } } };
      const claims = await Promise.all(['w2', 'w3'].map((owner) => store.claimRun('run_s', { owner, segment: 1, state: next })));
      expect(claims.filter((c) => 'lease' in c)).toHaveLength(1);
      expect(claims.find((c) => 'refused' in c)).toMatchObject({ refused: 'status', status: 'running' });
      const state = await store.loadRun('run_s');
      expect(state).toMatchObject({ status: 'running', pendingApprovals: [], decisions: next.decisions });
      expect(await store.claimRun('run_s', { owner: 'w4', segment: 0, state: next })).toMatchObject({ refused: 'status' });
      expect(await store.claimRun('run_nobody', { owner: 'w4', segment: 0, state: next })).toEqual({ refused: 'missing' });
      await store.close();
    });

    it('says a claimed run is running with no stop reason: the last segment\'s is not kept beside it', async () => {
      const store = await make();
      const created = await store.createRun({ state: newRun('run_c'), owner: 'w1' });
      const pending = [{ toolCallId: 'p', toolName: 'pay', args: {} }];
      await store.checkpoint((created as { lease: never }).lease, { ...small('suspended'), stopReason: 'approval', pendingApprovals: JSON.stringify(pending) }, true);
      expect((await store.listRuns({ sessionId: 's_run_c' }))[0]).toMatchObject({ status: 'suspended', stopReason: 'approval' });
      const next = { ...newRun('run_c'), segment: 1, status: 'suspended' as const, stopReason: 'approval' as const, decisions: { p: { approved: true, toolName: 'pay', args: {} } } };
      expect(await store.claimRun('run_c', { owner: 'w2', segment: 1, state: next })).toHaveProperty('lease');
      const [summary] = await store.listRuns({ sessionId: 's_run_c' });
      expect(summary.status).toBe('running');
      expect(summary).not.toHaveProperty('stopReason');
      expect((await store.loadRun('run_c'))!.stopReason).toBeUndefined();
      await store.close();
    });

    it('shows a resumed run, while its segment runs, as running with no stop reason', async () => {
      const store = await make();
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const pay = defineTool({ name: 'pay', description: 'Pay', needsApproval: true, execute: async () => (await released, 'paid') });
      const agent = createAgent({ name: 'teller', model: mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: {} }] }, 'Paid.']), tools: [pay], store });
      const first = await agent.run('Pay Alice');
      expect(first).toMatchObject({ status: 'suspended', stopReason: 'approval' });
      let entered!: () => void;
      const running = new Promise<void>((resolve) => (entered = resolve));
      const resumed = agent.resume(first.runId, { p: true }, { onEvent: (e) => void (e.type === 'tool.start' && entered()) });
      await running;
      const [summary] = await store.listRuns({ sessionId: first.sessionId });
      expect(summary.status).toBe('running');
      expect(summary).not.toHaveProperty('stopReason');
      release();
      expect(await resumed).toMatchObject({ status: 'completed', stopReason: 'final' });
      expect((await store.listRuns({ sessionId: first.sessionId }))[0]).toMatchObject({ status: 'completed', stopReason: 'final' });
      await store.close();
    });

    it('refuses a claim for a segment the run has moved past', async () => {
      const store = await make();
      const created = await store.createRun({ state: newRun('run_m'), owner: 'w1' });
      await store.checkpoint((created as { lease: never }).lease, small('failed', 3), true);
      expect(await store.claimRun('run_m', { owner: 'w2', segment: 2, state: newRun('run_m') })).toEqual({ refused: 'segment', status: 'failed', segment: 3 });
      await store.close();
    });

    it('goes by its clock: a run is created, changed and leased at the times the clock says', async () => {
      const clock = manualClock();
      const start = clock.now();
      const store = await make({ leaseMs: 1000, clock });
      const created = await store.createRun({ state: newRun('run_timed'), owner: 'w1' });
      expect((await store.listRuns())[0]).toMatchObject({ createdAt: start, updatedAt: start, leaseExpiresAt: start + 1000 });
      await clock.advance(400);
      await store.checkpoint((created as { lease: never }).lease, small(), false);
      expect((await store.listRuns())[0]).toMatchObject({ createdAt: start, updatedAt: start + 400, leaseExpiresAt: start + 1400 });
      await clock.advance(250);
      expect(await store.renew((created as { lease: never }).lease)).toBe(true);
      expect((await store.listRuns())[0].leaseExpiresAt).toBe(start + 1650);
      await store.close();
    });

    it('refuses a clock that reads other than a finite number, naming it, and writes nothing', async () => {
      let reading: unknown = Number.NaN;
      const store = await make({ clock: { now: () => reading as number, setTimer: () => () => undefined } });
      await expect(store.createRun({ state: newRun('run_never'), owner: 'w1' })).rejects.toThrow(/clock\.now\(\) must return milliseconds since the epoch, a finite number \(got NaN\)/);
      reading = '1800000000000';
      await expect(store.createRun({ state: newRun('run_never'), owner: 'w1' })).rejects.toThrow(/clock\.now\(\) must return milliseconds since the epoch, a finite number \(got the string "1800000000000"\)/);
      reading = 1_800_000_000_000;
      expect(await store.listRuns()).toEqual([]);
      await store.close();
    });

    it('refuses to start a run that is already stored', async () => {
      const store = await make();
      await store.createRun({ state: newRun('run_twice'), owner: 'w1' });
      expect(await store.createRun({ state: newRun('run_twice'), owner: 'w2' })).toEqual({ refused: 'run_exists' });
      await store.close();
    });
  });
}
