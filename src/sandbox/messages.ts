// What the host and a sandbox's worker thread say to each other. Everything is plain data (the
// structured clone of JSON values): the hooks' context crosses as the JSON text marshal made.
import type { HookInfo } from './engine.js';
import type { Limit } from './sandbox-error.js';

/** What a worker is started with: the engine's options, less the functions (they stay in the host). */
export interface WorkerSetup {
  source: string;
  timeoutMs: number;
  memoryMb: number;
  /** The names of the granted functions: calls to them come to the host. */
  functionNames: string[];
  logs: boolean;
  /** One Int32 the host sets to 1 (and notifies) once it has answered a synchronous request. */
  signal: SharedArrayBuffer;
}

/** Worker → host. `starts` is how many engines the worker has started so far. */
export type FromWorker =
  | { type: 'booted' }
  | { type: 'loaded'; hooks: HookInfo[]; starts: number }
  | { type: 'loadFailed'; message: string; limit?: Limit; starts: number }
  /** Sent when a call had to wait for an engine to start: its time starts now. */
  | { type: 'begun'; id: number }
  | { type: 'answered'; id: number; answer: unknown; starts: number }
  | { type: 'failed'; id: number; message: string; limit?: Limit; starts: number }
  | { type: 'log'; args: unknown[] }
  /** A granted function called by call `id`: the host answers with `called` for `ask`. */
  | { type: 'call'; id: number; ask: number; name: string; args: unknown[] }
  /** A context operation the hook waits for: answered on the reply port, then `signal` is set. */
  | { type: 'sync'; id: number; seq: number; op: 'read' | 'setHookState' | 'emit'; args: unknown[] };

/** Host → worker. */
export type ToWorker =
  | { type: 'call'; id: number; index: number; method: string; payload: string }
  | { type: 'called'; ask: number; text?: string; error?: string; limit?: Limit };

/** Host → worker, on the reply port: the answer to a `sync` request. */
export interface SyncReply {
  seq: number;
  value?: string;
  error?: string;
  limit?: Limit;
}
