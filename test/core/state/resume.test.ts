// resume: misuse, exactly-once tools, edited approvals, claimResume, plain JSON states and who may
// resume a state, in one process. (Resumed in another process: resume-processes.test.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, KoagentError, type AgentEvent, type RunState } from '../../../src/index.js';
import type { ResumeClaim } from '../../../src/types.js';
import { mockModel } from '../../../src/testing/index.js';
import { BALANCE_CALL, buildBankAgent, executions, TRANSFER_CALL } from '../../fixtures/bank-agent.js';
import { countingTool, eventLog } from '../../fixtures/counting-tools.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-resume-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A paused run of an agent whose `pay` tool needs approval; `pay.runs` counts its executions. */
async function pausedPayment() {
  const pay = countingTool('pay', { needsApproval: true });
  const log = eventLog();
  const model = mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: { amount: 80 } }] }, 'Paid.', 'Paid again?', 'Paid a third time?']);
  const agent = createAgent({ name: 'payer', model, tools: [pay.tool], onEvent: log.listener });
  const result = await agent.run('Pay the rent');
  return { agent, pay, result, state: result.state, log, model };
}

async function rejection(promise: Promise<unknown>): Promise<KoagentError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!KoagentError.is(error)) throw new Error(`expected a KoagentError, got ${String(error)}`);
  return error;
}

describe('resume: misuse is a clear error and runs no tool', () => {
  const cases: [string, (s: RunState) => [unknown, unknown], RegExp][] = [
    ['a missing decision', (s) => [s, {}], /no decision for pending call "p" \(pay\); give true, false or \{ approved, reason \} for each of: p/],
    ['no decisions at all', (s) => [s, undefined], /no decision for pending call "p"/],
    ['a decision for an unknown call', (s) => [s, { p: true, q: true }], /there is no pending approval with toolCallId "q" \(pending: p\)/],
    ['a decision that is not true, false or { approved }', (s) => [s, { p: 'yes' }], /the decision for "p" must be true, false or \{ approved: boolean, reason\?: string, args\?, actor\?, surface\? \}/],
    ['an { approved } that is not a boolean', (s) => [s, { p: { approved: 'yes' } }], /the decision for "p" must be true, false/],
    ['decisions that are not an object', (s) => [s, null], /decisions must be an object mapping each pending toolCallId to true, false or \{ approved, reason \}/],
    ['a state of another agent', (s) => [{ ...s, agentName: 'someone-else' }, { p: true }], /this state belongs to agent "someone-else", not "payer"; resume it with that agent/],
    ['a state that is still running', (s) => [{ ...s, status: 'running' }, { p: true }], /is still running; resume the state of its result or of its RunFailedError/],
    ['something that is not a state', () => ['state.json', { p: true }], /resume\(state\): state is not an object/],
    ['a state of another version', (s) => [{ ...s, version: 1 }, { p: true }], /state.version is 1, expected 3/],
    ['a state missing a field', (s) => [{ ...s, ledger: undefined }, { p: true }], /state.ledger should be an array/],
    ['a state whose ledger lists a call twice', (s) => [{ ...s, ledger: [...s.ledger, ...s.ledger] }, { p: true }], /state.ledger\[1\]\.id "p" is listed twice \(first at \[0\]\)/],
    ['a state with an unknown status', (s) => [{ ...s, status: 'paused' }, { p: true }], /state.status is "paused", expected one of running, completed, suspended, failed/],
    ['a state with a malformed pending approval', (s) => [{ ...s, pendingApprovals: [{ id: 'p' }] }, { p: true }], /state.pendingApprovals\[0\]\.toolCallId should be a string \(got undefined\)/],
  ];

  it.each(cases)('%s', async (_what, make, message) => {
    const { agent, pay, state, log } = await pausedPayment();
    log.events.length = 0;
    const [badState, decisions] = make(JSON.parse(JSON.stringify(state)));
    const error = await rejection(agent.resume(badState as RunState, decisions as never));
    expect(error.code).toBe('invalid_resume');
    expect(error.message).toMatch(message);
    expect(pay.runs).toHaveLength(0);
    expect(log.events).toEqual([]);
    // The mistake did not use the state up: a correct resume still works.
    const done = await agent.resume(state, { p: true });
    expect(done.status).toBe('completed');
    expect(pay.runs).toHaveLength(1);
  });

  it('resuming a completed run', async () => {
    const { agent, pay, state } = await pausedPayment();
    const done = await agent.resume(state, { p: true });
    const error = await rejection(agent.resume(done.state, {}));
    expect(error.message).toMatch(/agent.resume\(\): run run_.* has completed \(final\); start a new one with agent.run\(\) or agent.send\(\)/);
    expect(pay.runs).toHaveLength(1);
  });

  it('resuming the same suspended state twice, as the same object or as a copy', async () => {
    const { agent, pay, state } = await pausedPayment();
    const copy = JSON.parse(JSON.stringify(state));
    await agent.resume(state, { p: true });
    for (const again of [state, copy]) {
      const error = await rejection(agent.resume(again, { p: true }));
      expect(error.message).toMatch(/this state \(run run_.*, segment 1\) was already resumed; continue from the state that resume returned/);
    }
    expect(pay.runs).toHaveLength(1);
  });

  it('a refused resume uses up nothing: the same state resumes afterwards', async () => {
    const { agent, pay, state } = await pausedPayment();
    const tampered = { ...structuredClone(state), pendingApprovals: [{ toolCallId: 'ghost/p', toolName: 'pay', args: { amount: 80 } }] };
    const refused = await rejection(agent.resume(tampered, { 'ghost/p': true }));
    expect(refused.message).toMatch(/pending approval "ghost\/p" names a call that the state does not hold/);
    const result = await agent.resume(state, { p: true });
    expect(result.status).toBe('completed');
    expect(pay.runs).toHaveLength(1);
  });

  it('misuse rejects the returned promise rather than throwing', () => {
    const agent = createAgent({ model: mockModel([]) });
    let thrown: unknown;
    let promise: Promise<unknown> | undefined;
    try {
      promise = agent.resume('nonsense' as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeUndefined();
    return expect(promise).rejects.toThrow(/state is not an object/);
  });
});

describe('resume: a tool approved once executes exactly once', () => {
  it('however often resume is attempted with the same state in this process, even at the same time', async () => {
    const { agent, pay, state } = await pausedPayment();
    const copies = Array.from({ length: 4 }, () => JSON.parse(JSON.stringify(state)) as RunState);
    const attempts = await Promise.allSettled([state, ...copies].map((s) => agent.resume(s, { p: true })));
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    expect(attempts.filter((a) => a.status === 'rejected').map((a) => (a as PromiseRejectedResult).reason.code)).toEqual(Array(4).fill('invalid_resume'));
    const later = await Promise.allSettled([agent.resume(state, { p: true }), agent.resume(copies[0], { p: false })]);
    expect(later.map((a) => a.status)).toEqual(['rejected', 'rejected']);
    expect(pay.runs).toHaveLength(1);
  });
});

describe('resume: an approval with edited arguments', () => {
  it('runs the call with the arguments the human gave, and keeps them as the approved ones', async () => {
    const { agent, pay, state } = await pausedPayment();
    const done = await agent.resume(state, { p: { approved: true, args: { amount: 60, note: 'capped' } } });
    expect(done.status).toBe('completed');
    expect(pay.runs).toEqual([{ amount: 60, note: 'capped' }]);
  });

  it('is refused on a denial, which has no arguments to run with', async () => {
    const { agent, pay, state } = await pausedPayment();
    const error = await rejection(agent.resume(state, { p: { approved: false, args: { amount: 60 } } }));
    expect(error.message).toContain('carries args');
    expect(pay.runs).toEqual([]);
  });
});

describe('resume: claimResume', () => {
  it('is asked to claim (runId, segment) before the segment starts; a false answer refuses the resume and runs no tool', async () => {
    const claims: ResumeClaim[] = [];
    const taken = new Set<string>();
    const pay = countingTool('pay', { needsApproval: true });
    const make = () => createAgent({
      name: 'payer',
      // Resumable: each agent object has a fresh mock, which answers where the run stands.
      model: mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: {} }] }, 'Paid.'], { resumable: true }),
      tools: [pay.tool],
      claimResume: async (claim) => {
        claims.push(claim);
        const key = `${claim.runId}#${claim.segment}`;
        if (taken.has(key)) return false;
        taken.add(key);
        return true;
      },
    });
    const first = await make().run('go');
    // Two agent objects (say, two request handlers) share nothing in memory but the claim store.
    const [a, b] = await Promise.allSettled([make().resume(first.state, { p: true }), make().resume(first.state, { p: true })]);
    expect([a.status, b.status].sort()).toEqual(['fulfilled', 'rejected']);
    const refused = (a.status === 'rejected' ? a : b) as PromiseRejectedResult;
    expect(refused.reason.code).toBe('invalid_resume');
    expect(refused.reason.message).toMatch(/claimResume answered false for run run_.*, segment 1: it was already resumed/);
    expect(((a.status === 'fulfilled' ? a : b) as PromiseFulfilledResult<{ text: string }>).value.text).toBe('Paid.');
    expect(pay.runs).toHaveLength(1);
    expect(claims[0]).toEqual({ runId: first.runId, segment: 1, agentName: 'payer', sessionId: first.sessionId });
  });

  it('decides alone: the agent object no longer refuses a second resume itself', async () => {
    const pay = countingTool('pay', { needsApproval: true });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: {} }] }, 'one', 'two']), tools: [pay.tool], claimResume: () => true });
    const { state } = await agent.run('go');
    await agent.resume(state, { p: true });
    await agent.resume(state, { p: true });
    expect(pay.runs).toHaveLength(2);
  });

  it('a claim store that throws refuses the resume with the cause, and the resume can be tried again', async () => {
    let down = true;
    const pay = countingTool('pay', { needsApproval: true });
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: {} }] }, 'Paid.']),
      tools: [pay.tool],
      claimResume: () => { if (down) throw new Error('database unreachable'); return true; },
    });
    const { state } = await agent.run('go');
    const error = await rejection(agent.resume(state, { p: true }));
    expect(error.message).toMatch(/claimResume threw \(database unreachable\), so run run_.* was not resumed; try again when the claim store answers/);
    expect((error.cause as Error).message).toBe('database unreachable');
    expect(pay.runs).toHaveLength(0);
    down = false;
    expect((await agent.resume(state, { p: true })).text).toBe('Paid.');
  });

  it('an answer other than true refuses (fail closed)', async () => {
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: {} }] }]), tools: [countingTool('pay', { needsApproval: true }).tool], claimResume: (() => undefined) as never });
    const { state } = await agent.run('go');
    expect((await rejection(agent.resume(state, { p: true }))).message).toMatch(/claimResume answered undefined/);
  });

  it('must be a function', () => {
    expect(() => createAgent({ model: mockModel([]), claimResume: 'redis' as never })).toThrow('createAgent: claimResume must be a function');
  });
});

describe('resume: the state is plain JSON', () => {
  /** A bank run paused for approval, its state passed through `prepare`, resumed and approved. */
  const runBoth = async (prepare: (s: RunState) => RunState) => {
    const dir = tempDir();
    const events: AgentEvent[] = [];
    const agent = buildBankAgent({ dir, onEvent: (e) => events.push(e) });
    const first = await agent.run('Pay Alice 80');
    expect(JSON.parse(JSON.stringify(first.state))).toStrictEqual(first.state);
    const done = await buildBankAgent({ dir, onEvent: (e) => events.push(e) }).resume(prepare(first.state), { [TRANSFER_CALL]: true });
    // Ids and times differ between the two runs; everything else must match.
    const scrub = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(first.runId, 'RUN').replaceAll(first.sessionId, 'SESSION').replace(/"at":(\d+|"[^"]*")/g, '"at":0'));
    return { paused: first.state, done: scrub(done), events: scrub(events), executions: scrub(executions(dir)) };
  };

  it('survives JSON unchanged, and a JSON copy resumes exactly as the object does', async () => {
    const fromObject = await runBoth((s) => s);
    const fromJson = await runBoth((s) => JSON.parse(JSON.stringify(s)));
    expect({ ...fromJson, paused: undefined }).toEqual({ ...fromObject, paused: undefined });
    expect(fromObject.done.status).toBe('completed');
    expect(fromObject.executions).toEqual([`get_balance RUN:${BALANCE_CALL}`, `transfer RUN:${TRANSFER_CALL}`]);
  });

  it('a state an earlier version wrote (format 2: the ledger and held results by call id) resumes as the same state of format 3 does', async () => {
    const current = await runBoth((s) => s);
    const asVersion2 = (s: RunState) => ({
      ...s, version: 2, ledger: Object.fromEntries(s.ledger.map((call) => [call.id, call.entry])), settled: Object.fromEntries(s.settled.map((m) => [m.toolCallId, m])),
    }) as unknown as RunState;
    const upgraded = await runBoth(asVersion2);
    // The paused state holds a settled call and the pending one, so both fields are carried over.
    expect(upgraded.paused.ledger).toEqual([{ id: BALANCE_CALL, entry: 'done' }, { id: TRANSFER_CALL, entry: 'pending' }]);
    expect(upgraded.paused.settled.map((m) => m.toolCallId)).toEqual([BALANCE_CALL]);
    expect({ ...upgraded, paused: undefined }).toEqual({ ...current, paused: undefined });
    expect(upgraded.done.state).toMatchObject({ version: 3, ledger: [{ id: BALANCE_CALL, entry: 'done' }, { id: TRANSFER_CALL, entry: 'done' }], settled: [] });
  });
});

describe('resume: a state is resumed only by the agent it belongs to', () => {
  const rm = () => {
    const removed: string[] = [];
    const tool = defineTool({ name: 'rm', description: 'Remove a file', input: z.object({ path: z.string() }), needsApproval: true, execute: ({ path }) => { removed.push(path); return 'removed'; } });
    return { tool, removed };
  };
  const paused = async () => {
    const { tool, removed } = rm();
    const owner = createAgent({ model: mockModel([{ toolCalls: [{ name: 'rm', args: { path: '/srv/data' }, id: 'c1' }] }, 'Done.']), tools: [tool] });
    return { result: await owner.run('Clean up'), removed };
  };

  it('refuses an unnamed agent with other tools resuming another unnamed agent\'s pending call (names alone are not enough)', async () => {
    const { result } = await paused();
    const stranger = createAgent({ model: mockModel(['I ran it.']) });
    const error = await rejection(stranger.resume(result.state, { c1: true }));
    expect(KoagentError.is(error) && error.code).toBe('invalid_resume');
    expect(error.message).toMatch(/this state belongs to another agent named "agent" \(other tools .*\); resume it with the agent that ran it, or take it over on purpose with agent\.runs\.adoptState\(state\)/);
  });

  it('refuses an agent with the same name and tools but another id', async () => {
    const { result } = await paused();
    const other = createAgent({ id: 'cleaner-2', model: mockModel([]), tools: [rm().tool] });
    expect((await rejection(other.resume(result.state, { c1: true }))).message).toMatch(/\(id "agent", not "cleaner-2"\)/);
  });

  it('lets an agent take a state over on purpose with adoptState, after which the call runs against its tools', async () => {
    const { result } = await paused();
    const { tool, removed } = rm();
    const successor = createAgent({ name: 'janitor', model: mockModel(['Cleaned.']), tools: [tool] });
    const adopted = successor.runs.adoptState(result.state);
    expect(adopted).toMatchObject({ agentName: 'janitor', agentId: 'janitor', runId: result.runId });
    expect(result.state.agentName).toBe('agent');
    const done = await successor.resume(adopted, { c1: true });
    expect(done.text).toBe('Cleaned.');
    expect(removed).toEqual(['/srv/data']);
  });

  it('adoptState checks the state whole first', () => {
    expect(() => createAgent({ model: mockModel([]) }).runs.adoptState({ version: 3 } as never)).toThrow(/state\.runId should be a string/);
  });
});
