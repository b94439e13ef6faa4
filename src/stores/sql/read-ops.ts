// Reading runs back: a state from its rows, a session's latest run, summaries for listings.
import type { LedgerEntry, RunState, RunStatus, StopReason } from '../../core/vocabulary/state.js';
import { assembleState, filterStatuses, summaryOf, type RunRow } from '../records.js';
import { checkTranscript } from '../stored-rows.js';
import type { RunFilter, RunSummary } from '../run-store.js';
import { num, placeholders, sql, text, type Dialect, type Op, type Row } from './query.js';

/** The columns of `koagent_runs` a state is put together from. */
const RUN_COLUMNS = 'identity, status, segment, steps, usage, stop_reason, output, error, pending, decisions, children, message_count';

function runRow(row: Row): RunRow {
  return {
    identity: String(row.identity),
    status: row.status as RunStatus,
    segment: num(row.segment),
    steps: num(row.steps),
    usage: String(row.usage),
    stopReason: text(row.stop_reason) as StopReason | null,
    output: text(row.output),
    error: text(row.error),
    pending: String(row.pending),
    decisions: String(row.decisions),
    children: String(row.children),
  };
}

/**
 * The messages of a run's transcript in [lo, hi), in order. A run's own rows start at its
 * `base_count`; the messages before it are those of its `base_run` (the session's run it
 * continued), and so on up the chain: one recursive query walks it.
 */
export function* transcriptRange(runId: string, lo = 0, hi = 2_147_483_647): Op<[number, string][]> {
  const rows = yield sql(
    `WITH RECURSIVE chain(run_id, lo, hi, base_run) AS (
       SELECT run_id, base_count, message_count, base_run FROM koagent_runs WHERE run_id = $1
       UNION ALL
       SELECT r.run_id, r.base_count, c.lo, r.base_run FROM koagent_runs r JOIN chain c ON r.run_id = c.base_run
     )
     SELECT m.seq, m.message FROM chain c JOIN koagent_messages m ON m.run_id = c.run_id AND m.seq >= c.lo AND m.seq < c.hi
     WHERE m.seq >= $2 AND m.seq < $3 ORDER BY m.seq`,
    runId, lo, hi,
  );
  return rows.map((row) => [num(row.seq), String(row.message)]);
}

/**
 * A run's state as of its last checkpoint, or undefined when the store has no such run. Its rows
 * are checked as they are read (`corrupt_run`, naming the row, when one cannot be read or a
 * transcript row is missing).
 */
export function* loadRun(runId: string): Op<RunState | undefined> {
  const rows = yield sql(`SELECT ${RUN_COLUMNS} FROM koagent_runs WHERE run_id = $1`, runId);
  if (rows.length === 0) return undefined;
  const messages = yield* transcriptRange(runId);
  checkTranscript(runId, num(rows[0].message_count), messages.map(([seq]) => seq));
  const calls = yield sql('SELECT call_id, entry, held FROM koagent_calls WHERE run_id = $1 ORDER BY call_id', runId);
  const hooks = yield sql('SELECT name, value FROM koagent_hook_state WHERE run_id = $1 ORDER BY name', runId);
  return assembleState(
    runId,
    runRow(rows[0]),
    messages.map(([, message]) => message),
    calls.map((c) => [String(c.call_id), c.entry as LedgerEntry, text(c.held)] as const),
    hooks.map((h) => [String(h.name), String(h.value)] as const),
  );
}

/** The state of the latest run of a session. */
export function* sessionHead(sessionId: string): Op<RunState | undefined> {
  const rows = yield sql('SELECT head_run FROM koagent_sessions WHERE session_id = $1', sessionId);
  if (rows.length === 0) return undefined;
  return yield* loadRun(String(rows[0].head_run));
}

/** Summaries of the runs a filter names, the latest change first. */
export function* listRuns(filter: RunFilter): Op<RunSummary[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.agentName !== undefined) where.push(`agent_name = $${params.push(filter.agentName)}`);
  if (filter.sessionId !== undefined) where.push(`session_id = $${params.push(filter.sessionId)}`);
  const statuses = filterStatuses(filter.status);
  if (statuses !== undefined) {
    where.push(`status IN (${placeholders(statuses.length, params.length + 1)})`);
    params.push(...statuses);
  }
  params.push(filter.limit ?? 100);
  const rows = yield sql(
    `SELECT run_id, agent_name, session_id, status, segment, steps, stop_reason, pending, error, created_at, updated_at, lease_expires
     FROM koagent_runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY updated_at DESC, run_id LIMIT $${params.length}`,
    ...params,
  );
  return rows.map((row) => summaryOf(String(row.run_id), String(row.agent_name), String(row.session_id), {
    status: row.status as RunStatus, segment: num(row.segment), steps: num(row.steps), stopReason: text(row.stop_reason) as StopReason | null,
    pending: String(row.pending), error: text(row.error),
  }, { createdAt: num(row.created_at), updatedAt: num(row.updated_at), leaseExpiresAt: num(row.lease_expires) }));
}

/** `now` as the database tells it (for checks made in JavaScript within a transaction). */
export function* dbNow(dialect: Dialect): Op<number> {
  const rows = yield sql(`SELECT ${dialect.now} AS now`);
  return num(rows[0].now);
}
