// Suspended runs through a store: listed, resumed by id in another agent object, claimed
// exactly once; states made without a store imported; sub-agents and streams on a store; and
// the option checks of stores.
import { describe, expect, it } from 'vitest';
import { createAgent, KoagentError, memoryStore, RunFailedError } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import { countingTool } from '../fixtures/counting-tools.js';

/** An agent whose model asks to pay 80, then says "Paid."; `resuming` starts its script at "Paid." (another process resuming). */
function payer(store: RunStore | undefined, resuming = false, pay = countingTool('pay', { needsApproval: true })) {
  const model = mockModel([...(resuming ? [] : [{ toolCalls: [{ id: 'p', name: 'pay', args: { amount: 80 } }] }]), 'Paid.', 'Paid again?']);
  return { agent: createAgent({ name: 'payer', model, tools: [pay.tool], ...(store ? { store } : {}) }), pay };
}

async function refusal(promise: Promise<unknown>): Promise<KoagentError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!KoagentError.is(error)) throw new Error(`expected a KoagentError, got ${String(error)}`);
  return error;
}

describe('resuming a stored run', () => {
  it('lists it among the pending approvals, and resumes it by id from another agent object', async () => {
    const store = memoryStore();
    const paused = await payer(store).agent.run('Pay the rent', { sessionId: 'rent' });
    const other = payer(store, true);
    const [waiting] = await other.agent.runs.pendingApprovals();
    expect(waiting).toMatchObject({ runId: paused.runId, sessionId: 'rent', status: 'suspended', pendingApprovals: [{ toolCallId: 'p', toolName: 'pay', args: { amount: 80 } }] });
    const done = await other.agent.resume(paused.runId, { p: true });
    expect(done).toMatchObject({ status: 'completed', text: 'Paid.' });
    expect(other.pay.runs).toEqual([{ amount: 80 }]);
    expect(await other.agent.runs.pendingApprovals()).toEqual([]);
    expect(await store.loadRun(paused.runId)).toEqual(done.state);
  });

  it('lets exactly one of two resumes of the same segment go ahead, in any agent object', async () => {
    const store = memoryStore();
    const paused = await payer(store).agent.run('Pay the rent');
    const [one, two] = [payer(store, true), payer(store, true)];
    const results = await Promise.allSettled([one.agent.resume(paused.runId, { p: true }), two.agent.resume(paused.state, { p: true })]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as KoagentError;
    expect(refused.code).toBe('invalid_resume');
    expect(one.pay.runs.length + two.pay.runs.length).toBe(1);
  });

  it('refuses a state that is behind the stored run, a run of another agent, an unknown id, and a running run', async () => {
    const store = memoryStore();
    const { agent } = payer(store);
    const paused = await agent.run('Pay the rent');
    await agent.resume(paused.runId, { p: true });
    expect((await refusal(agent.resume(paused.state, { p: true }))).message).toMatch(`this state (run ${paused.runId}, segment 1) was already resumed: the store has the run at segment 2 (completed)`);
    expect((await refusal(agent.resume(paused.runId, { p: true }))).message).toMatch(/has completed \(final\)/);
    const other = createAgent({ name: 'someone', model: mockModel([]), store });
    expect((await refusal(other.resume(paused.runId))).message).toBe('agent.resume(): this state belongs to agent "payer", not "someone"; resume it with that agent');
    expect((await refusal(agent.resume('run_nobody'))).message).toBe('agent.resume(): there is no run run_nobody in the store (memory); it was never stored, or it was deleted or pruned');
    await store.createRun({ state: { ...paused.state, runId: 'run_busy', status: 'running' }, owner: 'someone' });
    expect((await refusal(agent.resume('run_busy'))).message).toMatch(/run run_busy is running in a worker \(or its worker died: agent.runs.recover\(\) continues it once its lease expired\)/);
  });

  it('imports a state made without the store, and from then on the store claims it', async () => {
    const { agent: plain } = payer(undefined);
    const paused = await plain.run('Pay the rent');
    const store = memoryStore();
    const { agent, pay } = payer(store, true);
    const done = await agent.resume(paused.state, { p: true });
    expect(done.text).toBe('Paid.');
    expect(pay.runs).toHaveLength(1);
    expect((await store.loadRun(paused.runId))!.status).toBe('completed');
    expect((await refusal(agent.resume(paused.state, { p: true }))).code).toBe('invalid_resume');
  });

  it('retries a failed run by its id, without running its done calls again', async () => {
    const store = memoryStore();
    const add = countingTool('add');
    const model = mockModel([{ toolCalls: [{ id: 'a', name: 'add', args: {} }] }, { error: 'overloaded' }, 'Added.']);
    const agent = createAgent({ name: 'adder', model, tools: [add.tool], store });
    const failure = (await agent.run('Add').catch((e: unknown) => e)) as RunFailedError;
    expect(failure.code).toBe('model_error');
    expect((await store.listRuns({ status: 'failed' })).map((r) => r.runId)).toEqual([failure.runId]);
    expect((await agent.resume(failure.runId)).text).toBe('Added.');
    expect(add.runs).toHaveLength(1);
  });
});

describe('what runs on a store', () => {
  it("keeps a sub-agent's run inside its parent's call: only the parent is stored, and resuming it resumes the child", async () => {
    const store = memoryStore();
    const publish = countingTool('publish', { needsApproval: true });
    const writer = createAgent({ name: 'writer', model: mockModel([{ toolCalls: [{ id: 'w', name: 'publish', args: { note: 'otters' } }] }, 'Published.']), tools: [publish.tool], store });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ id: 'l', name: 'writer', args: { task: 'Publish the otter note' } }] }, 'All done.']), tools: [writer.asTool({ description: 'Writes and publishes' })], store });
    const paused = await lead.run('Get the note out');
    expect((await store.listRuns()).map((r) => r.agentName)).toEqual(['lead']);
    const [waiting] = await lead.runs.pendingApprovals();
    expect(waiting.pendingApprovals).toMatchObject([{ toolName: 'publish', path: ['writer'] }]);
    const done = await lead.resume(paused.runId, { [waiting.pendingApprovals[0].toolCallId]: true });
    expect(done.text).toBe('All done.');
    expect(publish.runs).toEqual([{ note: 'otters' }]);
  });

  it('streams a stored run like any other', async () => {
    const store = memoryStore();
    const agent = createAgent({ name: 'streamer', model: mockModel(['Hello there']), store });
    const stream = agent.stream('Hi');
    let text = '';
    for await (const event of stream) if (event.type === 'text.delta') text += event.delta;
    const result = await stream.result;
    expect(text).toBe('Hello there');
    expect(await store.loadRun(result.runId)).toEqual(result.state);
  });

  it('uses the store a call names instead of the agent\'s', async () => {
    const mine = memoryStore();
    const theirs = memoryStore();
    const agent = createAgent({ name: 'a', model: mockModel(['one', 'two']), store: mine });
    await agent.run('x');
    const result = await agent.run('y', { store: theirs });
    expect((await theirs.listRuns()).map((r) => r.runId)).toEqual([result.runId]);
    expect(await mine.listRuns()).toHaveLength(1);
  });
});

describe('store options', () => {
  it('are checked at construction and per call, naming what is wrong', async () => {
    expect(() => createAgent({ model: mockModel([]), store: {} as never })).toThrow('createAgent: store is not a run store: it has no createRun, claimRun, claimExpired, checkpoint, renew, loadRun, sessionHead, listRuns, deleteRun, deleteSession, prune, close methods; use memoryStore(), sqliteStore() from koagent/sqlite or postgresStore() from koagent/postgres');
    expect(() => createAgent({ model: mockModel([]), store: memoryStore(), claimResume: () => true })).toThrow('createAgent: give claimResume or store, not both: with a store, every resume is claimed through the store');
    const agent = createAgent({ model: mockModel(['x']) });
    await expect(agent.run('x', { store: { kind: 'mine' } as never })).rejects.toThrow('agent.run(input, options): store is not a run store: it has no createRun, claimRun');
    await expect(agent.send('x', { sessionId: 'alice' })).rejects.toThrow("agent.send(input, { sessionId }): a stored session needs a run store (createAgent({ store }) or { store } in these options); without one, send() continues the agent's own session, and agent.run(input, { sessionId }) starts a run in another");
    await expect(agent.runs.pendingApprovals()).rejects.toThrow('agent.runs.pendingApprovals() needs a run store');
    await expect(createAgent({ model: mockModel(['x']), store: memoryStore() }).send('x', { sessionId: '' })).rejects.toThrow('agent.send(input, options): sessionId must be a non-empty string');
    // Misspelled keys are refused, naming the one meant.
    await expect(agent.run('x', { stor: memoryStore() } as never)).rejects.toThrow('agent.run(input, options): stor is not an option; did you mean `store`?');
    await expect(agent.runs.recover({ limt: 3 } as never)).rejects.toThrow('agent.runs.recover(options): limt is not an option; did you mean `limit`?');
    await expect(agent.runs.recover({ sessionId: 's' } as never)).rejects.toThrow('agent.runs.recover(options): sessionId is not an option');
    await expect(agent.runs.pendingApprovals({ limits: 3 } as never)).rejects.toThrow('agent.runs.pendingApprovals(options): limits is not an option; did you mean `limit`?');
    expect(() => createAgent({ model: mockModel([]), stroe: memoryStore() } as never)).toThrow('createAgent: stroe is not an option; did you mean `store`?');
  });
});
