// What every run store's event log must do: offsets per run, reads after any offset, appends
// fenced by the lease and written with checkpoints, the tail past the last checkpoint,
// retention, and followers on another connection. Run against the memory, SQLite and PostgreSQL
// stores alike (each store's test file calls it with its own factory).
import { describe, expect, it } from 'vitest';
import { createAgent, KoagentError, type AgentEvent, type RunState } from '../../src/index.js';
import { followEvents, type Checkpoint, type ClaimedRun, type Clock, type Lease } from '../../src/store.js';
import type { EventLogStore, LoggedEvent } from '../../src/stores/run-store.js';
import { mockModel } from '../../src/testing/index.js';
import { storedState } from '../support/durable.js';
import { manualClock } from '../support/clock.js';
import { shownReplies, transcriptReplies } from '../support/event-log.js';

/**
 * Two stores on one database: `writer` and `reader`, as two processes would open it (the memory
 * store: the same object twice). `close` closes both.
 */
export interface EventStores {
  writer: EventLogStore;
  reader: EventLogStore;
  close(): Promise<void>;
}

export type EventStoresFactory = (options?: { leaseMs?: number; retention?: { olderThanMs: number }; clock?: Clock }) => Promise<EventStores>;

const event = (n: number, runId = 'run_log'): string => JSON.stringify({ type: 'tool.start', toolCallId: `c${n}`, toolName: 'add', args: { n }, runId, at: 1 });
const small = (status: RunState['status'] = 'running', extra: Partial<Checkpoint> = {}): Checkpoint => ({ status, segment: 1, steps: 1, usage: '{}', stopReason: status === 'completed' ? 'final' : undefined, error: null, ...extra });
const numbers = (logged: LoggedEvent[]) => logged.map(({ seq, event }) => [seq, (event as { args?: { n: number } }).args?.n]);

async function started(store: EventLogStore, runId: string, sessionId = `s_${runId}`): Promise<Lease> {
  const created = await store.createRun({ state: storedState(runId, sessionId, 'teller'), owner: 'w1' });
  return 'lease' in created ? created.lease : expect.fail(`run ${runId} not created: ${created.refused}`);
}

async function collect(events: AsyncIterable<LoggedEvent>): Promise<LoggedEvent[]> {
  const got: LoggedEvent[] = [];
  for await (const logged of events) got.push(logged);
  return got;
}

export function eventLogConformance(kind: string, make: EventStoresFactory): void {
  describe(`${kind} store: the event log`, () => {
    it('gives each run its own offsets, 1, 2, 3 …, and reads them back after any offset, in order', async () => {
      const { writer, reader, close } = await make();
      const a = await started(writer, 'run_a');
      const b = await started(writer, 'run_b');
      expect(await writer.appendEvents(a, [event(1, 'run_a'), event(2, 'run_a')])).toBe(2);
      expect(await writer.appendEvents(b, [event(1, 'run_b')])).toBe(1);
      expect(await writer.appendEvents(a, [event(3, 'run_a')])).toBe(3);
      const page = await reader.readEvents('run_a');
      expect(numbers(page.events)).toEqual([[1, 1], [2, 2], [3, 3]]);
      expect(page).toMatchObject({ last: 3, status: 'running' });
      expect(page.deleted).toBeUndefined();
      expect(page.events[0].event).toEqual(JSON.parse(event(1, 'run_a')));
      expect(numbers((await reader.readEvents('run_a', { after: 1, limit: 1 })).events)).toEqual([[2, 2]]);
      expect(await reader.readEvents('run_a', { after: 3 })).toEqual({ events: [], last: 3, status: 'running' });
      expect(numbers((await reader.readEvents('run_b')).events)).toEqual([[1, 1]]);
      await close();
    });

    it("appends a checkpoint's events in its transaction, after those before it, and counts the log from there for the tail", async () => {
      const { writer, reader, close } = await make();
      const lease = await started(writer, 'run_log');
      await writer.appendEvents(lease, [event(1), event(2)]);
      await writer.checkpoint(lease, small('running', { events: [event(3)] }), false);
      expect(await reader.eventTail('run_log')).toEqual([]);
      await writer.appendEvents(lease, [event(4)]);
      // A checkpoint without events (a segment that keeps no log) leaves the log as it is.
      await writer.checkpoint(lease, small(), false);
      expect(numbers(await reader.eventTail('run_log'))).toEqual([[4, 4]]);
      // One with an empty list says the log agrees with it.
      await writer.checkpoint(lease, small('running', { events: [] }), false);
      expect(await reader.eventTail('run_log')).toEqual([]);
      expect(numbers((await reader.readEvents('run_log')).events)).toEqual([[1, 1], [2, 2], [3, 3], [4, 4]]);
      await close();
    });

    it("gives a run's status with the events read in the same snapshot: its end and its run.end together", async () => {
      const { writer, reader, close } = await make();
      const lease = await started(writer, 'run_log');
      await writer.appendEvents(lease, [event(1)]);
      const end = JSON.stringify({ type: 'run.end', status: 'completed', stopReason: 'final', runId: 'run_log', at: 2 });
      await writer.checkpoint(lease, small('completed', { events: [end] }), true);
      const page = await reader.readEvents('run_log');
      expect(page).toMatchObject({ last: 2, status: 'completed' });
      expect(page.events.at(-1)!.event).toMatchObject({ type: 'run.end', status: 'completed' });
      // The lease given back, nothing more is appended.
      await expect(writer.appendEvents(lease, [event(9)])).rejects.toMatchObject({ code: 'lease_lost' });
      expect((await reader.readEvents('run_log')).last).toBe(2);
      await close();
    });

    it('refuses the appends of a worker whose lease another worker took over, and writes nothing of them', async () => {
      const clock = manualClock();
      const { writer, reader, close } = await make({ leaseMs: 50, clock });
      const stale = await started(writer, 'run_log');
      await writer.appendEvents(stale, [event(1)]);
      await clock.advance(51);
      const claimed = (await reader.claimExpired('teller', 'w2')) as ClaimedRun;
      expect(claimed.lease.owner).toBe('w2');
      const refused = await writer.appendEvents(stale, [event(2)]).then(() => undefined, (error: unknown) => error);
      expect(KoagentError.is(refused) && refused.code).toBe('lease_lost');
      await expect(writer.checkpoint(stale, small('running', { events: [event(2)] }), false)).rejects.toMatchObject({ code: 'lease_lost' });
      expect(await reader.appendEvents(claimed.lease, [event(3)])).toBe(2);
      expect(numbers((await reader.readEvents('run_log')).events)).toEqual([[1, 1], [2, 3]]);
      await close();
    });

    it("deletes a run's events with the run (deleteRun, deleteSession, prune), and tells a reader who asks for them", async () => {
      const clock = manualClock();
      const { writer, reader, close } = await make({ clock });
      const finish = async (runId: string, sessionId?: string) => {
        const lease = await started(writer, runId, sessionId);
        await writer.appendEvents(lease, [event(1, runId), event(2, runId)]);
        await writer.checkpoint(lease, small('completed', { events: [event(3, runId)] }), true);
      };
      await finish('run_deleted');
      await finish('run_s1', 'session');
      await finish('run_s2', 'session');
      await finish('run_pruned');
      expect(await writer.deleteRun('run_deleted')).toBe(true);
      expect(await writer.deleteSession('session')).toBe(2);
      await clock.advance(5);
      expect(await writer.prune({ olderThanMs: 0 })).toBe(1);
      for (const runId of ['run_deleted', 'run_s1', 'run_s2', 'run_pruned']) {
        expect(await reader.readEvents(runId, { after: 1 })).toEqual({ events: [], last: 0, deleted: true });
        const error = await collect(followEvents(reader, runId, { after: 1 })).then(() => undefined, (e: unknown) => e);
        expect(KoagentError.is(error) && error.code).toBe('events_deleted');
        expect((error as Error).message).toContain(`the events of run ${runId} after offset 1 are gone: the run was deleted (or pruned) with its events`);
      }
      // A new run under a deleted one's id: its log is shorter than what a reader of the old one had seen.
      const again = await started(writer, 'run_deleted');
      await writer.appendEvents(again, [event(1, 'run_deleted')]);
      expect(await reader.readEvents('run_deleted', { after: 3 })).toEqual({ events: [], last: 1, deleted: true });
      expect(numbers((await reader.readEvents('run_deleted')).events)).toEqual([[1, 1]]);
      await close();
    });

    it("counts the events it writes in the store's bytes (StoreStats.bytes), appended or with a checkpoint", async () => {
      const { writer, close } = await make();
      const lease = await started(writer, 'run_log');
      const delta = (n: number) => JSON.stringify({ type: 'text.delta', delta: 'x'.repeat(2000), step: 1, runId: 'run_log', at: n });
      const size = Buffer.byteLength(delta(1));
      let before = writer.stats.bytes;
      await writer.appendEvents(lease, [delta(1), delta(2)]);
      expect(writer.stats.bytes - before).toBeGreaterThanOrEqual(2 * size);
      before = writer.stats.bytes;
      await writer.checkpoint(lease, small('running', { events: [delta(3), delta(4), delta(5)] }), false);
      expect(writer.stats.bytes - before).toBeGreaterThanOrEqual(3 * size);
      await close();
    });

    it('refuses bad arguments, naming them', async () => {
      const { reader, close } = await make();
      await expect(reader.readEvents('run_x', { after: -1 })).rejects.toThrow("store.readEvents(runId, options): after must be the offset of an event seen (a whole number ≥ 0; 0 for the first) (got -1)");
      await expect(reader.readEvents('run_x', { limit: 5000 })).rejects.toThrow('store.readEvents(runId, options): limit must be a whole number from 1 to 1000 (got 5000)');
      await expect(reader.readEvents('run_x', { from: 3 } as never)).rejects.toThrow('store.readEvents(runId, options): from is not an option; did you mean `after`?');
      await expect(reader.readEvents('' as never)).rejects.toThrow("store.readEvents(runId, options): runId must be a run's id, a non-empty string (got an empty string)");
      await expect(reader.waitForEvents!('run_x', 1.5)).rejects.toThrow('store.waitForEvents(runId, after, options): after must be the offset of an event seen (a whole number ≥ 0), not 1.5');
      expect(() => followEvents(reader, 'run_x', { aftr: 2 } as never)).toThrow('followEvents(store, runId, options): aftr is not an option; did you mean `after`?');
      expect(() => followEvents({} as never, 'run_x')).toThrow('followEvents(store, runId, options): store keeps no event log');
      await close();
    });

    it('lets a follower on another connection get the events it missed, then each new one once, in order, until the run ends', async () => {
      const { writer, reader, close } = await make();
      const lease = await started(writer, 'run_log');
      await writer.appendEvents(lease, [event(1), event(2)]);
      const follower = followEvents(reader, 'run_log', { after: 1 });
      expect((await follower.next()).value).toMatchObject({ seq: 2, event: { toolCallId: 'c2' } });
      // Each event is appended while the follower waits for it: it is woken by the append, not by a poll's timing.
      for (let n = 3; n <= 6; n++) {
        const next = follower.next();
        await writer.appendEvents(lease, [event(n)]);
        expect((await next).value).toMatchObject({ seq: n, event: { toolCallId: `c${n}` } });
      }
      const next = follower.next();
      await writer.checkpoint(lease, small('completed', { events: [JSON.stringify({ type: 'run.end', status: 'completed', runId: 'run_log', at: 3 })] }), true);
      expect((await next).value).toMatchObject({ seq: 7, event: { type: 'run.end' } });
      // The run ended and everything is read: the follower ends.
      expect((await follower.next()).done).toBe(true);
      // One that joins late gets it all, and ends too.
      expect((await collect(followEvents(reader, 'run_log'))).map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      await close();
    });

    it("wakes a waiting reader when another connection appends, or when the run is deleted", async () => {
      const { writer, reader, close } = await make();
      const lease = await started(writer, 'run_log');
      // A timeout far beyond the test's: only the append can end the wait.
      const waiting = reader.waitForEvents!('run_log', 0, { timeoutMs: 600_000 });
      await writer.appendEvents(lease, [event(1)]);
      await waiting;
      await writer.checkpoint(lease, small('completed'), true);
      const gone = reader.waitForEvents!('run_log', 1, { timeoutMs: 600_000, signal: AbortSignal.timeout(30_000) });
      await writer.deleteRun('run_log');
      await gone;
      expect((await reader.readEvents('run_log', { after: 1 })).deleted).toBe(true);
      await close();
    });

    it('logs what an agent streams: deltas minus retractions spell its transcript, and run.end comes last, with the end stored', async () => {
      const { writer, reader, close } = await make();
      let failOnce = true;
      const agent = createAgent({ name: 'teller', model: mockModel(['The first answer, streamed word by word.', 'The second answer.']), store: writer }).use({
        name: 'retry-once',
        async model(_ctx, next) {
          const reply = await next();
          if (!failOnce) return reply;
          failOnce = false;
          return next(); // the first attempt's text is retracted, the second streams anew
        },
      });
      const stream = agent.stream('go');
      const live: AgentEvent[] = [];
      for await (const e of stream) live.push(e);
      const result = await stream.result;
      const logged = await collect(followEvents(reader, result.runId));
      const events = logged.map((l) => l.event);
      expect(logged.map((l) => l.seq)).toEqual(logged.map((_, i) => i + 1));
      expect(events.some((e) => e.type === 'text.retract')).toBe(true);
      expect(shownReplies(events)).toEqual(transcriptReplies(result.messages));
      expect(shownReplies(events)).toEqual(shownReplies(live));
      expect(events.map((e) => e.type).filter((t) => !t.startsWith('text.'))).toEqual(live.map((e) => e.type).filter((t) => !t.startsWith('text.')));
      expect(events.at(-1)).toMatchObject({ type: 'run.end', status: 'completed', runId: result.runId });
      expect((await reader.readEvents(result.runId)).status).toBe('completed');
      await close();
    });
  });
}
