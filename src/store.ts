/**
 * What writing a run store of your own takes: the `RunStore` interface and the records its
 * methods take and give; and the `Clock` every store's leases go by (for tests that move time).
 * Picking one of koagent's stores never needs it. And reading a run's event log from any
 * process: `followEvents`.
 *
 * @example
 * ```ts
 * import { followEvents, type RunStore } from 'koagent/store';
 * ```
 *
 * @packageDocumentation
 * @module koagent/store
 */
// The `koagent/store` entry: what writing a run store takes — the `RunStore` interface and the
// records its methods take and give (leases, claims, checkpoints, filters). Code that only
// picks a store (`memoryStore()` from the root, `sqliteStore()` from `koagent/sqlite`,
// `postgresStore()` from `koagent/postgres`) does not need it. Readers of a run's event log
// (an HTTP layer serving a run's events, a process watching another's runs) take its follower.
/** @category Stores */
export type {
  Checkpoint,
  ClaimedRun,
  ClaimOutcome,
  ClaimRequest,
  CreateOutcome,
  Lease,
  NewRun,
  RetentionPolicy,
  RunFilter,
  RunStore,
} from './stores/run-store.js';
// The clock a store's leases go by, for tests that move time (every store's `clock` option).
/** @category Stores */
export { systemClock, type Clock } from './stores/clock.js';
// A run's event log, read from any process. Its events are `LoggedEvent`s (koagent/worker's
// client gives the same); the log's methods on `RunStore` name their own records, reachable as
// its property types.
/** @category Stores */
export { followEvents } from './stores/follow-events.js';
// The ledger a checkpoint's calls and a stored state's `ledger` are made of.
/** @category Stores */
export type { LedgerCall, LedgerEntry } from './api.js';
