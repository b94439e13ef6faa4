// Following a run's event log from any process: the events after an offset, in order, each
// once, then the live ones as they are appended — whichever worker appends them — until the
// run's segment has ended (or for as long as the caller wants). See docs/streaming.md.
import { z } from 'zod';
import { KoagentError } from '../core/vocabulary/errors.js';
import { optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import { hasEventLog, type EventLogStore, type LoggedEvent, type RunStore } from './run-store.js';
import { checkRunId } from './store-options.js';

/**
 * Options of `followEvents`.
 *
 * @example followEvents(store, runId, { after: lastSeen, signal: request.signal })
 *
 * @inline
 */
export interface FollowEventsOptions {
  /** The offset of the last event seen (default 0: from the first). */
  after?: number;
  /** Stops the following: the iteration ends, without an error. */
  signal?: AbortSignal;
  /**
   * End once the run is not running and every event is read: its segment ended, and its
   * `run.end` was the last event given (default true). `false`: go on, for the run's later
   * segments (a resume, a retry), until `signal` aborts.
   */
  untilSettled?: boolean;
  /** How often to look for new events with a store that cannot wait for them (`waitForEvents`), in ms (default 250). */
  pollMs?: number;
}

const followSchema = optionsSchema({
  after: wholeNumberSchema(0, false, 'must be the offset of an event seen (a whole number ≥ 0; 0 for the first)').optional(),
  signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
  untilSettled: z.boolean({ error: 'must be true or false' }).optional(),
  pollMs: wholeNumberSchema(1, false, 'must be a whole number of milliseconds ≥ 1').optional(),
}, { aliases: { from: 'after', since: 'after', seq: 'after', offset: 'after', cursor: 'after', abortSignal: 'signal', untilEnd: 'untilSettled', untilDone: 'untilSettled', poll: 'pollMs', intervalMs: 'pollMs' } });

/** How many events one read asks for. */
const PAGE = 500;

/**
 * Follow run `runId`'s event log in `store`, from any process: first the events after
 * `options.after`, then each one as it is appended, in order, each once — while the run moves
 * between workers (a recovered run's retractions included). Ends when the run is not running
 * and all is read (see `untilSettled`), or when `signal` aborts. A run whose events are gone
 * (deleted with the run) makes it throw a `KoagentError` with code `events_deleted`.
 *
 * @example for await (const { seq, event } of followEvents(store, runId, { after })) send(seq, event);
 */
export function followEvents(store: RunStore, runId: string, options: FollowEventsOptions = {}): AsyncGenerator<LoggedEvent, void, undefined> {
  // Checked now, not at the first step of the iteration: a mistake throws where the call is.
  if (typeof store !== 'object' || store === null || !hasEventLog(store)) throw new TypeError(`${WHERE}: store keeps no event log (it needs appendEvents, readEvents and eventTail); memoryStore(), sqliteStore() and postgresStore() keep one`);
  checkRunId(runId, WHERE);
  const { after = 0, signal, untilSettled = true, pollMs = 250 } = parseOptions(followSchema, options ?? {}, WHERE);
  return follow(store, runId, after, signal, untilSettled, pollMs);
}

const WHERE = 'followEvents(store, runId, options)';

async function* follow(store: EventLogStore, runId: string, from: number, signal: AbortSignal | undefined, untilSettled: boolean, pollMs: number): AsyncGenerator<LoggedEvent, void, undefined> {
  const where = WHERE;
  let after = from;
  const aborted = () => signal?.aborted === true;
  while (!aborted()) {
    const page = await store.readEvents(runId, { after, limit: PAGE });
    if (page.deleted === true) {
      throw new KoagentError('events_deleted', after === 0
        ? `${where}: the store holds no run ${runId}: it was never stored, or it was deleted (or pruned) with its events`
        : `${where}: the events of run ${runId} after offset ${after} are gone: the run was deleted (or pruned) with its events`);
    }
    for (const logged of page.events) {
      after = logged.seq;
      yield logged;
      if (aborted()) return;
    }
    if (after < page.last) continue;
    if (untilSettled && page.status !== 'running') return;
    if (store.waitForEvents !== undefined) await store.waitForEvents(runId, after, { signal, timeoutMs: 1000 });
    else await pause(pollMs, signal);
  }
}

/** Wait `ms`, or less if `signal` aborts (never rejects: an abort only ends the wait). */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
