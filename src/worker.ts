/**
 * Many workers on one PostgreSQL: a client that starts runs by agent name and waits for them,
 * and workers that take the runs, resumes and recoveries from a pg-boss job queue. Needs `pg` 8
 * and `pg-boss` 10, optional peer dependencies. See docs/workers.md.
 *
 * @example
 * ```ts
 * import { createClient, createWorker } from 'koagent/worker';
 * ```
 *
 * @packageDocumentation
 * @module koagent/worker
 */
// The `koagent/worker` entry: the client and the worker. pg and pg-boss are loaded only when
// one is made, so importing this entry needs neither.
/** @category Workers */
export { createWorker, type Worker } from './worker/worker.js';
/** @category Workers */
export { createClient, type RunReport, type WorkerClient } from './worker/client.js';
// A followed run's events: the run store's event log's (followEvents on koagent/store gives them too).
/** @category Workers */
export type { LoggedEvent } from './stores/run-store.js';
