// The contract between the agent and a run store. koagent ships three: memoryStore() (tests),
// sqliteStore() from koagent/sqlite (the embedded default) and postgresStore() from
// koagent/postgres (many processes and machines). See docs/durable-runs.md.
import type { AgentEvent } from '../core/vocabulary/events.js';
import type { KeyValueStore } from './key-values.js';
import type { Clock } from './clock.js';
import type { LedgerEntry, PendingApproval, RunState, RunStatus, StopReason } from '../core/vocabulary/state.js';

declare module '../core/vocabulary/errors.js' {
  interface ErrorCodes {
    /** A worker's lease on a run was lost (another worker claimed the run): it writes nothing more. */
    lease_lost: true;
    /** A follower of a run's event log asked for events that are gone: the run was deleted (or pruned) with them, or never stored. */
    events_deleted: true;
  }
}

/**
 * The right of one worker to write one run, as a claim gave it. `token` is the fencing token:
 * every claim of the run increments it, and a write carrying an older token is refused, so a
 * worker that lost its lease (its process stalled, another worker took the run over) cannot
 * write any more.
 *
 * @example const lease: Lease = { runId: 'run_1', owner: 'host:4242:ab12', token: 3 };
 */
export interface Lease {
  readonly runId: string;
  readonly owner: string;
  readonly token: number;
}

/**
 * A run being started in a store (`RunStore.createRun`).
 *
 * @example await store.createRun({ state, owner: 'worker-1', expectHead: null });
 */
export interface NewRun {
  /** The run as it starts: its opening transcript, nothing done yet (or an imported state). */
  state: RunState;
  /** The worker that takes the run's first lease. */
  owner: string;
  /**
   * The run continues a session: its first `count` messages are those of run `runId`, which
   * the store shares rather than writes again (a conversation costs its length once, not once per turn).
   */
  base?: { runId: string; count: number };
  /**
   * Refuse the run unless the session's latest run is still this one (`null`: unless the
   * session has no run yet), so two `send`s to one session cannot both go ahead.
   */
  expectHead?: string | null;
}

/**
 * What `createRun` answers: the new run's lease, or why it was refused.
 *
 * @example const created = await store.createRun(run); if ('refused' in created) throw new Error(created.refused);
 */
export type CreateOutcome = { lease: Lease } | { refused: 'run_exists' | 'session_moved' };

/**
 * A resume's claim of a suspended or failed run (`RunStore.claimRun`).
 *
 * @example await store.claimRun(state.runId, { owner: 'worker-1', segment: state.segment, state: next });
 */
export interface ClaimRequest {
  owner: string;
  /** The segment the stored run must still be at: a second resume of the same state is refused. */
  segment: number;
  /** The run as the next segment starts it (the decisions taken, no approval pending): written with the claim, in one transaction. */
  state: RunState;
}

/**
 * What `claimRun` answers: the lease, or why the run could not be claimed — it is not in the
 * store, it moved on past that segment, or it is not suspended or failed (running or completed).
 *
 * @example const claimed = await store.claimRun(runId, request); if ('refused' in claimed) console.warn(claimed.refused, claimed.status);
 */
export type ClaimOutcome = { lease: Lease } | { refused: 'missing' | 'segment' | 'status'; status?: RunStatus; segment?: number };

/**
 * A run taken over by recovery: its lease and its state as of its last checkpoint.
 *
 * @example const claimed = await store.claimExpired('teller', 'worker-2'); if (claimed && 'state' in claimed) console.log(claimed.state.ledger);
 */
export interface ClaimedRun {
  lease: Lease;
  state: RunState;
}

/**
 * A run `claimExpired` found but could not read (a row is not JSON, a transcript row is
 * missing): instead of claiming it, the store stored it failed with this error, in the same
 * transaction, so recovery goes on with the agent's other runs.
 *
 * @example const claimed = await store.claimExpired('teller', 'worker-2'); if (claimed && 'quarantined' in claimed) console.error(claimed.quarantined.message);
 */
export interface QuarantinedRun {
  runId: string;
  quarantined: { code: 'corrupt_run'; message: string };
}

/**
 * One stored run, without its transcript: what `listRuns` gives.
 *
 * @example for (const run of await store.listRuns({ agentName: 'teller', status: 'suspended' })) console.log(run.runId, run.pendingApprovals);
 */
export interface RunSummary {
  runId: string;
  agentName: string;
  sessionId: string;
  status: RunStatus;
  stopReason?: StopReason;
  segment: number;
  steps: number;
  pendingApprovals: PendingApproval[];
  error?: { code: string; message: string; layer?: string };
  /** Milliseconds since the epoch, by the store's clock. */
  createdAt: number;
  updatedAt: number;
  /** While a worker holds the run: when its lease runs out unless renewed (0 when nobody holds it). */
  leaseExpiresAt: number;
}

/**
 * Which runs `listRuns` gives, newest change first.
 *
 * @example await store.listRuns({ agentName: 'teller', status: ['failed', 'suspended'], limit: 50 });
 */
export interface RunFilter {
  agentName?: string;
  sessionId?: string;
  status?: RunStatus | RunStatus[];
  /** At most this many (default 100). */
  limit?: number;
}

/**
 * Which finished runs `prune` deletes: those whose last change is older than `olderThanMs`
 * and whose status is listed (default completed and failed; a suspended run waits for a human,
 * a running one is never pruned).
 *
 * @example await store.prune({ olderThanMs: 30 * 24 * 3600_000 });
 */
export interface RetentionPolicy {
  olderThanMs: number;
  statuses?: Exclude<RunStatus, 'running'>[];
}

/**
 * What a store has written since it was opened: transactions, and bytes of statement
 * parameters (the JSON text of the state, ids and numbers).
 *
 * @example const before = store.stats.bytes; await agent.run('Hi'); console.log(store.stats.bytes - before, 'bytes');
 */
export interface StoreStats {
  readonly writes: number;
  readonly bytes: number;
  /**
   * SQL stores: the statements sent so far, reads and writes, BEGIN and COMMIT included (in
   * PostgreSQL each is a round trip to the server).
   */
  readonly statements?: number;
}

/**
 * Where durable runs live: `createAgent({ store })`. Each step of a run is one checkpoint
 * (one transaction) holding only what the step changed; the ledger is write-ahead (a call is
 * stored `running` before its tool is entered); one worker at a time holds a run's lease, and
 * a run whose worker died is claimed by `agent.runs.recover()` once its lease expired.
 *
 * Every method is safe to call from many processes at once (for the SQLite store: processes
 * on one machine sharing one file; for PostgreSQL: any number of machines).
 *
 * @example const agent = createAgent({ model, tools, store: sqliteStore({ path: 'runs.db' }) });
 */
export interface RunStore {
  /** `memory`, `sqlite` or `postgres`. */
  readonly kind: string;
  /** How long a lease lasts unless renewed, in milliseconds; a running segment renews it every third of that. */
  readonly leaseMs: number;
  readonly stats: StoreStats;
  /**
   * The clock the store's leases go by (its `clock` option): a running segment renews its lease
   * on this clock's timers, and `recover({ wait: true })` waits on them. Optional for stores of
   * your own (then the system clock).
   */
  readonly clock?: Clock;
  /**
   * What layers keep across runs (caches, rate limits, a session's counts), in the store's own
   * database so every process that opens it shares them. Optional for stores of your own.
   */
  readonly keyValues?: KeyValueStore;
  /** Store a new run, with its opening transcript, and lease it to `run.owner`. */
  createRun(run: NewRun): Promise<CreateOutcome>;
  /** Claim a suspended or failed run for its next segment (a resume); the decisions are written with the claim. */
  claimRun(runId: string, claim: ClaimRequest): Promise<ClaimOutcome>;
  /**
   * Claim one run of `agentName` that is running with an expired lease (its worker died), oldest
   * change first. One whose rows cannot be read is stored failed instead (`QuarantinedRun`).
   * With `runId`, only that run (a job queue's worker taking over one run it was told of).
   */
  claimExpired(agentName: string, owner: string, runId?: string): Promise<ClaimedRun | QuarantinedRun | undefined>;
  /** Write one checkpoint as one transaction, if `lease` still holds (else it rejects with `lease_lost`). `final` gives the lease back. */
  checkpoint(lease: Lease, checkpoint: Checkpoint, final: boolean): Promise<void>;
  /** Extend the lease by `leaseMs`; false when it was lost. */
  renew(lease: Lease): Promise<boolean>;
  /** A run's state as of its last checkpoint; rejects with `corrupt_run`, naming the row, when its rows cannot be read. */
  loadRun(runId: string): Promise<RunState | undefined>;
  /** The state of the latest run of a session (what `send` continues). */
  sessionHead(sessionId: string): Promise<RunState | undefined>;
  /** Summaries of the runs `filter` names (all by default, up to its `limit`), the latest change first. */
  listRuns(filter?: RunFilter): Promise<RunSummary[]>;
  /** Delete one run (refused while a worker holds it); later runs of its session keep their transcripts. True if it existed. */
  deleteRun(runId: string): Promise<boolean>;
  /** Delete every run of a session (refused while a worker holds one); how many were deleted. */
  deleteSession(sessionId: string): Promise<number>;
  /** Delete old finished runs by `policy` (default: the store's `retention` option); how many were deleted. */
  prune(policy?: RetentionPolicy): Promise<number>;
  // The event log (docs/streaming.md): optional for stores of your own; koagent's three have it.
  /**
   * Append events (each the JSON of an `AgentEvent`) to the run's log, if `lease` still holds
   * (else it rejects with `lease_lost`): they get the offsets after the log's last, in order.
   * Resolves with the offset of the last one.
   */
  appendEvents?(lease: Lease, events: readonly string[]): Promise<number>;
  /** The run's logged events after offset `after`, oldest first, with the run's status read in the same snapshot. */
  readEvents?(runId: string, options?: ReadEventsOptions): Promise<EventPage>;
  /** The events appended after the run's last checkpoint that carried events: what a worker streamed past the state it stored. */
  eventTail?(runId: string): Promise<LoggedEvent[]>;
  /**
   * Resolves once the run may have an event after `after` (or is gone), or after `timeoutMs`
   * (default 1000), or when `signal` aborts: a hint, so a follower need not poll in a loop.
   */
  waitForEvents?(runId: string, after: number, options?: WaitForEventsOptions): Promise<void>;
  /** Close the store's connections. */
  close(): Promise<void>;
}

/**
 * One event of a run's log: its offset in the log (1, 2, 3 … per run; give it back as `after`
 * to go on from there) and the event, as the agent emitted it.
 *
 * @example for await (const { seq, event } of followEvents(store, runId)) if (event.type === 'text.delta') process.stdout.write(event.delta);
 */
export interface LoggedEvent {
  seq: number;
  event: AgentEvent;
}

/**
 * Which events `readEvents` gives: those after offset `after` (default 0: from the first), at
 * most `limit` (default 500, at most 1000).
 *
 * @example await store.readEvents(runId, { after: lastSeen, limit: 100 });
 *
 * @inline
 */
export interface ReadEventsOptions {
  after?: number;
  limit?: number;
}

/**
 * What `readEvents` answers: the events, and the run as it was when they were read.
 *
 * @example const page = await store.readEvents(runId, { after }); if (page.deleted) return respond(410); for (const e of page.events) send(e);
 *
 * @inline
 */
export interface EventPage {
  /** The events after `after`, oldest first, at most `limit`. */
  events: LoggedEvent[];
  /** The offset of the run's last event when this page was read (0: none yet). */
  last: number;
  /** The run's status, read in the same snapshot as the events (none when `deleted`). */
  status?: RunStatus;
  /**
   * The events asked for are gone: the store holds no such run (it was deleted or pruned, and
   * its events with it — or it was never stored), or its log ends before `after` (it was deleted
   * and another run stored under its id).
   */
  deleted?: true;
}

/**
 * How long `waitForEvents` waits at most, and what stops it early.
 *
 * @example await store.waitForEvents(runId, after, { signal, timeoutMs: 2000 });
 *
 * @inline
 */
export interface WaitForEventsOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * A run store with an event log: `appendEvents`, `readEvents` and `eventTail` are there (what
 * `memoryStore()`, `sqliteStore()` and `postgresStore()` give).
 *
 * @example const store: EventLogStore = sqliteStore({ path: 'runs.db' }); const page = await store.readEvents(runId);
 */
export type EventLogStore = RunStore & Required<Pick<RunStore, 'appendEvents' | 'readEvents' | 'eventTail'>>;

/**
 * Whether `store` keeps an event log (`appendEvents`, `readEvents`, `eventTail`; `waitForEvents` is a hint).
 *
 * @example if (!hasEventLog(store)) throw new TypeError('this store keeps no event log');
 */
export function hasEventLog(store: RunStore): store is EventLogStore {
  return typeof store.appendEvents === 'function' && typeof store.readEvents === 'function' && typeof store.eventTail === 'function';
}

/** The methods a run store has: `createAgent` checks a store against them. */
const RUN_STORE_METHODS = ['createRun', 'claimRun', 'claimExpired', 'checkpoint', 'renew', 'loadRun', 'sessionHead', 'listRuns', 'deleteRun', 'deleteSession', 'prune', 'close'] as const;

/** What is missing for `value` to be a run store, or undefined when nothing is. */
function storeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'it is not an object';
  const missing = RUN_STORE_METHODS.filter((name) => typeof (value as Record<string, unknown>)[name] !== 'function');
  if (missing.length > 0) return `it has no ${missing.join(', ')} method${missing.length > 1 ? 's' : ''}`;
  const { leaseMs } = value as RunStore;
  if (typeof leaseMs !== 'number' || !(leaseMs > 0)) return 'its leaseMs is not a positive number';
  return undefined;
}

/**
 * Refuse what is not a run store, with a `TypeError` starting with `where` that says what it
 * lacks and what to use.
 *
 * @example assertStore(options.store, 'createAgent: store');
 */
export function assertStore(value: unknown, where: string): asserts value is RunStore {
  const problem = storeProblem(value);
  if (problem !== undefined) throw new TypeError(`${where} is not a run store: ${problem}; use memoryStore(), sqliteStore() from koagent/sqlite or postgresStore() from koagent/postgres`);
}

/**
 * What changed in a run's state since the last checkpoint, as a store writes it: one
 * transaction. Values are JSON text already, taken at one instant, so the run can go on
 * changing its state while the store writes.
 *
 * The small fields of the run (status, counters, usage) are always there; the others only
 * when they changed. A step adds a constant amount to a checkpoint, whatever the run's length:
 * the messages appended, the ledger entries that moved, the hook states that were set.
 *
 * @example const checkpoint = writer.take(); if (checkpoint?.messages) console.log(`${checkpoint.messages.items.length} messages from #${checkpoint.messages.from}`);
 */
export interface Checkpoint {
  status: RunStatus;
  segment: number;
  steps: number;
  /** JSON of `Usage`. */
  usage: string;
  stopReason: StopReason | undefined;
  /** JSON of `RunState.error`, or null when the run has none. */
  error: string | null;
  /** JSON of `RunState.output` (null for none), when it changed. */
  output?: string | null;
  /** JSON of `PendingApproval[]`, when it changed. */
  pendingApprovals?: string;
  /** JSON of `RunState.decisions`, when it changed. */
  decisions?: string;
  /** JSON of `RunState.children`, when it changed. */
  children?: string;
  /**
   * The transcript from message `from` on (each message as JSON): the store keeps its first
   * `from` messages and replaces the rest with `items`. Appending is `from` = the stored count;
   * a rewrite (`ctx.setMessages`, compaction) starts lower.
   */
  messages?: { from: number; items: string[] };
  /** Ledger entries that changed, each with the call's held result (JSON, or null when none is held). */
  calls?: CheckpointCall[];
  /** Hook states that were set (JSON). */
  hookState?: { name: string; value: string }[];
  /**
   * Only when the segment logs its events: those logged since the last write (each the JSON of
   * an `AgentEvent`), appended to the run's log in the same transaction. Present even when empty:
   * it marks the log as agreeing with this checkpoint (see `RunStore.eventTail`).
   */
  events?: string[];
}

/**
 * One ledger entry of a checkpoint (see `Checkpoint.calls`).
 *
 * @example const interrupted = checkpoint.calls?.filter((c) => c.entry === 'running').map((c) => c.id);
 */
export interface CheckpointCall {
  id: string;
  entry: LedgerEntry;
  /** JSON of the call's result held until its turn ends (`RunState.settled`), or null. */
  held: string | null;
}
