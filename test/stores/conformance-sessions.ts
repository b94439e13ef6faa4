// What every run store must do with sessions, listings, deletion and retention: run against
// the memory, SQLite and PostgreSQL stores alike.
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, KoagentError, type Message } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';
import type { StoreFactory } from './conformance-runs.js';
import { manualClock } from '../support/clock.js';

/** An agent that answers the Nth message of its session with "reply N", on `store` (resumable: a fresh agent goes on counting). */
function chatty(store: RunStore, replies = 10) {
  return createAgent({ name: 'chat', instructions: 'Chat.', model: mockModel(Array.from({ length: replies }, (_, i) => `reply ${i + 1}`), { resumable: true }), store });
}

const contents = (messages: readonly Message[]) => messages.map((m) => m.content);

async function refusal(promise: Promise<unknown>, code: string): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(KoagentError.is(error) ? error.code : error).toBe(code);
  return (error as Error).message;
}

export function sessionConformance(kind: string, make: StoreFactory): void {
  describe(`${kind} store: sessions, listings, deletion, retention`, () => {
    it('continues a session across agent objects (a restart), storing each message once', async () => {
      const store = await make();
      const long = 'a long message '.repeat(1500);
      await chatty(store).send(long, { sessionId: 'alice' });
      const beforeSecond = store.stats.bytes;
      // A new agent object, as after a restart: the session comes from the store.
      const second = await createAgent({ name: 'chat', instructions: 'Chat.', model: mockModel(['reply 2']), store }).send('two', { sessionId: 'alice' });
      expect(contents(second.messages)).toEqual(['Chat.', long, 'reply 1', 'two', 'reply 2']);
      expect(contents((await store.sessionHead('alice'))!.messages)).toEqual(contents(second.messages));
      expect((await store.loadRun(second.runId))!.messages).toEqual(second.messages);
      // The second run wrote its own messages, not the long one it shares with the first.
      expect(store.stats.bytes - beforeSecond).toBeLessThan(long.length / 4);
      await store.close();
    });

    it('refuses a send while the session waits for approval, or to a session of another agent', async () => {
      const store = await make();
      const model = mockModel([{ toolCalls: [{ id: 'p', name: 'pay', args: {} }] }, 'paid', 'you are welcome']);
      const pay = defineTool({ name: 'pay', description: 'Pay', needsApproval: true, execute: () => 'ok' });
      const agent = createAgent({ name: 'chat', model, tools: [pay], store });
      const paused = await agent.send('pay', { sessionId: 'bob' });
      expect(await refusal(agent.send('again', { sessionId: 'bob' }), 'session_busy')).toMatch(`finish it with agent.resume('${paused.runId}', decisions) first`);
      const other = createAgent({ name: 'other', model: mockModel(['hi']), store });
      expect(await refusal(other.send('hi', { sessionId: 'bob' }), 'session_busy')).toMatch('session bob belongs to agent "chat" (id "chat"), not "other" (id "other")');
      await agent.resume(paused.runId, { p: true });
      const thanks = await agent.send('thanks', { sessionId: 'bob' });
      expect(contents(thanks.messages).slice(-2)).toEqual(['thanks', 'you are welcome']);
      await store.close();
    });

    it('lets one of two sends racing to a session go ahead, and refuses the other', async () => {
      const store = await make();
      await chatty(store).send('one', { sessionId: 'race' });
      const results = await Promise.allSettled([chatty(store).send('a', { sessionId: 'race' }), chatty(store).send('b', { sessionId: 'race' })]);
      const refused = results.filter((r) => r.status === 'rejected');
      // Both may also go one after the other, if the first finished before the second loaded the session.
      for (const r of refused) expect((r as PromiseRejectedResult).reason.message).toMatch(/another run was started in session race meanwhile|still running/);
      expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
      await store.close();
    });

    it('keeps a later run\'s transcript when the run it continued rewrites its own (a retried run compacting)', async () => {
      const store = await make();
      const mode = { fail: true, compact: false };
      const flaky = {
        name: 'flaky',
        model(ctx: { setMessages(m: { role: 'system' | 'user'; content: string }[]): void }, next: () => Promise<unknown>) {
          if (mode.fail) throw new Error('model layer down');
          if (mode.compact) ctx.setMessages([{ role: 'system', content: 'compacted' }, { role: 'user', content: 'one' }]);
          return next();
        },
      };
      const agent = createAgent({ name: 'chat', instructions: 'Chat.', model: mockModel(['reply 2', 'reply 1 at last']), store, middleware: [flaky as never] });
      const failed = await agent.send('one', { sessionId: 'd' }).catch((e: { runId: string }) => e);
      mode.fail = false;
      const two = await agent.send('two', { sessionId: 'd' });
      expect(contents(two.messages)).toEqual(['Chat.', 'one', 'two', 'reply 2']);
      mode.compact = true;
      const retried = await agent.resume(failed.runId);
      expect(contents(retried.messages)).toEqual(['compacted', 'one', 'reply 1 at last']);
      expect((await store.loadRun(failed.runId))!.messages).toEqual(retried.messages);
      expect((await store.loadRun(two.runId))!.messages).toEqual(two.messages);
      expect(await store.deleteRun(failed.runId)).toBe(true);
      expect((await store.loadRun(two.runId))!.messages).toEqual(two.messages);
      await store.close();
    });

    it('lists runs by agent, session and status, newest change first', async () => {
      const clock = manualClock();
      const store = await make({ clock });
      const first = await chatty(store).run('one', { sessionId: 'x' });
      await clock.advance(5);
      const second = await chatty(store).run('two', { sessionId: 'y' });
      expect((await store.listRuns({ agentName: 'chat' })).map((r) => r.runId)).toEqual([second.runId, first.runId]);
      expect((await store.listRuns({ sessionId: 'x' })).map((r) => r.runId)).toEqual([first.runId]);
      expect(await store.listRuns({ status: ['suspended', 'failed'] })).toEqual([]);
      expect(await store.listRuns({ agentName: 'chat', limit: 1 })).toHaveLength(1);
      const [summary] = await store.listRuns({ sessionId: 'y' });
      expect(summary).toMatchObject({ agentName: 'chat', sessionId: 'y', status: 'completed', stopReason: 'final', segment: 1, steps: 1, pendingApprovals: [] });
      expect(summary.updatedAt).toBeGreaterThanOrEqual(summary.createdAt);
      await expect(store.listRuns({ limit: 0 })).rejects.toThrow('store.listRuns(filter): limit must be a whole number ≥ 1 (got 0)');
      await expect(store.listRuns({ agent: 'chat' } as never)).rejects.toThrow('store.listRuns(filter): agent is not a field of a run filter; did you mean `agentName`?');
      await store.close();
    });

    it('deletes a run, and a later run of its session keeps the messages it shared', async () => {
      const store = await make();
      const agent = chatty(store);
      const one = await agent.send('one', { sessionId: 'del' });
      const two = await agent.send('two', { sessionId: 'del' });
      const three = await agent.send('three', { sessionId: 'del' });
      expect(await store.deleteRun(one.runId)).toBe(true);
      expect(await store.deleteRun(one.runId)).toBe(false);
      expect(await store.loadRun(one.runId)).toBeUndefined();
      expect((await store.loadRun(three.runId))!.messages).toEqual(three.messages);
      expect(await store.deleteRun(two.runId)).toBe(true);
      expect((await store.loadRun(three.runId))!.messages).toEqual(three.messages);
      // Deleting the session's latest run moves the session back to the latest one left.
      const four = await agent.send('four', { sessionId: 'del' });
      expect(await store.deleteRun(four.runId)).toBe(true);
      expect((await store.sessionHead('del'))!.runId).toBe(three.runId);
      expect(await store.deleteRun(three.runId)).toBe(true);
      expect(await store.sessionHead('del')).toBeUndefined();
      await store.close();
    });

    it('deletes a session with all its runs; refuses while a worker holds one of them', async () => {
      const store = await make();
      const agent = chatty(store);
      await agent.send('one', { sessionId: 'gone' });
      await agent.send('two', { sessionId: 'gone' });
      await agent.send('other', { sessionId: 'kept' });
      const held = await store.createRun({ state: { ...(await store.sessionHead('kept'))!, runId: 'run_held', status: 'running' }, owner: 'w1' });
      expect('lease' in held).toBe(true);
      expect(await refusal(store.deleteSession('kept'), 'session_busy')).toMatch(/run run_held is running and a worker holds its lease/);
      expect(await refusal(store.deleteRun('run_held'), 'session_busy')).toMatch(/run_held/);
      expect(await store.deleteSession('gone')).toBe(2);
      expect(await store.listRuns({ sessionId: 'gone' })).toEqual([]);
      expect(await store.sessionHead('gone')).toBeUndefined();
      expect(await store.deleteSession('gone')).toBe(0);
      await store.close();
    });

    it('prunes finished runs older than the policy says, and never a running one', async () => {
      const clock = manualClock();
      const store = await make({ clock });
      const agent = chatty(store);
      const old = await agent.send('old', { sessionId: 'p' });
      await store.createRun({ state: { ...old.state, runId: 'run_running', sessionId: 'q', status: 'running' }, owner: 'w1' });
      await clock.advance(60);
      const recent = await agent.send('recent', { sessionId: 'p' });
      // Older than 50 ms: the old run (60 ms), not the recent one (0 ms), nor the running one.
      expect(await store.prune({ olderThanMs: 50 })).toBe(1);
      expect(await store.loadRun(old.runId)).toBeUndefined();
      expect((await store.loadRun(recent.runId))!.messages).toEqual(recent.messages);
      expect(await store.loadRun('run_running')).toBeDefined();
      expect(await store.prune({ olderThanMs: 0, statuses: ['failed'] })).toBe(0);
      await expect(store.prune()).rejects.toThrow(/store.prune\(\): give a retention policy \{ olderThanMs, statuses\? \}, here or as the store's `retention` option/);
      await expect(store.prune({ olderThanMs: -1 })).rejects.toThrow(/olderThanMs must be a number of milliseconds ≥ 0 \(got -1\)/);
      await expect(store.prune({ olderThanMs: 0, statuses: ['running' as never] })).rejects.toThrow(/a running run is never pruned/);
      await store.close();
    });
  });
}
