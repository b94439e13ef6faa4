import { memoryKeyValues, type KeyValueStore } from './key-values.js';
import type { Checkpoint } from './run-store.js';
import type { LedgerEntry, RunState } from '../core/vocabulary/state.js';
import { applyToRow, assembleState, filterStatuses, leaseLost, partsOf, rowOf, stillRunning, summaryOf, type RunRow } from './records.js';
import { isCorrupt, parseStored, quarantine } from './stored-rows.js';
import { checkRunId, DEFAULT_LEASE_MS, memoryStoreSchema, parseFilter, parseReadEvents, parseStoreOptions, parseWaitForEvents, retentionStatuses } from './store-options.js';
import { checkedClock, systemClock, type Clock } from './clock.js';
import type { ClaimedRun, ClaimOutcome, ClaimRequest, CreateOutcome, EventLogStore, EventPage, Lease, LoggedEvent, NewRun, QuarantinedRun, ReadEventsOptions, RetentionPolicy, RunFilter, RunStore, RunSummary, StoreStats, WaitForEventsOptions } from './run-store.js';
import { EventWaiters, waitForArrival } from './event-waiters.js';

/**
 * Options of `memoryStore`.
 *
 * @example memoryStore({ leaseMs: 200, clock: testClock })
 *
 * @inline
 */
export interface MemoryStoreOptions {
  /** How long a lease lasts unless renewed (default 30 s). */
  leaseMs?: number;
  /**
   * The store's clock (default `systemClock`): its leases, expiries and retention go by it, and
   * so do the lease renewals and recovery waits of the runs it holds. Tests move it to expire leases.
   */
  clock?: Clock;
  /** A clock that only tells the time (its timers are the system's): `clock` without timers. Not with `clock`. */
  now?: () => number;
  /** The default policy of `prune()`. */
  retention?: RetentionPolicy;
}

interface StoredRun extends RunRow {
  agentName: string;
  sessionId: string;
  messages: string[];
  calls: Map<string, [LedgerEntry, string | null]>;
  hooks: Map<string, string>;
  /** The event log: the event at offset n is `events[n - 1]`. */
  events: string[];
  /** How many events the log held at the last checkpoint that carried events. */
  eventsCheckpointed: number;
  owner: string | null;
  token: number;
  expires: number;
  createdAt: number;
  updatedAt: number;
}

/**
 * A run store in this process's memory: for tests and examples. It behaves as the database
 * stores do — leases, fencing, sessions, retention — and keeps every value as JSON text, so
 * nothing stored shares an object with a live run. It lasts as long as the process.
 *
 * @example const store = memoryStore(); const agent = createAgent({ model, store }); await agent.run('Hi');
 */
export function memoryStore(options: MemoryStoreOptions = {}): EventLogStore {
  return new MemoryStore(options);
}

class MemoryStore implements EventLogStore {
  readonly kind = 'memory';
  readonly leaseMs: number;
  readonly keyValues: KeyValueStore;
  readonly clock: Clock;
  readonly #now: () => number;
  readonly #retention: RetentionPolicy | undefined;
  readonly #runs = new Map<string, StoredRun>();
  /** Session id → its latest run. */
  readonly #heads = new Map<string, string>();
  readonly #waiters = new EventWaiters();
  #writes = 0;
  #bytes = 0;

  constructor(options: MemoryStoreOptions) {
    parseStoreOptions(memoryStoreSchema, options, 'memoryStore(options)');
    if (options.clock !== undefined && options.now !== undefined) throw new TypeError('memoryStore(options): give clock or now, not both (now is a clock without timers of its own)');
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.clock = options.clock ?? (options.now === undefined ? systemClock : { now: options.now, setTimer: systemClock.setTimer });
    const checked = checkedClock(this.clock, 'memoryStore');
    this.#now = () => checked.now();
    this.#retention = options.retention;
    this.keyValues = memoryKeyValues({ now: this.#now });
  }

  get stats(): StoreStats {
    return { writes: this.#writes, bytes: this.#bytes };
  }

  #count(...texts: (string | null | undefined)[]): void {
    this.#writes++;
    for (const text of texts) if (typeof text === 'string') this.#bytes += text.length;
  }

  async createRun(run: NewRun): Promise<CreateOutcome> {
    const { state, owner, base } = run;
    if (this.#runs.has(state.runId)) return { refused: 'run_exists' };
    const head = this.#heads.get(state.sessionId);
    if (run.expectHead !== undefined && (head ?? null) !== run.expectHead) return { refused: 'session_moved' };
    const row = rowOf(state);
    const shared = base === undefined ? 0 : Math.min(base.count, this.#runs.get(base.runId)?.messages.length ?? 0);
    // A session's earlier messages are shared with its previous run, not written again.
    const parts = partsOf(state, shared);
    const messages = shared > 0 ? [...this.#runs.get(base!.runId)!.messages.slice(0, shared), ...parts.messages] : parts.messages;
    const now = this.#now();
    this.#runs.set(state.runId, {
      ...row, agentName: state.agentName, sessionId: state.sessionId, messages,
      calls: new Map(parts.calls.map(([id, entry, held]) => [id, [entry, held]])), hooks: new Map(parts.hooks), events: [], eventsCheckpointed: 0,
      owner, token: 1, expires: now + this.leaseMs, createdAt: now, updatedAt: now,
    });
    this.#heads.set(state.sessionId, state.runId);
    this.#count(row.identity, row.pending, row.decisions, row.children, ...parts.messages);
    return { lease: { runId: state.runId, owner, token: 1 } };
  }

  async claimRun(runId: string, claim: ClaimRequest): Promise<ClaimOutcome> {
    const run = this.#runs.get(runId);
    if (run === undefined) return { refused: 'missing' };
    if (run.status !== 'suspended' && run.status !== 'failed') return { refused: 'status', status: run.status, segment: run.segment };
    if (run.segment !== claim.segment) return { refused: 'segment', status: run.status, segment: run.segment };
    const row = rowOf(claim.state);
    Object.assign(run, { status: 'running', stopReason: null, pending: row.pending, decisions: row.decisions, children: row.children, error: row.error, identity: row.identity, agentName: claim.state.agentName });
    return { lease: this.#lease(run, runId, claim.owner) };
  }

  async claimExpired(agentName: string, owner: string, only?: string): Promise<ClaimedRun | QuarantinedRun | undefined> {
    const now = this.#now();
    let oldest: [string, StoredRun] | undefined;
    for (const entry of this.#runs) {
      const run = entry[1];
      if ((only === undefined || entry[0] === only) && run.agentName === agentName && run.status === 'running' && run.expires < now && (oldest === undefined || run.updatedAt < oldest[1].updatedAt)) oldest = entry;
    }
    if (oldest === undefined) return undefined;
    const [runId, run] = oldest;
    let state: RunState;
    try {
      state = this.#state(runId, run);
    } catch (error) {
      // As the SQL stores do: a run that cannot be read is stored failed, not claimed.
      if (!isCorrupt(error)) throw error;
      const quarantined = quarantine(error);
      Object.assign(run, { status: 'failed', error: JSON.stringify(quarantined), owner: null, expires: 0, updatedAt: now });
      return { runId, quarantined };
    }
    return { lease: this.#lease(run, runId, owner), state };
  }

  #lease(run: StoredRun, runId: string, owner: string): Lease {
    run.token++;
    run.owner = owner;
    run.expires = this.#now() + this.leaseMs;
    run.updatedAt = this.#now();
    this.#count(run.decisions);
    return { runId, owner, token: run.token };
  }

  #held(lease: Lease): StoredRun {
    const run = this.#runs.get(lease.runId);
    if (run === undefined || run.token !== lease.token || run.owner !== lease.owner) throw leaseLost(lease.runId);
    return run;
  }

  async checkpoint(lease: Lease, checkpoint: Checkpoint, final: boolean): Promise<void> {
    const run = this.#held(lease);
    applyToRow(run, checkpoint);
    const { messages, calls, hookState } = checkpoint;
    if (messages !== undefined) {
      run.messages.length = Math.min(run.messages.length, messages.from);
      for (const item of messages.items) run.messages.push(item);
    }
    for (const call of calls ?? []) run.calls.set(call.id, [call.entry, call.held]);
    for (const { name, value } of hookState ?? []) run.hooks.set(name, value);
    if (checkpoint.events !== undefined) {
      for (const event of checkpoint.events) run.events.push(event);
      run.eventsCheckpointed = run.events.length;
    }
    run.updatedAt = this.#now();
    run.expires = final ? 0 : run.updatedAt + this.leaseMs;
    if (final) run.owner = null;
    this.#count(checkpoint.usage, checkpoint.error, checkpoint.output, checkpoint.pendingApprovals, checkpoint.decisions, checkpoint.children,
      ...(messages?.items ?? []), ...(calls ?? []).flatMap((c) => [c.id, c.entry, c.held]), ...(hookState ?? []).flatMap((h) => [h.name, h.value]), ...(checkpoint.events ?? []));
    if (checkpoint.events !== undefined && checkpoint.events.length > 0) this.#waiters.wake(lease.runId);
  }

  async appendEvents(lease: Lease, events: readonly string[]): Promise<number> {
    const run = this.#held(lease);
    for (const event of events) run.events.push(event);
    this.#count(...events);
    if (events.length > 0) this.#waiters.wake(lease.runId);
    return run.events.length;
  }

  async readEvents(runId: string, options?: ReadEventsOptions): Promise<EventPage> {
    checkRunId(runId, 'store.readEvents(runId, options)');
    const { after, limit } = parseReadEvents(options);
    const run = this.#runs.get(runId);
    if (run === undefined || after > run.events.length) return { events: [], last: run?.events.length ?? 0, deleted: true };
    return { events: this.#logged(runId, run, after, after + limit), last: run.events.length, status: run.status };
  }

  async eventTail(runId: string): Promise<LoggedEvent[]> {
    checkRunId(runId, 'store.eventTail(runId)');
    const run = this.#runs.get(runId);
    return run === undefined ? [] : this.#logged(runId, run, run.eventsCheckpointed, run.events.length);
  }

  async waitForEvents(runId: string, after: number, options?: WaitForEventsOptions): Promise<void> {
    const { signal, timeoutMs } = parseWaitForEvents(runId, after, options);
    const arrived = async () => (this.#runs.get(runId)?.events.length ?? Infinity) > after;
    // Every append is this process's: a wake-up says all there is to say.
    await waitForArrival(this.#waiters, runId, arrived, { signal, timeoutMs, pollMs: timeoutMs });
  }

  /** The events at offsets (from, to], parsed. */
  #logged(runId: string, run: StoredRun, from: number, to: number): LoggedEvent[] {
    return run.events.slice(from, to).map((text, i) => ({ seq: from + i + 1, event: parseStored(runId, text, { table: 'koagent_run_events', key: `seq ${from + i + 1}`, column: 'event' }) as LoggedEvent['event'] }));
  }

  async renew(lease: Lease): Promise<boolean> {
    const run = this.#runs.get(lease.runId);
    if (run === undefined || run.token !== lease.token || run.owner !== lease.owner) return false;
    run.expires = this.#now() + this.leaseMs;
    return true;
  }

  #state(runId: string, run: StoredRun): RunState {
    return assembleState(runId, run, run.messages, [...run.calls].map(([id, [entry, held]]) => [id, entry, held] as const), run.hooks);
  }

  async loadRun(runId: string): Promise<RunState | undefined> {
    const run = this.#runs.get(runId);
    return run === undefined ? undefined : this.#state(runId, run);
  }

  async sessionHead(sessionId: string): Promise<RunState | undefined> {
    const head = this.#heads.get(sessionId);
    return head === undefined ? undefined : this.loadRun(head);
  }

  async listRuns(given: RunFilter = {}): Promise<RunSummary[]> {
    const filter = parseFilter(given);
    const statuses = filterStatuses(filter.status);
    const found: RunSummary[] = [];
    for (const [runId, run] of this.#runs) {
      if (filter.agentName !== undefined && run.agentName !== filter.agentName) continue;
      if (filter.sessionId !== undefined && run.sessionId !== filter.sessionId) continue;
      if (statuses !== undefined && !statuses.includes(run.status)) continue;
      found.push(summaryOf(runId, run.agentName, run.sessionId, run, { createdAt: run.createdAt, updatedAt: run.updatedAt, leaseExpiresAt: run.expires }));
    }
    return found.sort((a, b) => b.updatedAt - a.updatedAt).slice(0, filter.limit ?? 100);
  }

  async deleteRun(runId: string): Promise<boolean> {
    const run = this.#runs.get(runId);
    if (run === undefined) return false;
    if (this.#leased(run)) throw stillRunning(runId);
    this.#delete(runId, run);
    return true;
  }

  /** A worker holds the run: it is running and its lease has not expired. */
  #leased(run: StoredRun): boolean {
    return run.status === 'running' && run.expires >= this.#now();
  }

  #delete(runId: string, run: StoredRun): void {
    this.#runs.delete(runId);
    this.#waiters.wake(runId);
    if (this.#heads.get(run.sessionId) !== runId) return;
    // The session goes on from its latest other run, if it has one.
    let latest: [string, StoredRun] | undefined;
    for (const entry of this.#runs) if (entry[1].sessionId === run.sessionId && (latest === undefined || entry[1].createdAt >= latest[1].createdAt)) latest = entry;
    if (latest === undefined) this.#heads.delete(run.sessionId);
    else this.#heads.set(run.sessionId, latest[0]);
  }

  async deleteSession(sessionId: string): Promise<number> {
    const runs = [...this.#runs].filter(([, run]) => run.sessionId === sessionId);
    const busy = runs.find(([, run]) => this.#leased(run));
    if (busy !== undefined) throw stillRunning(busy[0]);
    for (const [runId] of runs) {
      this.#runs.delete(runId);
      this.#waiters.wake(runId);
    }
    this.#heads.delete(sessionId);
    return runs.length;
  }

  async prune(policy: RetentionPolicy | undefined = this.#retention): Promise<number> {
    const { olderThanMs, statuses } = retentionStatuses(policy, 'store.prune()');
    const cutoff = this.#now() - olderThanMs;
    let deleted = 0;
    for (const [runId, run] of [...this.#runs]) {
      if (statuses.includes(run.status) && run.updatedAt < cutoff) {
        this.#delete(runId, run);
        deleted++;
      }
    }
    return deleted;
  }

  async close(): Promise<void> {
    // Nothing to close: the runs live as long as the process. Followers waiting stop waiting.
    this.#waiters.wakeAll();
  }
}
