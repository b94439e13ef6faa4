// The `koagent/store` entry: what writing a run store takes — the `RunStore` interface and the
// records its methods take and give (leases, claims, checkpoints, filters). Code that only
// picks a store (`memoryStore()` from the root, `sqliteStore()` from `koagent/sqlite`,
// `postgresStore()` from `koagent/postgres`) does not need it.
export type {
  Checkpoint,
  CheckpointCall,
  ClaimedRun,
  ClaimOutcome,
  ClaimRequest,
  CreateOutcome,
  Lease,
  NewRun,
  QuarantinedRun,
  RetentionPolicy,
  RunFilter,
  RunStore,
  StoreStats,
} from './stores/run-store.js';
// The ledger a checkpoint's calls and a stored state's `ledger` are made of.
export type { LedgerCall, LedgerEntry } from './api.js';
