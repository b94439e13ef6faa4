// Writing runs: starting one, claiming one (a resume, a recovery), checkpoints, lease renewal.
// Every write checks the fencing token first, on the run's row, so a worker that lost its
// lease writes nothing; in PostgreSQL that SELECT also locks the row until the transaction ends.
import type { Checkpoint } from '../run-store.js';
import type { LedgerEntry } from '../../core/vocabulary/state.js';
import { leaseLost, partsOf, rowOf } from '../records.js';
import type { ClaimedRun, ClaimOutcome, ClaimRequest, CreateOutcome, Lease, NewRun, QuarantinedRun } from '../run-store.js';
import { isCorrupt, quarantine } from '../stored-rows.js';
import { num, sql, type Dialect, type Op } from './query.js';
import { loadRun, transcriptRange } from './read-ops.js';
import { insertEvents } from './event-ops.js';

/** What `finished_at` becomes with `status`: null while running, else now (what retention goes by). */
export function finishedAt(d: Dialect, status: string): string {
  return status === 'running' ? 'NULL' : d.now;
}

/** Insert messages `items` at positions `from`, `from + 1` … of a run's own rows. */
export function* insertMessages(dialect: Dialect, runId: string, from: number, items: readonly string[]): Op<void> {
  if (items.length === 0) return;
  if (dialect.name === 'postgres') {
    // One statement for the lot: the positions and texts as two arrays.
    yield sql('INSERT INTO koagent_messages (run_id, seq, message) SELECT $1, s, m FROM unnest($2::int[], $3::text[]) AS t(s, m)', runId, items.map((_, i) => from + i), items);
    return;
  }
  for (let i = 0; i < items.length; i++) yield sql('INSERT INTO koagent_messages (run_id, seq, message) VALUES ($1, $2, $3)', runId, from + i, items[i]);
}

export function* upsertCalls(runId: string, calls: readonly (readonly [string, LedgerEntry, string | null])[]): Op<void> {
  for (const [id, entry, held] of calls) {
    yield sql('INSERT INTO koagent_calls (run_id, call_id, entry, held) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id, call_id) DO UPDATE SET entry = excluded.entry, held = excluded.held', runId, id, entry, held);
  }
}

export function* upsertHooks(runId: string, hooks: readonly (readonly [string, string])[]): Op<void> {
  for (const [name, value] of hooks) {
    yield sql('INSERT INTO koagent_hook_state (run_id, name, value) VALUES ($1, $2, $3) ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value', runId, name, value);
  }
}

/**
 * Store a new run and lease it. The session moves to it first, by a statement that does so
 * only while the session is as the caller saw it: of two `send`s racing to one session, one
 * goes ahead and the other is refused, with nothing written.
 */
export function* createRun(d: Dialect, run: NewRun, leaseMs: number): Op<CreateOutcome> {
  const { state, owner, base } = run;
  const { runId, sessionId } = state;
  if ((yield sql('SELECT 1 AS found FROM koagent_runs WHERE run_id = $1', runId)).length > 0) return { refused: 'run_exists' };
  let moved;
  if (run.expectHead === undefined) {
    moved = yield sql(`INSERT INTO koagent_sessions (session_id, agent_name, head_run, updated_at) VALUES ($1, $2, $3, ${d.now})
      ON CONFLICT (session_id) DO UPDATE SET head_run = excluded.head_run, updated_at = excluded.updated_at RETURNING session_id`, sessionId, state.agentName, runId);
  } else if (run.expectHead === null) {
    moved = yield sql(`INSERT INTO koagent_sessions (session_id, agent_name, head_run, updated_at) VALUES ($1, $2, $3, ${d.now})
      ON CONFLICT (session_id) DO NOTHING RETURNING session_id`, sessionId, state.agentName, runId);
  } else {
    moved = yield sql(`UPDATE koagent_sessions SET head_run = $2, updated_at = ${d.now} WHERE session_id = $1 AND head_run = $3 RETURNING session_id`, sessionId, runId, run.expectHead);
  }
  if (moved.length === 0) return { refused: 'session_moved' };
  // The messages the run shares with the session's previous run are not written again.
  let shared = 0;
  if (base !== undefined) {
    const rows = yield sql('SELECT message_count FROM koagent_runs WHERE run_id = $1', base.runId);
    if (rows.length > 0) shared = Math.min(base.count, num(rows[0].message_count));
  }
  const row = rowOf(state);
  const parts = partsOf(state, shared);
  yield sql(
    `INSERT INTO koagent_runs (run_id, agent_name, session_id, identity, status, segment, steps, usage, stop_reason, output, error, pending, decisions, children,
       message_count, base_run, base_count, lease_owner, lease_token, lease_expires, created_at, updated_at, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, 1, ${d.now} + $19, ${d.now}, ${d.now}, ${finishedAt(d, row.status)})`,
    runId, state.agentName, sessionId, row.identity, row.status, row.segment, row.steps, row.usage, row.stopReason ?? null, row.output, row.error,
    row.pending, row.decisions, row.children, state.messages.length, shared > 0 ? base!.runId : null, shared, owner, leaseMs,
  );
  yield* insertMessages(d, runId, shared, parts.messages);
  yield* upsertCalls(runId, parts.calls);
  yield* upsertHooks(runId, parts.hooks);
  return { lease: { runId, owner, token: 1 } };
}

/** Claim a suspended or failed run at `claim.segment` for its next segment, with the decisions. */
export function* claimRun(d: Dialect, runId: string, claim: ClaimRequest, leaseMs: number): Op<ClaimOutcome> {
  const rows = yield sql(`SELECT status, segment FROM koagent_runs WHERE run_id = $1${d.lockRow}`, runId);
  if (rows.length === 0) return { refused: 'missing' };
  const status = rows[0].status as 'running' | 'completed' | 'suspended' | 'failed';
  const segment = num(rows[0].segment);
  if (status !== 'suspended' && status !== 'failed') return { refused: 'status', status, segment };
  if (segment !== claim.segment) return { refused: 'segment', status, segment };
  const row = rowOf(claim.state);
  // The identity too: a run adopted by another agent (`agent.runs.adoptState`) is that agent's from now on.
  const claimed = yield sql(
    `UPDATE koagent_runs SET status = 'running', stop_reason = NULL, finished_at = NULL, pending = $2, decisions = $3, children = $4, error = $5, lease_owner = $6,
       lease_token = lease_token + 1, lease_expires = ${d.now} + $7, updated_at = ${d.now}, identity = $8, agent_name = $9 WHERE run_id = $1 RETURNING lease_token`,
    runId, row.pending, row.decisions, row.children, row.error, claim.owner, leaseMs, row.identity, claim.state.agentName,
  );
  return { lease: { runId, owner: claim.owner, token: num(claimed[0].lease_token) } };
}

/**
 * Claim the run of `agentName` whose lease expired longest ago, and load it. A run whose rows
 * cannot be read is not claimed but stored failed (`corrupt_run`), in the same transaction, so
 * the next claim takes the next run.
 */
export function* claimExpired(d: Dialect, agentName: string, owner: string, leaseMs: number, only?: string): Op<ClaimedRun | QuarantinedRun | undefined> {
  const expired = `agent_name = $1 AND status = 'running' AND lease_expires < ${d.now}`;
  const picked = only === undefined
    ? yield sql(`SELECT run_id FROM koagent_runs WHERE ${expired} ORDER BY updated_at, run_id LIMIT 1${d.pickRow}`, agentName)
    : yield sql(`SELECT run_id FROM koagent_runs WHERE run_id = $2 AND ${expired}${d.pickRow}`, agentName, only);
  if (picked.length === 0) return undefined;
  const runId = String(picked[0].run_id);
  let state;
  try {
    state = yield* loadRun(runId);
  } catch (error) {
    if (!isCorrupt(error)) throw error;
    const quarantined = quarantine(error);
    yield sql(`UPDATE koagent_runs SET status = 'failed', error = $2, lease_owner = NULL, lease_expires = 0, updated_at = ${d.now}, finished_at = ${finishedAt(d, 'failed')} WHERE run_id = $1`, runId, JSON.stringify(quarantined));
    return { runId, quarantined };
  }
  const claimed = yield sql(
    `UPDATE koagent_runs SET lease_owner = $2, lease_token = lease_token + 1, lease_expires = ${d.now} + $3, updated_at = ${d.now} WHERE run_id = $1 RETURNING lease_token`,
    runId, owner, leaseMs,
  );
  return { lease: { runId, owner, token: num(claimed[0].lease_token) }, state: state! };
}

/** The run's row, if `lease` still holds it; else the write is refused (`lease_lost`). */
function* fenced(d: Dialect, lease: Lease): Op<{ status: string; messageCount: number; baseCount: number; eventCount: number }> {
  const rows = yield sql(`SELECT status, lease_token, lease_owner, message_count, base_count, event_count FROM koagent_runs WHERE run_id = $1${d.lockRow}`, lease.runId);
  if (rows.length === 0 || num(rows[0].lease_token) !== lease.token || rows[0].lease_owner !== lease.owner) throw leaseLost(lease.runId);
  return { status: String(rows[0].status), messageCount: num(rows[0].message_count), baseCount: num(rows[0].base_count), eventCount: num(rows[0].event_count) };
}

/**
 * Runs that share this run's messages from position `from` on are given their own copy of
 * those messages before this run rewrites them (a rare event: a resumed run compacting a
 * transcript a later run of its session started from).
 */
function* detachDependents(d: Dialect, runId: string, from: number): Op<void> {
  const dependents = yield sql('SELECT run_id, base_count FROM koagent_runs WHERE base_run = $1 AND base_count > $2', runId, from);
  for (const dependent of dependents) {
    const upto = num(dependent.base_count);
    const rows = yield* transcriptRange(runId, from, upto);
    yield* insertMessages(d, String(dependent.run_id), from, rows.map(([, message]) => message));
    yield sql('UPDATE koagent_runs SET base_count = $2 WHERE run_id = $1', dependent.run_id, from);
  }
}

/** Write one checkpoint: what the step changed, and the lease renewed (or given back when `final`). */
export function* checkpoint(d: Dialect, lease: Lease, cp: Checkpoint, final: boolean, leaseMs: number): Op<void> {
  const { runId } = lease;
  const stored = yield* fenced(d, lease);
  let { messageCount, baseCount } = stored;
  if (cp.messages !== undefined) {
    const { from, items } = cp.messages;
    if (from < messageCount) {
      yield* detachDependents(d, runId, from);
      yield sql('DELETE FROM koagent_messages WHERE run_id = $1 AND seq >= $2', runId, from);
      if (from < baseCount) baseCount = from;
    }
    yield* insertMessages(d, runId, from, items);
    messageCount = from + items.length;
  }
  const params: unknown[] = [runId, cp.segment, cp.steps, cp.usage, cp.stopReason ?? null, cp.error, messageCount, baseCount];
  let set = 'segment = $2, steps = $3, usage = $4, stop_reason = $5, error = $6, message_count = $7, base_count = $8';
  // The status only when it changes: it is in the indexes, which a step then need not touch.
  for (const [column, value] of [['status', cp.status === stored.status ? undefined : cp.status], ['output', cp.output], ['pending', cp.pendingApprovals], ['decisions', cp.decisions], ['children', cp.children]] as const) {
    if (value !== undefined) set += `, ${column} = $${params.push(value)}`;
  }
  if (cp.status !== stored.status) set += `, finished_at = ${finishedAt(d, cp.status)}`;
  if (cp.events !== undefined) {
    const count = params.push(stored.eventCount + cp.events.length);
    set += `, event_count = $${count}, events_checkpointed = $${count}`;
  }
  set += final ? ', lease_owner = NULL, lease_expires = 0' : `, lease_expires = ${d.now} + $${params.push(leaseMs)}`;
  yield sql(`UPDATE koagent_runs SET ${set}, updated_at = ${d.now} WHERE run_id = $1`, ...params);
  if (cp.calls !== undefined) yield* upsertCalls(runId, cp.calls.map((c) => [c.id, c.entry, c.held] as const));
  if (cp.hookState !== undefined) yield* upsertHooks(runId, cp.hookState.map((h) => [h.name, h.value] as const));
  if (cp.events !== undefined) yield* insertEvents(d, runId, stored.eventCount + 1, cp.events);
}

/** Extend a lease; false when it no longer holds. */
export function* renew(d: Dialect, lease: Lease, leaseMs: number): Op<boolean> {
  const rows = yield sql(
    `UPDATE koagent_runs SET lease_expires = ${d.now} + $4 WHERE run_id = $1 AND lease_token = $2 AND lease_owner = $3 AND status = 'running' RETURNING run_id`,
    lease.runId, lease.token, lease.owner, leaseMs,
  );
  return rows.length > 0;
}
