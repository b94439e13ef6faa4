// The journal of a durable run, told by the state writer what each change touched: each
// checkpoint holds what changed since the last one, and only that.
import { describe, expect, it } from 'vitest';
import { StateJournal } from '../../src/durable/journal.js';
import type { StateObserver } from '../../src/core/state/state-observer.js';
import { StateWriter } from '../../src/core/state/state-writer.js';
import { newState } from '../../src/core/vocabulary/state.js';
import type { Message } from '../../src/index.js';
import type { AssistantMessage, ToolMessage } from '../../src/types.js';

const user = (content: string): Message => ({ role: 'user', content });
const reply = (content: string, calls?: string[]): AssistantMessage => ({ role: 'assistant', content, ...(calls ? { toolCalls: calls.map((id) => ({ id, name: 't', args: {} })) } : {}) });
const result = (id: string): ToolMessage => ({ role: 'tool', toolCallId: id, name: 't', content: 'ok' });

function fresh() {
  const state = newState('r', 's', { name: 'a', id: 'a', toolsFingerprint: 'f' }, [user('hi')]);
  const journal = new StateJournal(state);
  const observer: StateObserver = { changed: (part, key) => journal.changed(part, key), stepEnds: async () => undefined };
  return { state, journal, writer: new StateWriter(state, observer) };
}

describe('StateJournal.take()', () => {
  it('has nothing to say when nothing changed (unless asked for the small fields anyway)', () => {
    const { writer, journal } = fresh();
    expect(journal.take()).toBeUndefined();
    expect(journal.take(true)).toEqual({ status: 'running', segment: 0, steps: 0, usage: JSON.stringify({ inputTokens: 0, outputTokens: 0, totalTokens: 0, modelCalls: 0, toolCalls: 0 }), stopReason: undefined, error: null });
  });

  it('gives the appended messages and the ledger entries that moved, then only what came after', () => {
    const { state, writer, journal } = fresh();
    writer.beginSegment();
    writer.nextStep();
    writer.keepReply(undefined, reply('', ['c1']));
    writer.callRunning('c1');
    expect(journal.take()).toMatchObject({ segment: 1, steps: 1, messages: { from: 1, items: [JSON.stringify(state.messages[1])] }, calls: [{ id: 'c1', entry: 'running', held: null }] });
    writer.callSettled('c1', result('c1'), true);
    const second = journal.take()!;
    expect(second.messages).toEqual({ from: 2, items: [JSON.stringify(result('c1'))] });
    expect(second.calls).toEqual([{ id: 'c1', entry: 'done', held: null }]);
    expect(second.pendingApprovals).toBeUndefined();
    expect(journal.take()).toBeUndefined();
  });

  it('holds a result of a turn of several calls in the ledger row until the turn ends', () => {
    const { writer, journal } = fresh();
    writer.keepReply(undefined, reply('', ['a', 'b']));
    journal.take();
    writer.callSettled('a', result('a'), false);
    expect(journal.take()!.calls).toEqual([{ id: 'a', entry: 'done', held: JSON.stringify(result('a')) }]);
    writer.callSettled('b', result('b'), false);
    writer.endTurn([{ id: 'a' }, { id: 'b' }]);
    const ended = journal.take()!;
    expect(ended.messages!.items).toHaveLength(2);
    expect(ended.calls!.sort((x, y) => x.id.localeCompare(y.id))).toEqual([{ id: 'a', entry: 'done', held: null }, { id: 'b', entry: 'done', held: null }]);
  });

  it('writes the transcript again from where a rewrite started', () => {
    const { state, writer, journal } = fresh();
    writer.append(reply('one'));
    writer.append(user('two'));
    journal.take();
    writer.setMessages([user('summary'), user('two')]);
    expect(journal.take()!.messages).toEqual({ from: 0, items: state.messages.map((m) => JSON.stringify(m)) });
    // A retried reply withdrawn from below the stored part.
    const first = reply('draft');
    writer.placeReply(undefined, first);
    journal.take();
    writer.withdrawReply(first);
    expect(journal.take()!.messages).toEqual({ from: 2, items: [] });
  });

  it('notices appends and splices that bypassed it (a hook editing ctx.messages)', () => {
    const { state, journal } = fresh();
    state.messages.push(user('pushed by a hook'));
    expect(journal.take()!.messages).toEqual({ from: 1, items: [JSON.stringify(user('pushed by a hook'))] });
    state.messages.splice(0, 1);
    expect(journal.take()!.messages).toEqual({ from: 0, items: [JSON.stringify(user('pushed by a hook'))] });
  });

  it('gives hook states, decisions, pending approvals, children and output when they change', () => {
    const { writer, journal } = fresh();
    writer.setHookState('guard', { n: 1 });
    writer.suspendTurn([{ toolCallId: 'p', toolName: 't', args: {} }]);
    writer.callWaits('c', { state: { inner: true }, approvals: [{ toolCallId: 'c/x', toolName: 't', args: {} }], ids: { 'c/x': 'x' } });
    writer.end('suspended', 'approval', 'waiting');
    const cp = journal.take()!;
    expect(cp.hookState).toEqual([{ name: 'guard', value: '{"n":1}' }]);
    expect(JSON.parse(cp.pendingApprovals!)).toEqual([{ toolCallId: 'p', toolName: 't', args: {} }]);
    expect(JSON.parse(cp.children!)).toEqual({ c: { state: { inner: true }, approvals: { 'c/x': 'x' } } });
    expect(cp.output).toBe('"waiting"');
    expect(cp).toMatchObject({ status: 'suspended', stopReason: 'approval' });
    writer.reopenCall('c');
    // No decision on c to use up: the decisions are not written.
    const reopened = journal.take()!;
    expect(reopened).toMatchObject({ calls: [{ id: 'c', entry: 'pending' }] });
    expect(reopened.decisions).toBeUndefined();
    writer.takeDecisions(new Map([['c', { approval: { toolCallId: 'c', toolName: 't', args: {} }, decision: { approved: true, surface: 'api' } }]]), '2030-01-02T03:04:05.000Z');
    journal.take();
    writer.reopenCall('c');
    expect(journal.take()).toMatchObject({ calls: [{ id: 'c', entry: 'pending' }], decisions: '{}' });
  });

  it("gives the children when a failed nested run is kept for a retry, and when its call settles and drops it", () => {
    const { state, writer, journal } = fresh();
    writer.keepReply(undefined, reply('', ['c']));
    journal.take();
    writer.keepNestedRun('c', { state: { inner: 'failed' }, approvals: {} });
    expect(JSON.parse(journal.take()!.children!)).toEqual({ c: { state: { inner: 'failed' }, approvals: {} } });
    writer.callSettled('c', result('c'), true);
    const settled = journal.take()!;
    expect(JSON.parse(settled.children!)).toEqual({});
    expect(state.children).toEqual({});
    // A call without a nested run leaves the children out.
    writer.keepReply(undefined, reply('', ['d']));
    writer.callSettled('d', result('d'), true);
    expect(journal.take()!.children).toBeUndefined();
  });

  it('records nothing once closed, but its failure', () => {
    const { writer, journal } = fresh();
    writer.fail({ code: 'hook_failed', message: 'boom' });
    writer.append(user('late'));
    writer.callRunning('late');
    const cp = journal.take()!;
    expect(cp).toMatchObject({ status: 'failed', error: '{"code":"hook_failed","message":"boom"}' });
    expect(cp.messages).toBeUndefined();
    expect(cp.calls).toBeUndefined();
  });
});

describe('step ends: the writer\'s own', () => {
  const state = () => newState('r', 's', { name: 'a', id: 'a', toolsFingerprint: 'f' }, [user('hi')]);

  it('gives nothing to wait for in a run without an observer', () => {
    const writer = new StateWriter(state());
    writer.keepReply(undefined, reply('', ['c1']));
    expect(writer.callRunning('c1')).toBeUndefined();
    expect(writer.callSettled('c1', result('c1'), true)).toBeUndefined();
    expect(writer.callWaits('c2')).toBeUndefined();
  });

  it('ends a step when a call is entered, settles or waits, and the step is over once the observer says so', async () => {
    const run = state();
    const journal = new StateJournal(run);
    const written: unknown[] = [];
    let release!: () => void;
    const writer = new StateWriter(run, {
      changed: (part, key) => journal.changed(part, key),
      stepEnds: () => {
        written.push(journal.take());
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    writer.beginSegment();
    writer.keepReply(undefined, reply('', ['c1', 'c2']));
    let over = false;
    const entered = writer.callRunning('c1')!.then(() => (over = true));
    expect(written).toMatchObject([{ calls: [{ id: 'c1', entry: 'running' }, { id: 'c2', entry: 'pending' }] }]);
    await Promise.resolve();
    expect(over).toBe(false);
    release();
    await entered;
    expect(over).toBe(true);
    const settled = writer.callSettled('c1', result('c1'), false)!;
    release();
    await settled;
    const waits = writer.callWaits('c2', { state: { inner: 1 }, approvals: [{ toolCallId: 'c2/x', toolName: 't', args: {} }], ids: { 'c2/x': 'x' } })!;
    release();
    await waits;
    expect(written.slice(1)).toMatchObject([{ calls: [{ id: 'c1', entry: 'done', held: JSON.stringify(result('c1')) }] }, { calls: [{ id: 'c2', entry: 'pending' }], children: JSON.stringify({ c2: { state: { inner: 1 }, approvals: { 'c2/x': 'x' } } }) }]);
  });

  it('does not end a step for writes that are not step ends', () => {
    let ends = 0;
    const writer = new StateWriter(state(), { changed: () => undefined, stepEnds: async () => void ends++ });
    writer.beginSegment();
    writer.nextStep();
    writer.keepReply(undefined, reply('', ['c1']));
    writer.countModelCall({ inputTokens: 1, outputTokens: 1 });
    writer.setHookState('h', 1);
    writer.end('completed', 'final', 'done');
    expect(ends).toBe(0);
  });
});
