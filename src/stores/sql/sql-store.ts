import type { Checkpoint } from '../run-store.js';
import type { RunState } from '../../core/vocabulary/state.js';
import { checkRunId, parseFilter, parseReadEvents, parseWaitForEvents, retentionStatuses } from '../store-options.js';
import type { ClaimedRun, ClaimOutcome, ClaimRequest, CreateOutcome, EventLogStore, EventPage, Lease, LoggedEvent, NewRun, QuarantinedRun, ReadEventsOptions, RetentionPolicy, RunFilter, RunStore, RunSummary, StoreStats, WaitForEventsOptions } from '../run-store.js';
import { EventWaiters, waitForArrival } from '../event-waiters.js';
import { appendEvents, eventTail, lastOffset, readEvents } from './event-ops.js';
import { deleteRun, deleteSession, PRUNE_BATCH, pruneBatch } from './delete-ops.js';
import type { KeyValueStore } from '../key-values.js';
import { SqlKeyValues } from './kv-ops.js';
import { clockDialect, withClock, type Dialect, type Op } from './query.js';
import { checkedClock, systemClock, type Clock } from '../clock.js';
import { listRuns, loadRun, sessionHead } from './read-ops.js';
import { stepCheckpoint } from './step-ops.js';
import { checkpoint, claimExpired, claimRun, createRun, renew } from './write-ops.js';

/** How a write is to be committed. */
export interface WriteOptions {
  /** The commit must survive a power loss, not only the process dying: it stores a tool call `running` before the tool's effect. */
  durable?: boolean;
}

/** How a driver runs operations: each in one transaction, a write one that takes the write lock at once. */
export interface SqlRunner {
  /**
   * Run a writing operation in one transaction (all of it, or nothing). `op` makes the
   * operation, so a driver may run it again after a transient conflict (a deadlock).
   */
  write<T>(op: () => Op<T>, options?: WriteOptions): Promise<T>;
  /** Run a reading operation on one consistent snapshot. */
  read<T>(op: () => Op<T>): Promise<T>;
  readonly stats: StoreStats;
  close(): Promise<void>;
}

/**
 * How a driver hears that another process appended to a run's log (PostgreSQL: LISTEN for the
 * NOTIFY each append sends). Without it, followers look at the run's row every `pollMs`.
 */
export interface EventNotices {
  /** Start receiving notices, if not yet: resolves once they are received; each calls `wake(runId)`. */
  listen(wake: (runId: string) => void): Promise<void>;
  close(): Promise<void>;
}

/** How followers of the store's event logs learn of new events. */
export interface EventWatch {
  /** Other processes' appends are noticed (they are looked for only at each timeout)… */
  notices?: EventNotices;
  /** …or found by looking this often (ms). */
  pollMs: number;
}

const DURABLE: WriteOptions = { durable: true };

/**
 * `runner` running every operation with "now" bound to `clock`'s time (see `clockDialect`).
 */
function clockedRunner(runner: SqlRunner, clock: Clock): SqlRunner {
  return {
    write: (op, options) => runner.write(() => withClock(op(), clock), options),
    read: (op) => runner.read(() => withClock(op(), clock)),
    get stats() {
      return runner.stats;
    },
    close: () => runner.close(),
  };
}

/** A run store over SQL: the operations of this folder, run by a driver's runner. */
export class SqlStore implements EventLogStore {
  /** The store's key-value table (koagent_kv), shared by every process that opens the database. */
  readonly keyValues: KeyValueStore;
  /** The `clock` option, or the system clock (then the database's clock times leases, and this one only the timers). */
  readonly clock: Clock;
  private readonly dialect: Dialect;
  private readonly runner: SqlRunner;
  /** Followers of this process waiting for a run's events. */
  readonly #waiters = new EventWaiters();

  /** With `clock`, the store's times are that clock's, sent with each statement; without, the database's. */
  constructor(
    readonly kind: 'sqlite' | 'postgres',
    readonly leaseMs: number,
    dialect: Dialect,
    runner: SqlRunner,
    private readonly retention: RetentionPolicy | undefined,
    private readonly watch: EventWatch = { pollMs: 20 },
    clock?: Clock,
  ) {
    this.clock = clock ?? systemClock;
    this.dialect = clock === undefined ? dialect : clockDialect(dialect);
    this.runner = clock === undefined ? runner : clockedRunner(runner, checkedClock(clock, `${kind}Store`));
    this.keyValues = new SqlKeyValues(this.runner, this.dialect);
  }

  get stats(): StoreStats {
    return this.runner.stats;
  }

  createRun(run: NewRun): Promise<CreateOutcome> {
    return this.runner.write(() => createRun(this.dialect, run, this.leaseMs));
  }

  claimRun(runId: string, claim: ClaimRequest): Promise<ClaimOutcome> {
    return this.runner.write(() => claimRun(this.dialect, runId, claim, this.leaseMs));
  }

  claimExpired(agentName: string, owner: string, runId?: string): Promise<ClaimedRun | QuarantinedRun | undefined> {
    return this.runner.write(() => claimExpired(this.dialect, agentName, owner, this.leaseMs, runId));
  }

  async checkpoint(lease: Lease, cp: Checkpoint, final: boolean): Promise<void> {
    await this.#checkpoint(lease, cp, final);
    if (cp.events !== undefined && cp.events.length > 0) this.#waiters.wake(lease.runId);
  }

  async #checkpoint(lease: Lease, cp: Checkpoint, final: boolean): Promise<void> {
    const { dialect, leaseMs } = this;
    // A `running` mark is what keeps a tool from running twice: it must outlast a power loss.
    const options = cp.calls?.some((call) => call.entry === 'running') === true ? DURABLE : undefined;
    // An ordinary step first, in its fewest statements; what it leaves is written the general way:
    // in SQLite in the same transaction, in PostgreSQL (whose step is a statement alone) in the next.
    if (dialect.name === 'sqlite') {
      return this.runner.write(function* () {
        if (!(yield* stepCheckpoint(dialect, lease, cp, final, leaseMs))) yield* checkpoint(dialect, lease, cp, final, leaseMs);
      }, options);
    }
    if (await this.runner.write(() => stepCheckpoint(dialect, lease, cp, final, leaseMs), options)) return;
    await this.runner.write(() => checkpoint(dialect, lease, cp, final, leaseMs), options);
  }

  renew(lease: Lease): Promise<boolean> {
    return this.runner.write(() => renew(this.dialect, lease, this.leaseMs));
  }

  loadRun(runId: string): Promise<RunState | undefined> {
    return this.runner.read(() => loadRun(runId));
  }

  sessionHead(sessionId: string): Promise<RunState | undefined> {
    return this.runner.read(() => sessionHead(sessionId));
  }

  async listRuns(given: RunFilter = {}): Promise<RunSummary[]> {
    const filter = parseFilter(given);
    return this.runner.read(() => listRuns(filter));
  }

  async deleteRun(runId: string): Promise<boolean> {
    const deleted = await this.runner.write(() => deleteRun(this.dialect, runId));
    this.#waiters.wake(runId);
    return deleted;
  }

  deleteSession(sessionId: string): Promise<number> {
    return this.runner.write(() => deleteSession(this.dialect, sessionId));
  }

  async appendEvents(lease: Lease, events: readonly string[]): Promise<number> {
    const last = await this.runner.write(() => appendEvents(this.dialect, lease, events));
    if (events.length > 0) this.#waiters.wake(lease.runId);
    return last;
  }

  async readEvents(runId: string, options?: ReadEventsOptions): Promise<EventPage> {
    checkRunId(runId, 'store.readEvents(runId, options)');
    const { after, limit } = parseReadEvents(options);
    return this.runner.read(() => readEvents(runId, after, limit));
  }

  async eventTail(runId: string): Promise<LoggedEvent[]> {
    checkRunId(runId, 'store.eventTail(runId)');
    return this.runner.read(() => eventTail(runId));
  }

  async waitForEvents(runId: string, after: number, options?: WaitForEventsOptions): Promise<void> {
    const { signal, timeoutMs } = parseWaitForEvents(runId, after, options);
    const { notices, pollMs } = this.watch;
    let heard = false;
    if (notices !== undefined) {
      // Listening before the first look, so an append between the two is not missed; a listener
      // that cannot connect leaves the follower looking every `pollMs`.
      heard = await notices.listen((id) => this.#waiters.wake(id)).then(() => true, () => false);
    }
    const arrived = async () => ((await this.runner.read(() => lastOffset(runId))) ?? Infinity) > after;
    await waitForArrival(this.#waiters, runId, arrived, { signal, timeoutMs, pollMs: heard ? timeoutMs : pollMs });
  }

  async prune(policy: RetentionPolicy | undefined = this.retention): Promise<number> {
    const { olderThanMs, statuses } = retentionStatuses(policy, 'store.prune()');
    let total = 0;
    // In batches, each its own transaction, so other workers are never kept waiting long.
    for (;;) {
      const deleted = await this.runner.write(() => pruneBatch(this.dialect, olderThanMs, statuses));
      total += deleted;
      if (deleted < PRUNE_BATCH) return total;
    }
  }

  async close(): Promise<void> {
    this.#waiters.wakeAll();
    await this.watch.notices?.close().catch(() => undefined);
    await this.runner.close();
  }
}
