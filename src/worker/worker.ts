// A worker: takes jobs for the agents (and versions) it has from pg-boss, as many at once as its
// concurrency allows, woken by NOTIFY when a job is sent; takes over the runs of dead workers
// as their leases expire; stops gracefully on SIGTERM. See docs/workers.md.
import type PgBoss from 'pg-boss';
import { describe } from '../core/vocabulary/errors.js';
import { workerId } from '../core/vocabulary/state.js';
import { postgresStore } from '../stores/postgres.js';
import { assertStore, hasEventLog, type RunStore } from '../stores/run-store.js';
import { bossDb, QueueDb } from './connection.js';
import { holdRuns, renewHeld, type JobData } from './dispatch.js';
import { runJob, type JobParts, type VersionedAgent, type WorkerCounts } from './job-runner.js';
import { checkWorkerOptions, queueSettings, type WorkerOptions } from './options.js';
import { relaySchedules, startScheduled, type ScheduleSpec } from './schedules.js';
import { CHANNELS, ensureQueue, isScheduleQueue, prepareSchema, queueName } from './schema.js';
import { Slots } from './slots.js';
import { sweep } from './sweeper.js';

/**
 * A running worker (`createWorker`): it takes jobs until `stop()`.
 *
 * @example const worker = await createWorker({ connectionString, agents: [teller] }); process.on('SIGUSR2', () => console.log(worker.counts));
 */
export interface Worker {
  /** This worker's name in leases and dispatch rows (`host:pid:random`). */
  readonly id: string;
  /** Jobs and segments so far, by how they ended. */
  readonly counts: Readonly<WorkerCounts>;
  /** The runs whose segments run here now. */
  running(): string[];
  /**
   * Stop taking jobs, let the segments under way finish for up to `deadlineMs` (default the
   * `shutdownMs` option), then close. Resolves with the runs still running at the deadline:
   * they go on in this process until it exits, and are taken over by other workers once their
   * leases expire after that.
   */
  stop(options?: { deadlineMs?: number }): Promise<{ unfinished: string[] }>;
}

/**
 * Start a worker: it prepares the worker's tables and pg-boss's, and takes start, resume and
 * recover jobs for `agents` at once. With `handleSignals` (default), SIGTERM and SIGINT stop it
 * gracefully and exit the process; a second signal exits at once.
 *
 * @example const worker = await createWorker({ connectionString: process.env.DATABASE_URL, agents: [teller, { agent: helper, version: '2' }], concurrency: 8 });
 */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const checked = checkWorkerOptions(options);
  const db = QueueDb.open(checked, 'createWorker');
  let store: RunStore | undefined;
  let boss: PgBoss | undefined;
  try {
    store = checked.store ?? (await postgresStore({ pool: db.pool, ...(checked.leaseMs !== undefined ? { leaseMs: checked.leaseMs } : {}), ...(checked.clock !== undefined ? { clock: checked.clock } : {}) }));
    assertStore(store, 'createWorker: store');
    if (store.kind !== 'postgres') throw new TypeError(`createWorker: store must be a PostgreSQL store (postgresStore() from koagent/postgres), not a ${store.kind} one: every worker must see every run`);
    if (checked.recordEvents && !hasEventLog(store)) throw new TypeError('createWorker: recordEvents needs a store that keeps an event log (postgresStore() does); or recordEvents: false');
    boss = await prepareSchema(db, () => db.boss({ supervise: true, schedule: true, maintenanceIntervalSeconds: checked.maintenanceIntervalSeconds }));
    const worker = new QueueWorker(checked, db, boss, store, checked.store === undefined);
    await worker.begin();
    return worker;
  } catch (error) {
    await boss?.stop({ graceful: false, close: false }).catch(() => undefined);
    if (checked.store === undefined) await store?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}

class QueueWorker implements Worker {
  readonly id: string;
  readonly parts: JobParts;
  readonly #queues: string[] = [];
  readonly #jobs = new Set<Promise<void>>();
  #stopping = false;
  #stopped: Promise<{ unfinished: string[] }> | undefined;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  readonly #timers: ReturnType<typeof setInterval>[] = [];
  readonly #unlisten: (() => void)[] = [];
  readonly #signals: [NodeJS.Signals, () => void][] = [];

  constructor(readonly options: ReturnType<typeof checkWorkerOptions>, readonly db: QueueDb, readonly boss: PgBoss, readonly store: RunStore, readonly ownStore: boolean) {
    this.id = options.id ?? workerId();
    const agents = new Map<string, VersionedAgent>(options.agents.map((entry) => [entry.agent.name, entry]));
    this.parts = {
      id: this.id, db, boss, store, logger: options.logger, agents,
      slots: new Slots(db, store.leaseMs), limits: options.limits,
      maxAttempts: options.maxAttempts, retryOn: options.retryOn, retryDelayMs: options.retryDelayMs, recordEvents: options.recordEvents,
      running: new Map(), holding: new Set(), counts: { segments: 0, recovered: 0, refused: 0, deferred: 0, dead: 0 },
    };
  }

  get counts(): Readonly<WorkerCounts> {
    return { ...this.parts.counts };
  }

  running(): string[] {
    return [...this.parts.running.keys()];
  }

  async begin(): Promise<void> {
    const { agents } = this.parts;
    for (const { agent, version } of agents.values()) {
      if (this.options.takesNewRuns) this.#queues.push(queueName(agent.name));
      this.#queues.push(queueName(agent.name, version));
    }
    const settings = queueSettings(this.store.leaseMs, this.options.retryLimit);
    for (const queue of this.#queues) await ensureQueue(this.db, this.boss, queue, settings);
    this.#unlisten.push(await this.db.listen(CHANNELS.jobs, (queue) => {
      if (this.#queues.includes(queue)) this.#wakeUp();
    }));
    this.#unlisten.push(await this.db.listen(CHANNELS.cancel, (runId) => this.parts.running.get(runId)?.abort(new Error('the run was cancelled by its client'))));
    const { leaseMs } = this.store;
    // Kept up while stopping too: the segments still running are this worker's until they end.
    this.#every(Math.max(10, Math.floor(leaseMs / 3)), () => Promise.all([this.parts.slots.renew(), renewHeld(this.db, this.id, leaseMs)]), true);
    this.#every(this.options.sweepMs ?? Math.max(20, Math.floor(leaseMs / 2)), () => sweep(this.parts, this.#wakeUp));
    this.#every(this.options.scheduleRefreshMs, () => relaySchedules(this.parts, this.#queues));
    void relaySchedules(this.parts, this.#queues).catch(() => undefined);
    if (this.options.handleSignals) this.#onSignals();
    this.#loop = this.#run();
  }

  /** Run `task` every `ms`, one at a time; a failure is logged, and the next one tries again. */
  #every(ms: number, task: () => Promise<unknown>, whileStopping = false): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || (this.#stopping && !whileStopping)) return;
      busy = true;
      task().catch((error: unknown) => this.parts.logger.warn(`koagent worker ${this.id}: ${describe(error)}`)).finally(() => (busy = false));
    }, ms);
    timer.unref?.();
    this.#timers.push(timer);
  }

  #wakeUp = (): void => {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  };

  /** Take jobs while there is room, round the queues; sleep until a NOTIFY, a finished job, or the poll. */
  async #run(): Promise<void> {
    let next = 0;
    while (!this.#stopping) {
      let room = this.options.concurrency - this.#jobs.size;
      let taken = 0;
      for (let i = 0; i < this.#queues.length && room > 0 && !this.#stopping; i++) {
        const queue = this.#queues[(next + i) % this.#queues.length];
        let jobs: PgBoss.JobWithMetadata<JobData>[];
        try {
          jobs = await this.#fetch(queue, room);
        } catch (error) {
          this.parts.logger.warn(`koagent worker ${this.id}: fetching jobs of ${queue} failed (${describe(error)}); trying again`);
          jobs = [];
        }
        for (const job of jobs ?? []) this.#take(job);
        room -= jobs?.length ?? 0;
        taken += jobs?.length ?? 0;
      }
      next = (next + 1) % Math.max(1, this.#queues.length);
      if (this.#stopping) break;
      // Full, or nothing to do: wait to be woken (a job ends, a job is sent) or for the poll.
      if (taken === 0 || this.#jobs.size >= this.options.concurrency) await this.#sleep(taken === 0 ? this.options.pollMs : 60_000);
    }
  }

  /**
   * Fetch up to `room` jobs of `queue` and hold their runs' rows in the same transaction: a
   * worker that dies right after fetching still holds them, and the sweep sees them lapse.
   */
  #fetch(queue: string, room: number): Promise<PgBoss.JobWithMetadata<JobData>[]> {
    return this.db.tx(async (tx) => {
      const jobs = await this.boss.fetch<JobData>(queue, { batchSize: room, includeMetadata: true, priority: true, db: bossDb(tx) });
      // A recover is not held here: the store's claim decides it, and the segment takes the row.
      const runs = (jobs ?? []).filter((job) => !isScheduleQueue(job.name) && job.data.kind !== 'recover');
      if (runs.length > 0) {
        const held = await holdRuns(tx, runs.map((job) => ({ runId: job.data.runId, data: job.data })), this.id, this.store.leaseMs);
        for (const job of runs) {
          // Of two jobs of one run in a batch, the first holds it.
          if (held.delete(job.data.runId)) this.parts.holding.add(job.id);
        }
      }
      return jobs ?? [];
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #take(job: PgBoss.JobWithMetadata<JobData>): void {
    const work = isScheduleQueue(job.name) ? startScheduled(this.parts, job.id, job.name, job.data as unknown as ScheduleSpec).then(() => 'scheduled') : runJob(this.parts, job);
    const done = work.then(
      (outcome) => this.boss.complete(job.name, job.id, { outcome }),
      (error: unknown) => {
        this.parts.logger.warn(`koagent worker ${this.id}: job ${job.id} (${job.data.kind} of run ${job.data.runId}) failed (${describe(error)}); pg-boss retries it`);
        return this.boss.fail(job.name, job.id, { message: describe(error) });
      },
    ).catch((error: unknown) => this.parts.logger.warn(`koagent worker ${this.id}: recording the end of job ${job.id} failed (${describe(error)})`))
      .finally(() => {
        this.#jobs.delete(done);
        this.#wakeUp();
      });
    this.#jobs.add(done);
  }

  stop(options: { deadlineMs?: number } = {}): Promise<{ unfinished: string[] }> {
    this.#stopped ??= this.#stop(options.deadlineMs ?? this.options.shutdownMs);
    return this.#stopped;
  }

  async #stop(deadlineMs: number): Promise<{ unfinished: string[] }> {
    this.#stopping = true;
    this.#wakeUp();
    for (const [signal, handler] of this.#signals) process.off(signal, handler);
    await this.#loop;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
    await Promise.race([Promise.all(this.#jobs), deadline]);
    clearTimeout(timer);
    const unfinished = this.running();
    if (unfinished.length === 0) {
      for (const timer of this.#timers) clearInterval(timer);
      for (const unlisten of this.#unlisten) unlisten();
      await this.boss.stop({ graceful: false, close: false, wait: true }).catch(() => undefined);
      if (this.ownStore) await this.store.close().catch(() => undefined);
      await this.db.close().catch(() => undefined);
    }
    return { unfinished };
  }

  /** SIGTERM / SIGINT: stop gracefully, then exit; a second one exits at once. */
  #onSignals(): void {
    let received = false;
    const handler = () => {
      if (received) process.exit(1);
      received = true;
      this.options.logger.warn(`koagent worker ${this.id}: stopping (finishing ${this.#jobs.size} job(s), ${this.options.shutdownMs} ms at most; signal again to exit now)`);
      void this.stop().then(({ unfinished }) => {
        if (unfinished.length > 0) this.options.logger.warn(`koagent worker ${this.id}: ${unfinished.length} run(s) were still running; other workers take them over when their leases expire`);
        process.exit(0);
      });
    };
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, handler);
      this.#signals.push([signal, handler]);
    }
  }
}
