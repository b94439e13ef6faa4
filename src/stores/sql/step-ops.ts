// The checkpoint of an ordinary step, in as few statements as the database allows: the fence
// (the lease still held) is the UPDATE's own condition rather than a SELECT before it, and in
// PostgreSQL the whole checkpoint is one statement (data-modifying CTEs), which the server runs
// as a transaction of its own: one round trip per commit instead of six. Anything out of the
// ordinary (a transcript rewritten, a lease lost, in SQLite a status change) is left to the
// general `checkpoint` of write-ops.ts, which this op never replaces, only comes before.
import type { Checkpoint, Lease } from '../run-store.js';
import { sql, type Dialect, type Op } from './query.js';
import { finishedAt, insertMessages, upsertCalls, upsertHooks } from './write-ops.js';
import { eventCtes, insertEvents } from './event-ops.js';

/**
 * Write `cp` if it is an ordinary step's: the lease holds, the transcript only grew from where
 * the store's ends (or did not change) and, in SQLite, the status is the stored one (setting
 * it, even to the same value, would rewrite an index page). True when it was written; false
 * when it wrote nothing and the general checkpoint must be written instead.
 */
export function* stepCheckpoint(d: Dialect, lease: Lease, cp: Checkpoint, final: boolean, leaseMs: number): Op<boolean> {
  const params: unknown[] = [lease.runId, lease.token, lease.owner, cp.segment, cp.steps, cp.usage, cp.stopReason ?? null, cp.error];
  let set = 'segment = $4, steps = $5, usage = $6, stop_reason = $7, error = $8';
  let where = 'run_id = $1 AND lease_token = $2 AND lease_owner = $3';
  // Setting a column to the value it has leaves a PostgreSQL update HOT; it would cost SQLite an index page.
  if (d.name === 'postgres') set += `, status = $${params.push(cp.status)}, finished_at = ${finishedAt(d, cp.status)}`;
  else where += ` AND status = $${params.push(cp.status)}`;
  const messages = cp.messages;
  if (messages !== undefined) {
    const from = params.push(messages.from);
    where += ` AND message_count = $${from}`;
    set += `, message_count = $${params.push(messages.from + messages.items.length)}`;
  }
  for (const [column, value] of [['output', cp.output], ['pending', cp.pendingApprovals], ['decisions', cp.decisions], ['children', cp.children]] as const) {
    if (value !== undefined) set += `, ${column} = $${params.push(value)}`;
  }
  // The events logged since the last write: their offsets follow the log's last, counted on the row.
  const events = cp.events;
  if (events !== undefined) {
    const count = params.push(events.length);
    set += `, event_count = event_count + $${count}, events_checkpointed = event_count + $${count}`;
  }
  set += final ? ', lease_owner = NULL, lease_expires = 0' : `, lease_expires = ${d.now} + $${params.push(leaseMs)}`;
  const update = `UPDATE koagent_runs SET ${set}, updated_at = ${d.now} WHERE ${where} RETURNING run_id${events === undefined ? '' : ', event_count'}`;
  const items = messages?.items ?? [];
  const calls = cp.calls ?? [];
  const hooks = cp.hookState ?? [];
  if (d.name === 'postgres') {
    // Each insert takes the run's id from the UPDATE's rows: when the fence fails, nothing is written.
    let statement = `WITH run AS (${update})`;
    if (items.length > 0) {
      statement += `, m AS (INSERT INTO koagent_messages (run_id, seq, message) SELECT run.run_id, t.s, t.m FROM run, unnest($${params.push(items.map((_, i) => messages!.from + i))}::int[], $${params.push(items)}::text[]) AS t(s, m))`;
    }
    if (calls.length > 0) {
      statement += `, c AS (INSERT INTO koagent_calls (run_id, call_id, entry, held) SELECT run.run_id, t.i, t.e, t.h FROM run, unnest($${params.push(calls.map((c) => c.id))}::text[], $${params.push(calls.map((c) => c.entry))}::text[], $${params.push(calls.map((c) => c.held))}::text[]) AS t(i, e, h)
        ON CONFLICT (run_id, call_id) DO UPDATE SET entry = excluded.entry, held = excluded.held)`;
    }
    if (hooks.length > 0) {
      statement += `, h AS (INSERT INTO koagent_hook_state (run_id, name, value) SELECT run.run_id, t.n, t.v FROM run, unnest($${params.push(hooks.map((h) => h.name))}::text[], $${params.push(hooks.map((h) => h.value))}::text[]) AS t(n, v)
        ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value)`;
    }
    const logged = eventCtes(events ?? [], (value) => params.push(value));
    statement += logged;
    const rows = yield { ...sql(`${statement} SELECT count(*)::int AS applied${logged === '' ? '' : ', (SELECT count(*) FROM nt) AS notified'} FROM run`, ...params), alone: true };
    return Number(rows[0]?.applied ?? 0) > 0;
  }
  const updated = yield sql(update, ...params);
  if (updated.length === 0) return false;
  if (events !== undefined) yield* insertEvents(d, lease.runId, Number(updated[0].event_count) - events.length + 1, events);
  if (messages !== undefined) yield* insertMessages(d, lease.runId, messages.from, items);
  yield* upsertCalls(lease.runId, calls.map((c) => [c.id, c.entry, c.held] as const));
  yield* upsertHooks(lease.runId, hooks.map((h) => [h.name, h.value] as const));
  return true;
}
