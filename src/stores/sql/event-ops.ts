// The event log of the SQL stores: a run's events are rows of koagent_run_events keyed by the
// run and their offset (1, 2, 3 … per run). The run's row counts them (`event_count`), so an
// append takes its offsets from the UPDATE that fences it, in the same transaction; a
// checkpoint that carries events appends them the same way (step-ops.ts, write-ops.ts). In
// PostgreSQL each append also NOTIFYs, at commit, so followers in other processes wake.
import type { AgentEvent } from '../../core/vocabulary/events.js';
import type { RunStatus } from '../../core/vocabulary/state.js';
import { leaseLost } from '../records.js';
import type { EventPage, Lease, LoggedEvent } from '../run-store.js';
import { parseStored } from '../stored-rows.js';
import { num, sql, type Dialect, type Op, type Row } from './query.js';

/** The channel of PostgreSQL's NOTIFY for a run with new events (payload: its id). */
export const EVENTS_CHANNEL = 'koagent_run_events';

/** Insert `events` at offsets `first`, `first + 1` … of the run's log (SQLite: one statement each, prepared once). */
export function* insertEvents(d: Dialect, runId: string, first: number, events: readonly string[]): Op<void> {
  if (events.length === 0) return;
  if (d.name === 'postgres') {
    yield sql('INSERT INTO koagent_run_events (run_id, seq, event) SELECT $1, $2 + t.n - 1, t.e FROM unnest($3::text[]) WITH ORDINALITY AS t(e, n)', runId, first, events);
    yield sql(`SELECT pg_notify('${EVENTS_CHANNEL}', $1)`, runId);
    return;
  }
  for (let i = 0; i < events.length; i++) yield sql('INSERT INTO koagent_run_events (run_id, seq, event) VALUES ($1, $2, $3)', runId, first + i, events[i]);
}

/**
 * The CTEs that append `events` to the log of the run a statement's `run` CTE updated (it
 * returns `run_id` and the new `event_count`), and NOTIFY; `param` numbers the parameters. For
 * PostgreSQL's single-statement writes: nothing is written when the fence left `run` empty.
 */
export function eventCtes(events: readonly string[], param: (value: unknown) => number): string {
  if (events.length === 0) return '';
  const count = param(events.length);
  const texts = param(events);
  return `, ev AS (INSERT INTO koagent_run_events (run_id, seq, event) SELECT run.run_id, run.event_count - $${count} + t.n, t.e FROM run, unnest($${texts}::text[]) WITH ORDINALITY AS t(e, n)),
    nt AS (SELECT pg_notify('${EVENTS_CHANNEL}', run.run_id) FROM run)`;
}

/** Append events to a run's log while `lease` holds it (else `lease_lost`); the offset of the last. */
export function* appendEvents(d: Dialect, lease: Lease, events: readonly string[]): Op<number> {
  const update = 'UPDATE koagent_runs SET event_count = event_count + $4 WHERE run_id = $1 AND lease_token = $2 AND lease_owner = $3 RETURNING run_id, event_count';
  const params: unknown[] = [lease.runId, lease.token, lease.owner, events.length];
  if (d.name === 'postgres') {
    // One statement, which the server runs as a transaction of its own: the fence, the rows, the NOTIFY.
    const ctes = eventCtes(events, (value) => params.push(value));
    const rows = yield { ...sql(`WITH run AS (${update})${ctes} SELECT run.event_count AS last${ctes === '' ? '' : ', (SELECT count(*) FROM nt) AS notified'} FROM run`, ...params), alone: true };
    if (rows.length === 0) throw leaseLost(lease.runId);
    return num(rows[0].last);
  }
  const rows = yield sql(update, ...params);
  if (rows.length === 0) throw leaseLost(lease.runId);
  const last = num(rows[0].event_count);
  yield* insertEvents(d, lease.runId, last - events.length + 1, events);
  return last;
}

/** A logged event's row, parsed (a row that is not JSON is a `corrupt_run` error naming it). */
function loggedOf(runId: string, row: Row): LoggedEvent {
  const seq = num(row.seq);
  return { seq, event: parseStored(runId, String(row.event), { table: 'koagent_run_events', key: `seq ${seq}`, column: 'event' }) as AgentEvent };
}

/** The run's events after `after`, at most `limit`, with its status and last offset, on one snapshot. */
export function* readEvents(runId: string, after: number, limit: number): Op<EventPage> {
  const runs = yield sql('SELECT status, event_count FROM koagent_runs WHERE run_id = $1', runId);
  if (runs.length === 0) return { events: [], last: 0, deleted: true };
  const last = num(runs[0].event_count);
  if (after > last) return { events: [], last, deleted: true };
  const rows = after === last ? [] : yield sql('SELECT seq, event FROM koagent_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', runId, after, limit);
  return { events: rows.map((row) => loggedOf(runId, row)), last, status: runs[0].status as RunStatus };
}

/** The events appended after the run's last checkpoint that carried events. */
export function* eventTail(runId: string): Op<LoggedEvent[]> {
  const rows = yield sql(
    'SELECT e.seq, e.event FROM koagent_runs r JOIN koagent_run_events e ON e.run_id = r.run_id AND e.seq > r.events_checkpointed WHERE r.run_id = $1 ORDER BY e.seq',
    runId,
  );
  return rows.map((row) => loggedOf(runId, row));
}

/** The run's last offset, or undefined when the store holds no such run (what a waiting follower looks at). */
export function* lastOffset(runId: string): Op<number | undefined> {
  const rows = yield { ...sql('SELECT event_count FROM koagent_runs WHERE run_id = $1', runId), alone: true };
  return rows.length === 0 ? undefined : num(rows[0].event_count);
}
