// The slots of an agent with a concurrency limit, shared by every worker: a run holds one while
// a worker runs its segment. A slot is leased like the run (a dead worker's slot frees itself
// when its lease runs out), and a tenant may hold only its share, so one tenant cannot take all.
import type { QueueDb } from './connection.js';
import { NOW } from './schema.js';

/**
 * The limit of one agent across all workers: at most `concurrency` segments at once, and at
 * most `perTenant` of them for one tenant key (default: all of them).
 *
 * @example createWorker({ agents: [teller], limits: { teller: { concurrency: 20, perTenant: 5 } } })
 *
 * @inline
 */
export interface AgentLimit {
  concurrency: number;
  perTenant?: number;
}

/** A lock key per agent, so two workers taking a slot of one agent take turns (the two-key form takes two 32-bit integers). */
const LOCK_SPACE = 740_192_904;

/** The slots this worker holds: taken, renewed while their segments run, and given back. */
export class Slots {
  readonly #held = new Set<string>();

  constructor(readonly db: QueueDb, readonly leaseMs: number) {}

  /**
   * Take a slot of `agent` for `runId`: `taken`, or `held` when the run holds one already (a
   * duplicate job, or a dead worker's slot not yet expired: not this job's to give back), or
   * false when the agent (or this tenant's share) is full.
   */
  async take(agent: string, tenant: string, runId: string, limit: AgentLimit): Promise<'taken' | 'held' | false> {
    const taken = await this.db.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_SPACE, agent]);
      await tx.query(`DELETE FROM koagent_slots WHERE agent_name = $1 AND expires_at < ${NOW}`, [agent]);
      const { rows } = await tx.query('SELECT count(*)::int AS total, count(*) FILTER (WHERE tenant = $2)::int AS mine, bool_or(run_id = $3) AS held FROM koagent_slots WHERE agent_name = $1', [agent, tenant, runId]);
      const { total, mine, held } = rows[0];
      if (held === true) return 'held';
      if (total >= limit.concurrency || mine >= (limit.perTenant ?? limit.concurrency)) return false;
      await tx.query(
        `INSERT INTO koagent_slots (run_id, agent_name, tenant, expires_at) VALUES ($1, $2, $3, ${NOW} + $4)
         ON CONFLICT (run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [runId, agent, tenant, this.leaseMs],
      );
      return 'taken';
    });
    if (taken === 'taken') this.#held.add(runId);
    return taken;
  }

  /** A run whose slot was `held` is this worker's now (the store gave it the run): renew and give back its slot. */
  adopt(runId: string): void {
    this.#held.add(runId);
  }

  /** Keep every slot this worker holds (called as often as leases are renewed). */
  async renew(): Promise<void> {
    if (this.#held.size === 0) return;
    await this.db.query(`UPDATE koagent_slots SET expires_at = ${NOW} + $2 WHERE run_id = ANY($1)`, [[...this.#held], this.leaseMs]);
  }

  async release(runId: string): Promise<void> {
    if (!this.#held.delete(runId)) return;
    await this.db.query('DELETE FROM koagent_slots WHERE run_id = $1', [runId]);
  }
}
