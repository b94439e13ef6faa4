// Deleting runs and sessions, and pruning old finished runs, each with its event log. A later
// run of a session that shares the deleted run's messages gets its own copy of them first, so
// no transcript breaks.
import type { RunStatus } from '../../core/vocabulary/state.js';
import { stillRunning } from '../records.js';
import { num, placeholders, sql, text, type Dialect, type Op } from './query.js';
import { dbNow } from './read-ops.js';
import { EVENTS_CHANNEL } from './event-ops.js';

/** Delete one run; false when there is none. Refused while a worker holds its lease. */
export function* deleteRun(d: Dialect, runId: string): Op<boolean> {
  const rows = yield sql(`SELECT status, lease_expires, session_id, base_run, base_count, ${d.now} AS now FROM koagent_runs WHERE run_id = $1${d.lockRow}`, runId);
  if (rows.length === 0) return false;
  const run = rows[0];
  if (run.status === 'running' && num(run.lease_expires) >= num(run.now)) throw stillRunning(runId);
  const baseCount = num(run.base_count);
  // Each run that continued this one keeps the messages it shared: copied to it, and what this
  // run shared with its own base is shared with that base directly.
  const dependents = yield sql('SELECT run_id, base_count FROM koagent_runs WHERE base_run = $1', runId);
  for (const dependent of dependents) {
    const upto = num(dependent.base_count);
    if (upto > baseCount) {
      yield sql('INSERT INTO koagent_messages (run_id, seq, message) SELECT $1, seq, message FROM koagent_messages WHERE run_id = $2 AND seq >= $3 AND seq < $4', dependent.run_id, runId, baseCount, upto);
    }
    yield sql('UPDATE koagent_runs SET base_run = $2, base_count = $3 WHERE run_id = $1', dependent.run_id, text(run.base_run), Math.min(upto, baseCount));
  }
  yield* deleteRows(['$1'], [runId]);
  yield* eventsGone(d, [runId]);
  // A session whose latest run went on from its latest other run; with none, it is gone.
  const sessionId = String(run.session_id);
  const head = yield sql('SELECT head_run FROM koagent_sessions WHERE session_id = $1', sessionId);
  if (head.length > 0 && head[0].head_run === runId) {
    const latest = yield sql('SELECT run_id FROM koagent_runs WHERE session_id = $1 ORDER BY created_at DESC, run_id DESC LIMIT 1', sessionId);
    if (latest.length === 0) yield sql('DELETE FROM koagent_sessions WHERE session_id = $1', sessionId);
    else yield sql(`UPDATE koagent_sessions SET head_run = $2, updated_at = ${d.now} WHERE session_id = $1`, sessionId, latest[0].run_id);
  }
  return true;
}

/** Delete the rows of the runs whose ids `ids` (placeholders) name, with `params`. */
function* deleteRows(ids: string[], params: unknown[]): Op<void> {
  const list = ids.join(', ');
  for (const table of ['koagent_messages', 'koagent_calls', 'koagent_hook_state', 'koagent_run_events', 'koagent_runs']) {
    yield sql(`DELETE FROM ${table} WHERE run_id IN (${list})`, ...params);
  }
}

/** PostgreSQL: tell the followers of deleted runs, at commit, that their events are gone. */
function* eventsGone(d: Dialect, runIds: string[]): Op<void> {
  if (d.name !== 'postgres' || runIds.length === 0) return;
  yield sql(`SELECT pg_notify('${EVENTS_CHANNEL}', id) FROM unnest($1::text[]) AS t(id)`, runIds);
}

/** Delete every run of a session and the session; how many runs. Refused while a worker holds one. */
export function* deleteSession(d: Dialect, sessionId: string): Op<number> {
  const rows = yield sql(`SELECT run_id, status, lease_expires, ${d.now} AS now FROM koagent_runs WHERE session_id = $1${d.lockRow}`, sessionId);
  const busy = rows.find((row) => row.status === 'running' && num(row.lease_expires) >= num(row.now));
  if (busy !== undefined) throw stillRunning(String(busy.run_id));
  if (rows.length > 0) yield* deleteRows(['SELECT run_id FROM koagent_runs WHERE session_id = $1'], [sessionId]);
  yield* eventsGone(d, rows.map((row) => String(row.run_id)));
  yield sql('DELETE FROM koagent_sessions WHERE session_id = $1', sessionId);
  return rows.length;
}

/** How many runs one prune transaction deletes at most, so it never holds the database long. */
export const PRUNE_BATCH = 200;

/** Delete up to `PRUNE_BATCH` runs with one of `statuses` whose last change is older than `olderThanMs`. */
export function* pruneBatch(d: Dialect, olderThanMs: number, statuses: RunStatus[]): Op<number> {
  const cutoff = (yield* dbNow(d)) - olderThanMs;
  const rows = yield sql(
    // A finished run's `finished_at` is its last change (`updated_at`), in an index of finished runs only.
    `SELECT run_id FROM koagent_runs WHERE finished_at IS NOT NULL AND finished_at < $1 AND status IN (${placeholders(statuses.length, 2)}) ORDER BY finished_at LIMIT ${PRUNE_BATCH}`,
    cutoff, ...statuses,
  );
  let deleted = 0;
  for (const row of rows) if (yield* deleteRun(d, String(row.run_id))) deleted++;
  return deleted;
}
