// What was asked of each run and where its dispatch stands: one row per run in
// koagent_dispatch. The run store holds the run; this row holds what a worker needs to run its
// segments (input, version, tenant, context) and the queue's view of it (queued, active,
// settled, dead, cancelled). Every change of a row is one statement here.
import type PgBoss from 'pg-boss';
import type { RunInput } from '../core/vocabulary/messages.js';
import type { ApprovalDecision, RunState, RunStatus, StopReason } from '../core/vocabulary/state.js';
import { bossDb, type Executor, type QueueDb } from './connection.js';
import { CHANNELS, NOW, queueName } from './schema.js';

/**
 * Where a run's dispatch stands: `queued` (a job for its next segment waits for a worker),
 * `active` (a worker runs the segment), `settled` (the segment ended; `status` says how),
 * `dead` (it kept failing: see `error`), `cancelled`.
 *
 * @example SELECT state, count(*) FROM koagent_dispatch GROUP BY state
 */
export type DispatchState = 'queued' | 'active' | 'settled' | 'dead' | 'cancelled';

/** One run's dispatch row. */
export interface Dispatch {
  runId: string;
  agentName: string;
  /** The version of the agent the run belongs to: set when a worker first takes it (or when a start pins it). */
  version: string | null;
  tenant: string;
  priority: number;
  /** What the run was started with (its start job only names the run): a run whose job was lost can be started again. */
  input: RunInput | null;
  sessionId: string | null;
  context: unknown;
  metadata: Record<string, unknown> | undefined;
  stream: boolean;
  state: DispatchState;
  /** The run's status when its last segment ended (the store's, as the worker saw it). */
  status: RunStatus | null;
  stopReason: StopReason | null;
  /** Segments started since the last one that ended well; a dead worker's run counts each takeover. */
  attempts: number;
  error: { code: string; message: string } | null;
  cancel: boolean;
  /** The run was moved to another version: its next segment adopts the stored state. */
  adopt: boolean;
  /** The worker that holds the row (it fetched the run's job and runs it), or last held it: kept when it lets go. */
  worker: string | null;
  /** Until when `worker` holds the row unless it renews; 0 when nobody holds it. */
  heldUntil: number;
  /** The job the holder runs: sent again if the holder dies before the store holds the run. */
  job: JobData | null;
  createdAt: number;
  updatedAt: number;
}

/** What a job of the queue asks: start a run (with the input its row keeps), resume one with decisions, take over a dead worker's, retry a failed one. */
export type JobData =
  | { kind: 'start'; runId: string; agent: string }
  | { kind: 'resume'; runId: string; agent: string; decisions: Record<string, ApprovalDecision>; segment: number }
  | { kind: 'recover'; runId: string; agent: string }
  | { kind: 'retry'; runId: string; agent: string };

function parse(text: string | null): any {
  return text === null ? null : JSON.parse(text);
}

function dispatchOf(row: Record<string, any>): Dispatch {
  return {
    runId: row.run_id, agentName: row.agent_name, version: row.version, tenant: row.tenant, priority: row.priority, input: parse(row.input),
    sessionId: row.session_id, context: parse(row.context) ?? undefined, metadata: parse(row.metadata) ?? undefined, stream: row.stream,
    state: row.state, status: row.status, stopReason: row.stop_reason, attempts: row.attempts, error: parse(row.error),
    cancel: row.cancel, adopt: row.adopt, worker: row.worker, heldUntil: Number(row.held_until), job: parse(row.job), createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
  };
}

/** The rows `where` picks (SQL after WHERE, with `$1` … for `values`). */
export async function dispatchesWhere(q: Executor, where: string, values: unknown[]): Promise<Dispatch[]> {
  const { rows } = await q.query(`SELECT * FROM koagent_dispatch WHERE ${where}`, values);
  return rows.map(dispatchOf);
}

export async function getDispatch(q: Executor, runId: string): Promise<Dispatch | undefined> {
  return (await dispatchesWhere(q, 'run_id = $1', [runId]))[0];
}

/** A run to start: its dispatch row and its first job. */
export interface StartRequest {
  runId: string;
  agent: string;
  input: RunInput;
  version?: string;
  tenant: string;
  priority: number;
  idempotencyKey?: string;
  sessionId?: string;
  context?: unknown;
  metadata?: Record<string, unknown>;
  stream: boolean;
}

/**
 * Store the run's row and send its start job, in one transaction: both or neither. With an
 * idempotency key already used for this agent, nothing is sent and the first run's id is the answer.
 */
export async function enqueueStart(db: QueueDb, boss: PgBoss, request: StartRequest): Promise<{ runId: string; created: boolean }> {
  return db.tx(async (tx) => {
    const inserted = await tx.query(
      `INSERT INTO koagent_dispatch (run_id, agent_name, version, tenant, priority, idempotency_key, input, session_id, context, metadata, stream, state, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'queued', ${NOW}, ${NOW}) ON CONFLICT DO NOTHING RETURNING run_id`,
      [request.runId, request.agent, request.version ?? null, request.tenant, request.priority, request.idempotencyKey ?? null, JSON.stringify(request.input), request.sessionId ?? null,
        request.context === undefined ? null : JSON.stringify(request.context), request.metadata === undefined ? null : JSON.stringify(request.metadata), request.stream],
    );
    if (inserted.rows.length === 0) {
      const { rows } = await tx.query('SELECT run_id FROM koagent_dispatch WHERE agent_name = $1 AND idempotency_key = $2', [request.agent, request.idempotencyKey ?? null]);
      if (rows.length === 0) throw new Error(`run id ${request.runId} is taken; start again for a fresh one`);
      return { runId: String(rows[0].run_id), created: false };
    }
    const data: JobData = { kind: 'start', runId: request.runId, agent: request.agent };
    await sendJob(tx, boss, queueName(request.agent, request.version), data, { priority: request.priority });
    return { runId: request.runId, created: true };
  });
}

/**
 * Send a job in transaction `tx`, and wake the workers of its queue when it commits. Its
 * retries and expiry are its queue's, which the workers set (`ensureQueue`).
 */
export async function sendJob(tx: Executor, boss: PgBoss, queue: string, data: JobData, options: PgBoss.SendOptions): Promise<void> {
  await boss.send(queue, data, { ...options, db: bossDb(tx) });
  await tx.query('SELECT pg_notify($1, $2)', [CHANNELS.jobs, queue]);
}

/**
 * Fix the run's version as this worker's, if it has none yet and is not given up on; the row as
 * it is then. One UPDATE of the row, whether it pins or not: it waits for a pin under way in
 * another transaction and returns the row as that left it (a read beside the update would see
 * the row as it was when the statement began, without that version).
 */
export async function pinVersion(q: Executor, runId: string, version: string): Promise<Dispatch | undefined> {
  const pins = "version IS NULL AND state NOT IN ('dead', 'cancelled')";
  const { rows } = await q.query(
    `UPDATE koagent_dispatch SET version = CASE WHEN ${pins} THEN $2 ELSE version END, updated_at = CASE WHEN ${pins} THEN ${NOW} ELSE updated_at END
     WHERE run_id = $1 RETURNING *`,
    [runId, version],
  );
  return rows.length === 0 ? undefined : dispatchOf(rows[0]);
}

/**
 * Hold the rows of jobs just fetched, in the fetch's transaction: a worker holds a row while it
 * runs the job, renewing `held_until`, so a worker that dies is seen when its rows lapse. A row
 * another worker still holds is not taken (the job is a duplicate): the runs held are returned.
 */
export async function holdRuns(tx: Executor, jobs: { runId: string; data: JobData }[], worker: string, leaseMs: number): Promise<Set<string>> {
  const { rows } = await tx.query(
    `UPDATE koagent_dispatch d SET worker = $2, held_until = ${NOW} + $3, job = j.data, updated_at = ${NOW}
     FROM unnest($1::text[], $4::text[]) AS j(run_id, data)
     WHERE d.run_id = j.run_id AND d.state IN ('queued', 'active') AND d.held_until < ${NOW} RETURNING d.run_id`,
    [jobs.map((job) => job.runId), worker, leaseMs, jobs.map((job) => JSON.stringify(job.data))],
  );
  return new Set(rows.map((row) => String(row.run_id)));
}

/** Keep every row `worker` holds for another `leaseMs` (not those it only last held). */
export async function renewHeld(q: Executor, worker: string, leaseMs: number): Promise<void> {
  await q.query(`UPDATE koagent_dispatch SET held_until = ${NOW} + $2 WHERE worker = $1 AND held_until > 0`, [worker, leaseMs]);
}

/** Give the row back, if `worker` holds it, as it is (it stays the row's last worker). */
export async function releaseRun(q: Executor, runId: string, worker: string): Promise<void> {
  await q.query('UPDATE koagent_dispatch SET held_until = 0 WHERE run_id = $1 AND worker = $2', [runId, worker]);
}

/** A worker's segment of the run began (the store gave it the run): one more attempt. */
export async function markActive(q: Executor, runId: string, worker: string, leaseMs: number): Promise<void> {
  await q.query(`UPDATE koagent_dispatch SET state = 'active', worker = $2, held_until = ${NOW} + $3, attempts = attempts + 1, adopt = false, updated_at = ${NOW} WHERE run_id = $1`, [runId, worker, leaseMs]);
}

/** The segment ended with the run `status`: settled, unless a retry or a dead letter follows. */
export async function markSettled(q: Executor, runId: string, status: RunStatus, stopReason: StopReason | undefined, error: { code: string; message: string } | undefined): Promise<void> {
  const keepAttempts = status === 'failed';
  await q.query(
    `WITH u AS (UPDATE koagent_dispatch SET state = 'settled', status = $2, stop_reason = $3, error = $4, held_until = 0${keepAttempts ? '' : ', attempts = 0'}, updated_at = ${NOW} WHERE run_id = $1 RETURNING run_id)
     SELECT pg_notify('${CHANNELS.settled}', run_id) FROM u`,
    [runId, status, stopReason ?? null, error === undefined ? null : JSON.stringify(error)],
  );
}

/** A next segment was asked for (a resume, a retry): the run waits for a worker again. */
export async function markQueued(q: Executor, runId: string, from: DispatchState[], error?: { code: string; message: string }): Promise<boolean> {
  const { rows } = await q.query(
    `UPDATE koagent_dispatch SET state = 'queued', error = COALESCE($3, error), held_until = 0, updated_at = ${NOW} WHERE run_id = $1 AND state = ANY($2) RETURNING run_id`,
    [runId, from, error === undefined ? null : JSON.stringify(error)],
  );
  return rows.length > 0;
}

/** The row as the store's copy of the run says its last segment ended (its worker did not get to say so). */
export function settleFromStore(q: Executor, state: RunState): Promise<void> {
  return markSettled(q, state.runId, state.status, state.stopReason, state.error === undefined ? undefined : { code: state.error.code, message: state.error.message });
}

/** The run kept failing: it is dead, with its last error, until someone retries it. */
export async function markDead(q: Executor, runId: string, error: { code: string; message: string }): Promise<void> {
  await q.query(
    `WITH u AS (UPDATE koagent_dispatch SET state = 'dead', error = $2, held_until = 0, updated_at = ${NOW} WHERE run_id = $1 RETURNING run_id)
     SELECT pg_notify('${CHANNELS.settled}', run_id) FROM u`,
    [runId, JSON.stringify(error)],
  );
}

export async function markCancelled(q: Executor, runId: string, status?: RunStatus, stopReason?: StopReason): Promise<void> {
  await q.query(
    `WITH u AS (UPDATE koagent_dispatch SET state = 'cancelled', status = COALESCE($2, status), stop_reason = COALESCE($3, stop_reason), held_until = 0, updated_at = ${NOW} WHERE run_id = $1 RETURNING run_id)
     SELECT pg_notify('${CHANNELS.settled}', run_id) FROM u`,
    [runId, status ?? null, stopReason ?? null],
  );
}
