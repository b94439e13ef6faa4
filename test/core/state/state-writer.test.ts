// The state writer's ledger and held results: the state lists them, the writer finds them by id.
import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ToolMessage } from '../../../src/types.js';
import { newState } from '../../../src/core/vocabulary/state.js';
import { StateWriter } from '../../../src/core/state/state-writer.js';

const identity = { name: 'agent', id: 'agent', toolsFingerprint: 'f' };
const reply = (...ids: string[]): AssistantMessage => ({ role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'add', args: {} })) });
const result = (toolCallId: string, content: string): ToolMessage => ({ role: 'tool', toolCallId, name: 'add', content });

describe('the ledger', () => {
  it('lists each call of a kept reply as pending, in the order the model made them', () => {
    const writer = new StateWriter(newState('r', 's', identity, []));
    writer.keepReply(undefined, reply('b', 'a'));
    expect(writer.state.ledger).toEqual([{ id: 'b', entry: 'pending' }, { id: 'a', entry: 'pending' }]);
    expect(writer.entryOf('a')).toBe('pending');
    expect(writer.entryOf('nope')).toBeUndefined();
  });

  it('gives a call whose id the run has already seen (or that has none) an id of its own', () => {
    const writer = new StateWriter(newState('r', 's', identity, []));
    writer.keepReply(undefined, reply('call_0'));
    writer.callSettled('call_0', result('call_0', '1'), true);
    writer.nextStep();
    const again = reply('call_0', '');
    const kept = writer.keepReply(undefined, again);
    expect(kept.toolCalls!.map((c) => c.id)).toEqual(['call_1_0_call_0', 'call_1_1']);
    // The reply given is not changed: the kept one is a new object, and the transcript's.
    expect(again.toolCalls!.map((c) => c.id)).toEqual(['call_0', '']);
    expect(writer.state.messages.at(-1)).toBe(kept);
    expect(writer.state.ledger).toEqual([{ id: 'call_0', entry: 'done' }, { id: 'call_1_0_call_0', entry: 'pending' }, { id: 'call_1_1', entry: 'pending' }]);
  });

  it('moves a call through running and done, whichever call was looked up last', () => {
    const writer = new StateWriter(newState('r', 's', identity, []));
    writer.keepReply(undefined, reply('a', 'b'));
    writer.callRunning('a');
    writer.callRunning('b');
    writer.callSettled('a', result('a', '1'), false);
    expect(writer.state.ledger).toEqual([{ id: 'a', entry: 'done' }, { id: 'b', entry: 'running' }]);
  });

  it('finds the calls of a state it did not write (a resumed one)', () => {
    const state = newState('r', 's', identity, []);
    state.ledger = [{ id: 'a', entry: 'done' }, { id: 'b', entry: 'running' }];
    state.settled = [result('a', '1')];
    const writer = new StateWriter(state);
    expect(writer.entryOf('b')).toBe('running');
    expect(writer.heldResult('a')).toEqual(result('a', '1'));
  });
});

describe('held results', () => {
  it('are held in the state until the turn ends, then enter the transcript in the model\'s order', () => {
    const writer = new StateWriter(newState('r', 's', identity, []));
    const calls = reply('a', 'b');
    writer.keepReply(undefined, calls);
    writer.callSettled('b', result('b', '2'), false);
    writer.callSettled('a', result('a', '1'), false);
    expect(writer.state.settled.map((m) => m.toolCallId)).toEqual(['b', 'a']);
    writer.endTurn(calls.toolCalls!);
    expect(writer.state.settled).toEqual([]);
    expect(writer.state.messages.slice(1)).toEqual([result('a', '1'), result('b', '2')]);
    expect(writer.heldResult('a')).toBeUndefined();
  });

  it('hold one result a call: settling a held call again replaces its result in place', () => {
    const writer = new StateWriter(newState('r', 's', identity, []));
    writer.keepReply(undefined, reply('a', 'b'));
    writer.callSettled('a', result('a', 'first'), false);
    writer.callSettled('b', result('b', '2'), false);
    writer.callSettled('a', result('a', 'second'), false);
    expect(writer.state.settled).toEqual([result('a', 'second'), result('b', '2')]);
    expect(writer.heldResult('a')).toEqual(result('a', 'second'));
  });
});

describe('nested runs', () => {
  const approval = (toolCallId: string) => ({ toolCallId, toolName: 'publish', args: {} });
  const decided = (...ids: string[]) => new Map(ids.map((id) => [id, { approval: approval(id), decision: { approved: true, surface: 'api' } }] as const));

  it('are kept behind a call that waits with one, its approvals listed under the ids the outcome gave', () => {
    const writer = new StateWriter(newState('r', 's', identity, []));
    writer.keepReply(undefined, reply('c'));
    writer.callRunning('c');
    writer.callWaits('c', { state: { inner: 1 }, approvals: [approval('c/x')], ids: { 'c/x': 'x' } });
    expect(writer.state.children).toEqual({ c: { state: { inner: 1 }, approvals: { 'c/x': 'x' } } });
    expect(writer.nestedRun('c')).toBe(writer.state.children.c);
    expect(writer.entryOf('c')).toBe('pending');
  });

  it('keep a resume\'s decisions under the listed ids, and use them up with the record they answer', () => {
    const state = newState('r', 's', identity, []);
    state.children = { c: { state: {}, approvals: { 'c/x': 'x' }, decisions: { x: false } } };
    state.pendingApprovals = [approval('c/x')];
    const writer = new StateWriter(state);
    writer.takeDecisions(decided('c/x'), '2030-01-02T03:04:05.000Z');
    // Routed nowhere: the nested run's tool reads them when its call runs again.
    expect(state.decisions).toEqual({ 'c/x': { approved: true, toolName: 'publish', args: {}, surface: 'api' } });
    expect(state.children.c).toEqual({ state: {}, approvals: { 'c/x': 'x' } });
    expect(writer.decisionOn('c/x')).toMatchObject({ approved: true });
    // Replaced (the nested run waits again): the decisions on the old record go.
    writer.keepNestedRun('c', { state: { again: true }, approvals: { 'c/y': 'y' } });
    expect(state.decisions).toEqual({});
    expect(state.children.c).toEqual({ state: { again: true }, approvals: { 'c/y': 'y' } });
  });

  it('go when their call settles, and when dropped', () => {
    const writer = new StateWriter(newState('r', 's', identity, []));
    writer.keepReply(undefined, reply('a', 'b'));
    writer.keepNestedRun('a', { state: 'failed once', approvals: {} });
    writer.keepNestedRun('b', { state: 'waiting', approvals: {} });
    writer.callSettled('a', result('a', 'done'), false);
    expect(Object.keys(writer.state.children)).toEqual(['b']);
    writer.dropNestedRun('b');
    expect(writer.state.children).toEqual({});
    expect(writer.nestedRun('b')).toBeUndefined();
  });
});
