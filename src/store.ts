/**
 * What writing a run store of your own takes: the `RunStore` interface and the records its
 * methods take and give; and the `Clock` every store's leases go by (for tests that move time).
 * Picking one of koagent's stores never needs it.
 *
 * @example
 * ```ts
 * import type { RunStore } from 'koagent/store';
 * ```
 *
 * @packageDocumentation
 * @module koagent/store
 */
// The `koagent/store` entry: what writing a run store takes — the `RunStore` interface and the
// records its methods take and give (leases, claims, checkpoints, filters). Code that only
// picks a store (`memoryStore()` from the root, `sqliteStore()` from `koagent/sqlite`,
// `postgresStore()` from `koagent/postgres`) does not need it.
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
// The ledger a checkpoint's calls and a stored state's `ledger` are made of.
/** @category Stores */
export type { LedgerCall, LedgerEntry } from './api.js';
