// The state writer of a durable run: each checkpoint holds what changed since the last one,
// and only that.
import { describe, expect, it } from 'vitest';
import { JournaledWriter } from '../../src/durable/journaled-writer.js';
import { StateWriter } from '../../src/core/state/state-writer.js';
import { newState } from '../../src/core/vocabulary/state.js';
import type { Message } from '../../src/index.js';
import type { AssistantMessage, ToolMessage } from '../../src/types.js';

const user = (content: string): Message => ({ role: 'user', content });
const reply = (content: string, calls?: string[]): AssistantMessage => ({ role: 'assistant', content, ...(calls ? { toolCalls: calls.map((id) => ({ id, name: 't', args: {} })) } : {}) });
const result = (id: string): ToolMessage => ({ role: 'tool', toolCallId: id, name: 't', content: 'ok' });

function fresh() {
  const state = newState('r', 's', { name: 'a', id: 'a', toolsFingerprint: 'f' }, [user('hi')]);
  return { state, writer: new JournaledWriter(state) };
}

describe('JournaledWriter.take()', () => {
  it('has nothing to say when nothing changed (unless asked for the small fields anyway)', () => {
    const { writer } = fresh();
    expect(writer.take()).toBeUndefined();
    expect(writer.take(true)).toEqual({ status: 'running', segment: 0, steps: 0, usage: JSON.stringify({ inputTokens: 0, outputTokens: 0, totalTokens: 0, modelCalls: 0, toolCalls: 0 }), stopReason: undefined, error: null });
  });

  it('gives the appended messages and the ledger entries that moved, then only what came after', () => {
    const { state, writer } = fresh();
    writer.beginSegment();
    writer.nextStep();
    writer.keepReply(undefined, reply('', ['c1']));
    writer.callRunning('c1');
    expect(writer.take()).toMatchObject({ segment: 1, steps: 1, messages: { from: 1, items: [JSON.stringify(state.messages[1])] }, calls: [{ id: 'c1', entry: 'running', held: null }] });
    writer.callSettled('c1', result('c1'), true);
    const second = writer.take()!;
    expect(second.messages).toEqual({ from: 2, items: [JSON.stringify(result('c1'))] });
    expect(second.calls).toEqual([{ id: 'c1', entry: 'done', held: null }]);
    expect(second.pendingApprovals).toBeUndefined();
    expect(writer.take()).toBeUndefined();
  });

  it('holds a result of a turn of several calls in the ledger row until the turn ends', () => {
    const { writer } = fresh();
    writer.keepReply(undefined, reply('', ['a', 'b']));
    writer.take();
    writer.callSettled('a', result('a'), false);
    expect(writer.take()!.calls).toEqual([{ id: 'a', entry: 'done', held: JSON.stringify(result('a')) }]);
    writer.callSettled('b', result('b'), false);
    writer.endTurn([{ id: 'a' }, { id: 'b' }]);
    const ended = writer.take()!;
    expect(ended.messages!.items).toHaveLength(2);
    expect(ended.calls!.sort((x, y) => x.id.localeCompare(y.id))).toEqual([{ id: 'a', entry: 'done', held: null }, { id: 'b', entry: 'done', held: null }]);
  });

  it('writes the transcript again from where a rewrite started', () => {
    const { state, writer } = fresh();
    writer.append(reply('one'));
    writer.append(user('two'));
    writer.take();
    writer.setMessages([user('summary'), user('two')]);
    expect(writer.take()!.messages).toEqual({ from: 0, items: state.messages.map((m) => JSON.stringify(m)) });
    // A retried reply withdrawn from below the stored part.
    const first = reply('draft');
    writer.placeReply(undefined, first);
    writer.take();
    writer.withdrawReply(first);
    expect(writer.take()!.messages).toEqual({ from: 2, items: [] });
  });

  it('notices appends and splices that bypassed it (a hook editing ctx.messages)', () => {
    const { state, writer } = fresh();
    state.messages.push(user('pushed by a hook'));
    expect(writer.take()!.messages).toEqual({ from: 1, items: [JSON.stringify(user('pushed by a hook'))] });
    state.messages.splice(0, 1);
    expect(writer.take()!.messages).toEqual({ from: 0, items: [JSON.stringify(user('pushed by a hook'))] });
  });

  it('gives hook states, decisions, pending approvals, children and output when they change', () => {
    const { writer } = fresh();
    writer.setHookState('guard', { n: 1 });
    writer.suspendTurn([{ toolCallId: 'p', toolName: 't', args: {} }]);
    writer.suspendChild('c', { inner: true }, { 'c/x': 'x' });
    writer.end('suspended', 'approval', 'waiting');
    const cp = writer.take()!;
    expect(cp.hookState).toEqual([{ name: 'guard', value: '{"n":1}' }]);
    expect(JSON.parse(cp.pendingApprovals!)).toEqual([{ toolCallId: 'p', toolName: 't', args: {} }]);
    expect(JSON.parse(cp.children!)).toEqual({ c: { state: { inner: true }, approvals: { 'c/x': 'x' } } });
    expect(cp.output).toBe('"waiting"');
    expect(cp).toMatchObject({ status: 'suspended', stopReason: 'approval' });
    writer.reopenCall('c');
    expect(writer.take()).toMatchObject({ calls: [{ id: 'c', entry: 'pending' }], decisions: '{}' });
  });

  it("gives the children when a failed child run is kept for a retry, and when its call settles and drops it", () => {
    const { state, writer } = fresh();
    writer.keepReply(undefined, reply('', ['c']));
    writer.take();
    writer.keepFailedChild('c', { inner: 'failed' });
    expect(JSON.parse(writer.take()!.children!)).toEqual({ c: { state: { inner: 'failed' }, approvals: {} } });
    writer.callSettled('c', result('c'), true);
    const settled = writer.take()!;
    expect(JSON.parse(settled.children!)).toEqual({});
    expect(state.children).toEqual({});
    // A call without a child run leaves the children out.
    writer.keepReply(undefined, reply('', ['d']));
    writer.callSettled('d', result('d'), true);
    expect(writer.take()!.children).toBeUndefined();
  });

  it('records nothing once closed, but its failure', () => {
    const { writer } = fresh();
    writer.fail({ code: 'hook_failed', message: 'boom' });
    writer.append(user('late'));
    writer.callRunning('late');
    const cp = writer.take()!;
    expect(cp).toMatchObject({ status: 'failed', error: '{"code":"hook_failed","message":"boom"}' });
    expect(cp.messages).toBeUndefined();
    expect(cp.calls).toBeUndefined();
  });
});

describe('step boundaries: stored()', () => {
  it('has nothing to wait for in a run without a store', () => {
    const state = newState('r', 's', { name: 'a', id: 'a', toolsFingerprint: 'f' }, [user('hi')]);
    expect(new StateWriter(state).stored()).toBeUndefined();
  });

  it('stores what changed through the durable writer\'s store, and resolves once it is stored', async () => {
    const state = newState('r', 's', { name: 'a', id: 'a', toolsFingerprint: 'f' }, [user('hi')]);
    const written: unknown[] = [];
    let release!: () => void;
    const writer: JournaledWriter = new JournaledWriter(state, () => {
      written.push(writer.take());
      return new Promise<void>((resolve) => (release = resolve));
    });
    writer.beginSegment();
    writer.keepReply(undefined, reply('', ['c1']));
    writer.callRunning('c1');
    let stored = false;
    const boundary = writer.stored()!.then(() => (stored = true));
    expect(written).toMatchObject([{ calls: [{ id: 'c1', entry: 'running' }] }]);
    await Promise.resolve();
    expect(stored).toBe(false);
    release();
    await boundary;
    expect(stored).toBe(true);
  });
});
