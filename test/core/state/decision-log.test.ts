// The decision log: every human decision given to resume is kept in the run state for good —
// which call, approved or denied, the arguments asked about and those approved, why, who,
// through which surface and when — checked field by field, through JSON and later resumes.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, KoagentError, type RunState } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A teller whose transfers need a human; `sent` lists the amounts that went out. */
function teller(replies: Parameters<typeof mockModel>[0] = [{ toolCalls: [{ id: 't1', name: 'transfer', args: { to: 'Ada', amount: 42.5 } }] }, 'Sent.']) {
  const sent: number[] = [];
  const transfer = defineTool({
    name: 'transfer',
    description: 'Sends money',
    input: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      sent.push(amount);
      return `sent ${amount}`;
    },
  });
  return { agent: createAgent({ name: 'teller', model: mockModel(replies), tools: [transfer] }), sent };
}

async function refusal(promise: Promise<unknown>): Promise<KoagentError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!KoagentError.is(error)) throw new Error(`expected a KoagentError, got ${String(error)}`);
  return error;
}

describe('the decision log: what a resume keeps', () => {
  it('keeps an approval with edited arguments (42.5 → 40): the arguments asked and approved, who, through which surface, when', async () => {
    const { agent, sent } = teller();
    const paused = await agent.run('Pay Ada 42.5');
    expect(paused.state.decisionLog).toBeUndefined();
    const done = await agent.resume(paused.state, { t1: { approved: true, args: { to: 'Ada', amount: 40 }, reason: 'Round it down', actor: { id: 'u_17', name: 'Grace' } } });
    expect(sent).toEqual([40]);
    expect(done.state.decisionLog).toEqual([{
      toolCallId: 't1', toolName: 'transfer', decision: 'approved',
      args: { to: 'Ada', amount: 42.5 }, editedArgs: { to: 'Ada', amount: 40 },
      reason: 'Round it down', actor: { id: 'u_17', name: 'Grace' }, surface: 'api', at: expect.stringMatching(ISO), segment: 2,
    }]);
    // The transcript keeps what the model wrote; the log is where the edit is.
    expect(done.state.messages.find((m) => m.role === 'assistant' && m.toolCalls !== undefined)).toMatchObject({ toolCalls: [{ args: { amount: 42.5 } }] });
  });

  it('keeps true and false as approved and denied, through the surface "api", with no actor', async () => {
    const approved = teller();
    const yes = await approved.agent.resume((await approved.agent.run('Pay')).state, { t1: true });
    expect(yes.state.decisionLog).toEqual([{ toolCallId: 't1', toolName: 'transfer', decision: 'approved', args: { to: 'Ada', amount: 42.5 }, surface: 'api', at: expect.stringMatching(ISO), segment: 2 }]);
    const denied = teller();
    const no = await denied.agent.resume((await denied.agent.run('Pay')).state, { t1: false });
    expect(no.state.decisionLog).toEqual([{ toolCallId: 't1', toolName: 'transfer', decision: 'denied', args: { to: 'Ada', amount: 42.5 }, surface: 'api', at: expect.stringMatching(ISO), segment: 2 }]);
    expect(denied.sent).toEqual([]);
  });

  it('takes an actor given as a string, keeping it as { id }, and a surface of the caller\'s own', async () => {
    const { agent } = teller();
    const done = await agent.resume((await agent.run('Pay')).state, { t1: { approved: false, reason: 'Not today', actor: 'grace@example.com', surface: 'slack' } });
    expect(done.state.decisionLog).toEqual([expect.objectContaining({ decision: 'denied', reason: 'Not today', actor: { id: 'grace@example.com' }, surface: 'slack' })]);
  });

  it('adds to the log at each resume, keeping the earlier decisions, through JSON', async () => {
    const { agent, sent } = teller([
      { toolCalls: [{ id: 't1', name: 'transfer', args: { to: 'Ada', amount: 42.5 } }] },
      { toolCalls: [{ id: 't2', name: 'transfer', args: { to: 'Bob', amount: 7 } }] },
      'Both sent.',
    ]);
    const first = await agent.run('Pay Ada, then Bob');
    const second = await agent.resume(JSON.parse(JSON.stringify(first.state)) as RunState, { t1: { approved: true, args: { to: 'Ada', amount: 40 }, actor: 'grace' } });
    expect(second.status).toBe('suspended');
    const done = await agent.resume(JSON.parse(JSON.stringify(second.state)) as RunState, { t2: { approved: false, reason: 'Ask Bob first', actor: 'alan', surface: 'cli' } });
    expect(sent).toEqual([40]);
    expect(done.state.decisionLog!.map((d) => [d.toolCallId, d.decision, d.actor?.id, d.surface, d.segment])).toEqual([['t1', 'approved', 'grace', 'api', 2], ['t2', 'denied', 'alan', 'cli', 3]]);
  });

  it('resumes a state written before decisions were kept (no decisionLog), and starts its log', async () => {
    const { agent } = teller();
    const paused = await agent.run('Pay');
    const old = JSON.parse(JSON.stringify(paused.state)) as RunState & { decisionLog?: unknown };
    delete old.decisionLog;
    const done = await agent.resume(old, { t1: true });
    expect(done.state.decisionLog).toHaveLength(1);
  });
});

describe('the decision log: misuse is refused before anything runs', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a misspelt field of a decision', { approved: true, reasn: 'ok' }, /the decision for "t1": reasn is not a field of a decision; did you mean `reason`\?/],
    ['a field of another name', { approved: true, by: 'grace' }, /by is not a field of a decision; did you mean `actor`\?/],
    ['a misspelt field of the actor', { approved: true, actor: { id: 'u_1', nmae: 'Grace' } }, /actor\.nmae is not a field of a decision's actor; did you mean `name`\?/],
    ['an empty actor', { approved: true, actor: '' }, /actor must not be empty/],
    ['an actor that is neither a string nor { id }', { approved: true, actor: 17 }, /actor must be a string, or \{ id: string, name\?: string \}/],
    ['a surface that is no short lower-case name', { approved: true, surface: 'The Studio' }, /surface must be a short lower-case name such as 'api', 'cli', 'studio'/],
    ['a reason that is not a string', { approved: false, reason: 42 }, /reason must be a string/],
  ];

  it.each(cases)('%s', async (_what, decision, message) => {
    const { agent, sent } = teller();
    const paused = await agent.run('Pay');
    const error = await refusal(agent.resume(paused.state, { t1: decision } as never));
    expect(error.code).toBe('invalid_resume');
    expect(error.message).toMatch(message);
    expect(sent).toEqual([]);
    // The state is not used up: the corrected decision goes through.
    expect((await agent.resume(paused.state, { t1: true })).state.decisionLog).toHaveLength(1);
  });

  it('refuses a state whose decision log is malformed, naming the field', async () => {
    const { agent } = teller();
    const paused = await agent.run('Pay');
    const bad = { ...paused.state, decisionLog: [{ toolCallId: 't0', toolName: 'transfer', decision: 'maybe', args: {}, surface: 'api', at: 'then', segment: 1 }] };
    const error = await refusal(agent.resume(bad as unknown as RunState, { t1: true }));
    expect(error.message).toMatch(/state\.decisionLog\[0\]\.decision is "maybe", expected one of approved, denied/);
  });
});

describe('the decision log: a sub-agent\'s call', () => {
  it('is kept in the lead\'s log under the id it was listed under, with the sub-agent\'s path', async () => {
    const { agent: clerk, sent } = teller();
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ id: 'c1', name: 'teller', args: { task: 'Pay Ada' } }] }, 'Done.']), tools: [clerk.asTool({ description: 'Pays people' })] });
    const paused = await lead.run('Get Ada paid');
    const [pending] = paused.pendingApprovals;
    const done = await lead.resume(paused.state, { [pending.toolCallId]: { approved: true, actor: 'grace', surface: 'studio' } });
    expect(sent).toEqual([42.5]);
    expect(done.state.decisionLog).toEqual([expect.objectContaining({ toolCallId: pending.toolCallId, toolName: 'transfer', decision: 'approved', actor: { id: 'grace' }, surface: 'studio', path: ['teller'] })]);
  });
});
