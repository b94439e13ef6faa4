// Taking over the work of dead workers as soon as it lapses. Every worker looks, a few times per
// lease, at two things for its agents' versions: dispatch rows whose hold lapsed (a worker holds
// the row of each run whose job it runs, and renews the hold as often as a lease) — each is put
// back on the queue by what the store says of the run; and runs `running` in the store whose
// lease expired (their worker stalled, or died mid-segment) — each gets a recover job. The store
// lets exactly one worker claim a run; pg-boss sends one recover job per run per lease however
// many workers look. Nobody calls recover() by hand.
import { type JobParts } from './job-runner.js';
import { dispatchesWhere, sendJob, settleFromStore, type Dispatch } from './dispatch.js';
import type { Executor } from './connection.js';
import { NOW, queueName } from './schema.js';

/** How many lapsed rows of an agent one sweep takes, at most. */
const SWEEP_TAKES_AT_MOST = 200;
/** How many running runs of an agent one sweep looks at, at most. */
const SWEEP_LISTS_AT_MOST = 1000;

export async function sweep(parts: JobParts, wake: () => void): Promise<number> {
  let sent = 0;
  // Leases are timed by the database server's clock: compare with it, not this host's.
  const { rows: [clock] } = await parts.db.query(`SELECT ${NOW} AS now`);
  for (const { agent, version } of parts.agents.values()) {
    const lapsed = await dispatchesWhere(parts.db,
      `agent_name = $1 AND (version = $2 OR version IS NULL) AND state IN ('queued', 'active') AND held_until > 0 AND held_until < ${NOW} LIMIT ${SWEEP_TAKES_AT_MOST}`,
      [agent.name, version]);
    for (const row of lapsed) if (await takeOver(parts, row)) sent++;
    sent += await expiredLeases(parts, agent.name, version, Number(clock.now));
  }
  if (sent > 0) wake();
  return sent;
}

/** A recover job for each run of the agent's version the store shows running with an expired lease. */
async function expiredLeases(parts: JobParts, agent: string, version: string, now: number): Promise<number> {
  const { db, store } = parts;
  const running = await store.listRuns({ agentName: agent, status: 'running', limit: SWEEP_LISTS_AT_MOST });
  const expired = running.filter((run) => run.leaseExpiresAt < now).map((run) => run.runId);
  if (expired.length === 0) return 0;
  const { rows } = await db.query("SELECT run_id, priority FROM koagent_dispatch WHERE run_id = ANY($1) AND version = $2 AND state IN ('active', 'queued')", [expired, version]);
  for (const row of rows) await db.tx((tx) => sendRecover(tx, parts, agent, version, String(row.run_id), row.priority));
  return rows.length;
}

/** One recover job per run per lease, however many workers send it (pg-boss throttles by key). */
function sendRecover(tx: Executor, parts: JobParts, agent: string, version: string, runId: string, priority: number): Promise<void> {
  return sendJob(tx, parts.boss, queueName(agent, version), { kind: 'recover', runId, agent }, {
    priority, singletonKey: `recover:${runId}`, singletonSeconds: Math.max(1, Math.ceil(parts.store.leaseMs / 1000)),
  });
}

/** Put one lapsed row back on the queue; false when another sweep took it first. */
async function takeOver(parts: JobParts, row: Dispatch): Promise<boolean> {
  const { db, boss, store } = parts;
  const state = await store.loadRun(row.runId).catch(() => 'unreadable' as const);
  return db.tx(async (tx) => {
    // One sweep takes the row: it lets go of the dead holder, if that is still the holder (which stays its last worker).
    const { rows } = await tx.query(`UPDATE koagent_dispatch SET held_until = 0 WHERE run_id = $1 AND worker = $2 AND held_until > 0 AND held_until < ${NOW} RETURNING run_id`, [row.runId, row.worker]);
    if (rows.length === 0) return false;
    const agent = row.agentName;
    if (state === 'unreadable' || state?.status === 'running') {
      // Recovery claims it once its lease expired (a run that cannot be read is stored failed).
      await sendRecover(tx, parts, agent, row.version!, row.runId, row.priority);
    } else if (row.job !== null && (row.state === 'queued' || state === undefined)) {
      // The job never got this far, or its segment had not started: the job again (the store refuses it if it had).
      await sendJob(tx, boss, queueName(agent, row.job.kind === 'start' ? row.version ?? undefined : row.version!), row.job, { priority: row.priority });
    } else if (state !== undefined) {
      // The segment ended in the store; its worker died before it said so.
      await settleFromStore(tx, state);
    }
    return true;
  });
}
