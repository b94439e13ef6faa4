// A run's events across processes: the worker running a segment appends them to
// koagent_events (text deltas batched, a few milliseconds at a time) and notifies; a client
// following the run reads what it has not seen yet, so one that joins late starts from the first.
import type { AgentEvent } from '../core/vocabulary/events.js';
import type { QueueDb } from './connection.js';
import { CHANNELS, NOW } from './schema.js';

/** How long events wait to be written together (a burst of text deltas is one statement). */
const BATCH_MS = 10;

/** The events of one segment, on their way to the table, in order. */
export class EventWriter {
  #buffer: string[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(readonly db: QueueDb, readonly runId: string, readonly onError: (error: unknown) => void) {}

  push(event: AgentEvent): void {
    this.#buffer.push(JSON.stringify(event));
    // The end of a segment is written at once: a client waiting for it should not wait a batch.
    if (event.type === 'run.end') void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), BATCH_MS);
  }

  /** Write what is buffered (after any write under way); resolves when it is written. */
  flush(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const events = this.#buffer;
    this.#buffer = [];
    if (events.length === 0) return this.#writing;
    this.#writing = this.#writing.then(() => this.#write(events)).catch(this.onError);
    return this.#writing;
  }

  async #write(events: string[]): Promise<void> {
    await this.db.query(
      `WITH i AS (INSERT INTO koagent_events (run_id, event, at) SELECT $1, e, ${NOW} FROM unnest($2::text[]) WITH ORDINALITY AS t(e, n) ORDER BY n RETURNING id)
       SELECT pg_notify('${CHANNELS.events}', $1) FROM (SELECT 1 FROM i LIMIT 1) AS one`,
      [this.runId, events],
    );
  }
}

/**
 * One event of a run as a follower gets it: its position in the run's log (give it back as
 * `after` to go on from there) and the event, as the agent emitted it.
 *
 * @example for await (const { seq, event } of client.events(runId)) if (event.type === 'text.delta') process.stdout.write(event.delta);
 */
export interface LoggedEvent {
  seq: number;
  event: AgentEvent;
}

/** The events of `runId` after position `after`, oldest first, at most `limit`. */
export async function eventsAfter(db: QueueDb, runId: string, after: number, limit = 500): Promise<LoggedEvent[]> {
  const { rows } = await db.query('SELECT id, event FROM koagent_events WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3', [runId, after, limit]);
  return rows.map((row) => ({ seq: Number(row.id), event: JSON.parse(row.event) as AgentEvent }));
}

/** Delete the events older than `ms`. */
export async function pruneEvents(db: QueueDb, ms: number): Promise<void> {
  await db.query(`DELETE FROM koagent_events WHERE at < ${NOW} - $1`, [ms]);
}
