// A run's events as a client follows them over HTTP: from the store's event log, after an
// offset, until the run's segment is over — and, on the workers, also while the run waits in the
// queue for a worker to take it (first, or again after an answer or a retry).
import { followEvents, pause } from '../stores/follow-events.js';
import type { LoggedEvent } from '../stores/run-store.js';
import type { Parts } from './views.js';

/** Statuses of the queue in which a worker will (still) run the run's next segment. */
const WAITING = new Set(['queued']);

/**
 * The events of run `runId` after offset `after`, in order, each once, until its segment is over
 * (a run the workers will run again goes on being followed) or `signal` aborts.
 */
export async function* runEvents(parts: Parts, runId: string, after: number, signal: AbortSignal): AsyncGenerator<LoggedEvent, void, undefined> {
  const { client, store } = parts;
  let last = after;
  while (!signal.aborted) {
    // Queued (not started, or answered and not taken yet): nothing to read until a worker has it.
    if (client !== undefined) while (!signal.aborted && WAITING.has((await client.status(runId))?.status ?? '')) await pause(100, signal);
    if (signal.aborted) return;
    for await (const logged of followEvents(store, runId, { after: last, signal })) {
      last = logged.seq;
      yield logged;
    }
    if (client === undefined) return;
    // The segment is over in the store; the queue says next whether the run goes on (a retry is queued again).
    let queue = (await client.status(runId))?.status;
    while (!signal.aborted && queue === 'running' && (await store.readEvents(runId, { after: last, limit: 1 })).status !== 'running') {
      await pause(100, signal);
      queue = (await client.status(runId))?.status;
    }
    if (queue !== 'running' && !WAITING.has(queue ?? '')) return;
  }
}
