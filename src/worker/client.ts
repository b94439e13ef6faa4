// The client of the workers: starts runs by agent name, waits for them (LISTEN, not a poll
// loop), follows their events, answers approvals, cancels, retries dead runs, moves runs to
// another version, and schedules recurring runs. It needs no agent: only the database.
import type PgBoss from 'pg-boss';
import type { RunInput } from '../core/vocabulary/messages.js';
import { lastAssistantText } from '../core/vocabulary/messages.js';
import { checkDecision } from '../core/vocabulary/decisions.js';
import { newRunId, type ApprovalDecision, type PendingApproval, type RunStatus, type StopReason } from '../core/vocabulary/state.js';
import { EVENTS_CHANNEL, postgresStore } from '../stores/postgres.js';
import { assertStore, hasEventLog, type LoggedEvent, type RunStore } from '../stores/run-store.js';
import { KoagentError } from '../core/vocabulary/errors.js';
import { QueueDb } from './connection.js';
import { dispatchesWhere, enqueueStart, getDispatch, markCancelled, markQueued, sendJob, type Dispatch } from './dispatch.js';
import { checkCallOptions, checkClientOptions, type ClientOptions } from './options.js';
import type { ScheduleSpec } from './schedules.js';
import { CHANNELS, ensureQueue, NOW, prepareSchema, queueName, scheduleQueue } from './schema.js';

/**
 * Options of `client.start`.
 *
 * @example await client.start('teller', 'Refund order 42', { idempotencyKey: request.id, tenant: account.id, context: { userId } })
 *
 * @inline
 */
export interface StartOptions {
  /** Continue this stored session (its history), as `agent.send(input, { sessionId })`. */
  sessionId?: string;
  /** The run context, as JSON: given to every segment of the run (`ctx.context`). */
  context?: unknown;
  metadata?: Record<string, unknown>;
  /** A retried request with the same key (for this agent) starts no second run: it gets the first one's id. */
  idempotencyKey?: string;
  /** Higher first (default 0). */
  priority?: number;
  /** Whose run it is, for the agents' per-tenant limits (default: none). */
  tenant?: string;
  /** Start it on this version of the agent (default: whichever worker of the agent takes it first). */
  version?: string;
  /** Run its segments streaming (`provider.stream`), so followers get text deltas (default false). */
  stream?: boolean;
}

/**
 * A run as the client sees it: the queue's state, and the run's as its last segment left it.
 * `status` is `queued` until a worker starts it, `running` while one runs it, then the run's
 * (`completed`, `suspended`, `failed`), or `dead` (it kept failing: `error`), or `cancelled`.
 *
 * @example const report = await client.wait(runId); if (report.status === 'completed') console.log(report.text);
 */
export interface RunReport {
  runId: string;
  agentName: string;
  version: string | null;
  tenant: string;
  status: 'queued' | 'running' | RunStatus | 'dead' | 'cancelled';
  stopReason?: StopReason;
  error?: { code: string; message: string };
  /** Segments started since the last one that ended well. */
  attempts: number;
  /** When the run is over: its output and the last assistant text (from the store). */
  output?: unknown;
  text?: string;
  /** When it is suspended: the calls waiting for a decision. */
  pendingApprovals?: PendingApproval[];
}

/**
 * The client of a pool of workers (`createClient`).
 *
 * @example const runId = await client.start('teller', 'Hi'); const { text } = await client.wait(runId);
 */
export interface WorkerClient {
  readonly store: RunStore;
  /** Start a run of the agent named `agent`: its id, at once (the run waits in the queue for a worker). */
  start(agent: string, input: RunInput, options?: StartOptions): Promise<string>;
  /** The run's report now, or undefined when the queue never had it. */
  status(runId: string): Promise<RunReport | undefined>;
  /** Wait until the run is not queued or running any more (completed, suspended, failed, dead, cancelled). */
  wait(runId: string, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<RunReport>;
  /**
   * The run's events from the first (or after `after`, the `seq` of the last one seen), then as
   * they happen, until the run settles — read from the run store's event log, so any client
   * follows any run, whichever workers run it.
   */
  events(runId: string, options?: { after?: number; signal?: AbortSignal }): AsyncIterable<LoggedEvent>;
  /** The runs waiting for a human, with their pending approvals (of one agent, or all). */
  approvals(options?: { agent?: string; limit?: number }): Promise<RunReport[]>;
  /**
   * Decide the run's pending approvals: its next segment runs on a free worker, exactly once.
   * Each decision is checked here (a misspelt field is refused at once), and is kept in the
   * run's decision log as given through `worker-client` unless it names its own `surface`.
   */
  answer(runId: string, decisions: Record<string, ApprovalDecision>): Promise<void>;
  /** Cancel the run: a queued or suspended run never runs again; a running one is aborted through its signal. */
  cancel(runId: string): Promise<void>;
  /** The runs in the dead letters (of one agent, or all), newest first. */
  deadLetters(options?: { agent?: string; limit?: number }): Promise<RunReport[]>;
  /** Send a dead run back to the queue, its attempts counted from zero. */
  retry(runId: string): Promise<void>;
  /** Move an agent's runs waiting between segments (suspended, failed, dead) from one version to another: their next segment adopts the state. */
  moveRuns(options: { agent: string; from: string; to: string }): Promise<number>;
  /** Start runs on a cron schedule, under `name` (a second call replaces it). */
  schedule(name: string, spec: ScheduleSpec): Promise<void>;
  /** Stop the schedule `name`: its cron starts no more runs (the runs it started go on). */
  unschedule(name: string): Promise<void>;
  /** Close the client's connections (a pool you gave stays open); the runs it started go on in the workers. */
  close(): Promise<void>;
}

/**
 * Connect a client to the workers' database: it prepares the tables it needs (the run store's,
 * the queue's, pg-boss's), and needs none of the agents.
 *
 * @example const client = await createClient({ connectionString: process.env.DATABASE_URL });
 */
export async function createClient(options: ClientOptions): Promise<WorkerClient> {
  const checked = checkClientOptions(options);
  const db = QueueDb.open(checked, 'createClient');
  let store: RunStore | undefined;
  let boss: PgBoss | undefined;
  try {
    store = checked.store ?? (await postgresStore({ pool: db.pool }));
    assertStore(store, 'createClient: store');
    boss = await prepareSchema(db, () => db.boss({ supervise: false, schedule: false }));
    return new QueueClient(db, boss, store, checked.store === undefined);
  } catch (error) {
    await boss?.stop({ graceful: false, close: false }).catch(() => undefined);
    if (checked.store === undefined) await store?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** Statuses of a run that nothing will change without a human (or a retry). */
const SETTLED = new Set(['completed', 'suspended', 'failed', 'dead', 'cancelled']);

class QueueClient implements WorkerClient {
  readonly #queues = new Set<string>();

  constructor(readonly db: QueueDb, readonly boss: PgBoss, readonly store: RunStore, readonly ownStore: boolean) {}

  async #queue(name: string): Promise<void> {
    if (this.#queues.has(name)) return;
    await ensureQueue(this.db, this.boss, name);
    this.#queues.add(name);
  }

  async start(agent: string, input: RunInput, given?: StartOptions): Promise<string> {
    if (typeof agent !== 'string' || agent === '') throw new TypeError("client.start(agent, input): agent must be the name of an agent a worker runs, e.g. 'teller'");
    if (input === undefined || input === null) throw new TypeError('client.start(agent, input): input is missing: a string, a message, or an array of messages');
    const options = checkCallOptions('start', given, 'client.start(agent, input, options)');
    await this.#queue(queueName(agent, options.version));
    const { runId } = await enqueueStart(this.db, this.boss, {
      runId: newRunId(), agent, input, version: options.version, tenant: options.tenant ?? '', priority: options.priority ?? 0,
      idempotencyKey: options.idempotencyKey, sessionId: options.sessionId, context: options.context, metadata: options.metadata, stream: options.stream === true,
    });
    return runId;
  }

  async status(runId: string): Promise<RunReport | undefined> {
    const row = await getDispatch(this.db, runId);
    return row === undefined ? undefined : this.#report(row);
  }

  async #report(row: Dispatch): Promise<RunReport> {
    const status = row.state === 'settled' ? row.status! : row.state === 'active' ? 'running' : row.state;
    const report: RunReport = { runId: row.runId, agentName: row.agentName, version: row.version, tenant: row.tenant, status, attempts: row.attempts };
    if (row.stopReason !== null) report.stopReason = row.stopReason;
    if (row.error !== null) report.error = row.error;
    if (row.state === 'settled' || row.state === 'cancelled') {
      const state = await this.store.loadRun(row.runId);
      if (state !== undefined) {
        if (state.status === 'completed') Object.assign(report, { output: state.output, text: lastAssistantText(state.messages) });
        if (state.status === 'suspended') report.pendingApprovals = state.pendingApprovals;
      }
    }
    return report;
  }

  async wait(runId: string, given?: { signal?: AbortSignal; timeoutMs?: number }): Promise<RunReport> {
    const { signal, timeoutMs } = checkCallOptions('wait', given, 'client.wait(runId, options)');
    signal?.throwIfAborted();
    const waiting = this.#waitFor(runId, timeoutMs, signal);
    if (signal === undefined) return waiting;
    // The abort rejects at once, whatever the wait is doing (a read under way ends unheeded).
    waiting.catch(() => undefined);
    let onAbort = () => undefined as void;
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', (onAbort = () => reject(signal.reason)), { once: true }));
    try {
      return await Promise.race([waiting, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async #waitFor(runId: string, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<RunReport> {
    const until = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    for (;;) {
      // Listening first, then reading: a settle between the two is not missed.
      const settled = this.#notified(CHANNELS.settled, runId, Math.min(5000, until - Date.now()), signal);
      const report = await this.status(runId);
      if (report === undefined) throw new TypeError(`client.wait(runId): the queue has no run ${runId}; start runs with client.start()`);
      if (SETTLED.has(report.status)) {
        settled.cancel();
        return report;
      }
      await settled.promise;
      signal?.throwIfAborted();
      if (Date.now() >= until) throw new Error(`client.wait(${runId}): the run is still ${report.status} after ${timeoutMs} ms`);
    }
  }

  /** Resolves on the next NOTIFY of one of `channels` with `payload`, after `ms`, or when `signal` aborts (at once if it has). */
  #notified(channels: string | string[], payload: string, ms: number, signal?: AbortSignal): { promise: Promise<void>; cancel(): void } {
    let cancel = () => undefined as void;
    const promise = new Promise<void>((resolve) => {
      const unlisten: (() => void)[] = [];
      let over = false;
      const done = () => {
        over = true;
        clearTimeout(timer);
        for (const off of unlisten) off();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      if (signal?.aborted === true) return done();
      signal?.addEventListener('abort', done, { once: true });
      cancel = done;
      for (const channel of [channels].flat()) {
        this.db.listen(channel, (got) => got === payload && done()).then((off) => (over ? off() : unlisten.push(off)), done);
      }
    });
    return { promise, cancel: () => cancel() };
  }

  async *events(runId: string, given?: { after?: number; signal?: AbortSignal }): AsyncIterable<LoggedEvent> {
    const options = checkCallOptions('events', given, 'client.events(runId, options)');
    const { store } = this;
    if (!hasEventLog(store)) throw new TypeError(`client.events(runId): the client's store (${store.kind}) keeps no event log; use postgresStore()`);
    let after = options.after ?? 0;
    const aborted = () => options.signal?.aborted === true;
    const read = async (limit?: number) => {
      const page = await store.readEvents(runId, { after, ...(limit === undefined ? {} : { limit }) });
      // A run not stored yet (it waits in the queue) has no events; one deleted has lost those seen.
      if (page.deleted === true && after > 0) throw new KoagentError('events_deleted', `client.events(${runId}): the run's events after ${after} are gone: the run was deleted (or pruned) with them`);
      return page.events;
    };
    for (;;) {
      if (aborted()) return;
      // Woken by new events (the store's NOTIFY), and by the run's settling (which follows its segment's last event).
      const arrived = this.#notified([EVENTS_CHANNEL, CHANNELS.settled], runId, 2000, options.signal);
      let batch: LoggedEvent[];
      try {
        batch = await read();
      } catch (error) {
        arrived.cancel();
        throw error;
      }
      for (const logged of batch) {
        after = logged.seq;
        yield logged;
        const { event } = logged;
        if (event.type === 'run.end' && event.status !== 'running' && event.agentPath === undefined) {
          // A failed run the workers retry goes on: follow its next segment too.
          const report = await this.status(runId);
          if (report === undefined || SETTLED.has(report.status)) {
            arrived.cancel();
            return;
          }
        }
      }
      if (aborted()) {
        arrived.cancel();
        return;
      }
      if (batch.length === 0) {
        const report = await this.status(runId);
        if (report === undefined) {
          arrived.cancel();
          throw new TypeError(`client.events(runId): the queue has no run ${runId}`);
        }
        if (report.status === 'dead' || report.status === 'cancelled') return arrived.cancel();
        // Its run.end was read while the worker had not settled it yet: nothing more will come
        // (a segment's events are stored with its end, before the worker settles the run), once the rest is read.
        if (SETTLED.has(report.status)) {
          if ((await read(1)).length === 0) return arrived.cancel();
          arrived.cancel();
          continue;
        }
        await arrived.promise;
      } else arrived.cancel();
    }
  }

  async approvals(given?: { agent?: string; limit?: number }): Promise<RunReport[]> {
    const options = checkCallOptions('list', given, 'client.approvals(options)');
    const suspended = await this.store.listRuns({ status: 'suspended', ...(options.agent !== undefined ? { agentName: options.agent } : {}), limit: options.limit ?? 100 });
    // Only those the queue dispatched and nobody answered yet (a row still `settled`).
    const rows = new Map((await dispatchesWhere(this.db, "run_id = ANY($1) AND state = 'settled'", [suspended.map((run) => run.runId)])).map((row) => [row.runId, row]));
    return suspended.flatMap((run) => {
      const row = rows.get(run.runId);
      return row === undefined ? [] : [{ runId: run.runId, agentName: run.agentName, version: row.version, tenant: row.tenant, status: 'suspended' as const, attempts: row.attempts, pendingApprovals: run.pendingApprovals }];
    });
  }

  async answer(runId: string, given: Record<string, ApprovalDecision>): Promise<void> {
    let decisions = given;
    const where = `client.answer('${runId}', decisions)`;
    if (typeof decisions !== 'object' || decisions === null || Array.isArray(decisions)) throw new TypeError(`${where}: decisions must be an object: { [toolCallId]: true | false | { approved, reason } }`);
    const run = await this.store.loadRun(runId);
    const row = await getDispatch(this.db, runId);
    if (run === undefined || row === undefined) throw new TypeError(`${where}: the queue has no run ${runId}`);
    if (run.status !== 'suspended' || row.state !== 'settled') throw new TypeError(`${where}: the run is not waiting for approval (it is ${row.state === 'settled' ? run.status : row.state}); answer a run client.approvals() lists`);
    const pending = run.pendingApprovals.map((call) => call.toolCallId);
    const unknown = Object.keys(decisions).filter((id) => !pending.includes(id));
    if (unknown.length > 0) throw new TypeError(`${where}: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a pending call of the run (pending: ${pending.join(', ')})`);
    decisions = throughClient(decisions, where);
    await this.#queue(queueName(row.agentName, row.version!));
    const sent = await this.db.tx(async (tx) => {
      // One answer of a segment goes ahead: the row leaves `settled` once.
      if (!(await markQueued(tx, runId, ['settled']))) return false;
      await sendJob(tx, this.boss, queueName(row.agentName, row.version!), { kind: 'resume', runId, agent: row.agentName, decisions, segment: run.segment }, { priority: row.priority, singletonKey: `resume:${runId}:${run.segment}` });
      return true;
    });
    if (!sent) throw new TypeError(`${where}: the run was answered meanwhile (by another client); its next segment is under way`);
  }

  async cancel(runId: string): Promise<void> {
    const row = await getDispatch(this.db, runId);
    if (row === undefined) throw new TypeError(`client.cancel(runId): the queue has no run ${runId}`);
    await this.db.tx(async (tx) => {
      await tx.query(`UPDATE koagent_dispatch SET cancel = true, updated_at = ${NOW} WHERE run_id = $1`, [runId]);
      // A run between segments is cancelled now; a running one by its worker, told by NOTIFY.
      if (row.state === 'settled' || row.state === 'dead') await markCancelled(tx, runId);
      await tx.query('SELECT pg_notify($1, $2)', [CHANNELS.cancel, runId]);
    });
  }

  async deadLetters(given?: { agent?: string; limit?: number }): Promise<RunReport[]> {
    const options = checkCallOptions('list', given, 'client.deadLetters(options)');
    const dead = await dispatchesWhere(this.db, "state = 'dead' AND ($1::text IS NULL OR agent_name = $1) ORDER BY updated_at DESC LIMIT $2", [options.agent ?? null, options.limit ?? 100]);
    return Promise.all(dead.map((row) => this.#report(row)));
  }

  async retry(runId: string): Promise<void> {
    const row = await getDispatch(this.db, runId);
    if (row === undefined || row.state !== 'dead') throw new TypeError(`client.retry(runId): run ${runId} is not in the dead letters (it is ${row?.state ?? 'unknown to the queue'})`);
    const stored = await this.store.loadRun(runId);
    // Not in the store: its start never got that far (its job was lost); it starts again from what its row kept.
    const kind = stored === undefined ? 'start' : stored.status === 'running' ? 'recover' : 'retry';
    const queue = queueName(row.agentName, row.version ?? undefined);
    await this.#queue(queue);
    await this.db.tx(async (tx) => {
      await tx.query(`UPDATE koagent_dispatch SET attempts = 0, updated_at = ${NOW} WHERE run_id = $1`, [runId]);
      await markQueued(tx, runId, ['dead']);
      await sendJob(tx, this.boss, queue, { kind, runId, agent: row.agentName }, { priority: row.priority });
    });
  }

  async moveRuns(given: { agent: string; from: string; to: string }): Promise<number> {
    const { agent, from, to } = checkCallOptions('moveRuns', given, 'client.moveRuns(options)');
    const { rows } = await this.db.query(
      `UPDATE koagent_dispatch SET version = $3, adopt = true, updated_at = ${NOW} WHERE agent_name = $1 AND version = $2 AND state IN ('settled', 'dead') AND status IS DISTINCT FROM 'completed' RETURNING run_id`,
      [agent, from, to],
    );
    return rows.length;
  }

  async schedule(name: string, spec: ScheduleSpec): Promise<void> {
    if (typeof name !== 'string' || name === '') throw new TypeError('client.schedule(name, spec): name must be a non-empty string');
    if (typeof spec !== 'object' || spec === null) throw new TypeError("client.schedule(name, spec): spec must be an object, e.g. { agent: 'reporter', cron: '0 3 * * *', input: 'Write the report' }");
    const { tz, ...data } = checkCallOptions('schedule', spec, 'client.schedule(name, spec)');
    const queue = scheduleQueue(name);
    await this.#queue(queue);
    await this.boss.schedule(queue, data.cron, data, tz === undefined ? {} : { tz });
  }

  async unschedule(name: string): Promise<void> {
    await this.boss.unschedule(scheduleQueue(name));
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: false }).catch(() => undefined);
    if (this.ownStore) await this.store.close().catch(() => undefined);
    await this.db.close();
  }
}

/**
 * The decisions as the queue carries them: each checked now, before anything is queued, and on
 * the record as given through this client unless it names the surface it came through.
 */
function throughClient(decisions: Record<string, ApprovalDecision>, where: string): Record<string, ApprovalDecision> {
  const stamped: Record<string, ApprovalDecision> = {};
  for (const [id, decision] of Object.entries(decisions)) {
    checkDecision(id, decision, (message) => new TypeError(`${where}: ${message}`));
    stamped[id] = typeof decision === 'boolean' ? { approved: decision, surface: 'worker-client' } : { ...decision, surface: decision.surface ?? 'worker-client' };
  }
  return stamped;
}
