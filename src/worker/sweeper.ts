// Taking over the runs of dead workers as soon as their leases expire: every worker looks, a
// few times per lease, for runs of its agents' versions that are `running` in the store with an
// expired lease, and sends one recover job per run (pg-boss throttles them by run, so many
// workers looking at once send one). Whichever worker takes the job claims the run through the
// store, which lets exactly one do so.
import type { JobParts } from './job-runner.js';
import { sendJob } from './dispatch.js';
import { NOW, queueName } from './schema.js';

/** How many running runs of an agent one sweep looks at, at most. */
const SWEEP_LISTS_AT_MOST = 1000;

export async function sweep(parts: JobParts, wake: () => void): Promise<number> {
  const { db, boss, store } = parts;
  const { rows: [clock] } = await db.query(`SELECT ${NOW} AS now`);
  const now = Number(clock.now);
  let sent = 0;
  for (const { agent, version } of parts.agents.values()) {
    const running = await store.listRuns({ agentName: agent.name, status: 'running', limit: SWEEP_LISTS_AT_MOST });
    const expired = running.filter((run) => run.leaseExpiresAt < now).map((run) => run.runId);
    if (expired.length === 0) continue;
    // Only the runs the queue dispatched, of this version, not given up on.
    const { rows } = await db.query("SELECT run_id, priority FROM koagent_dispatch WHERE run_id = ANY($1) AND version = $2 AND state IN ('active', 'queued')", [expired, version]);
    for (const row of rows) {
      const runId = String(row.run_id);
      await db.tx((tx) => sendJob(tx, boss, queueName(agent.name, version), { kind: 'recover', runId, agent: agent.name }, {
        priority: row.priority, singletonKey: `recover:${runId}`, singletonSeconds: Math.max(1, Math.ceil(store.leaseMs / 1000)),
      }));
      sent++;
    }
  }
  if (sent > 0) wake();
  return sent;
}
