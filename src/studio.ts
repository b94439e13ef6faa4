/**
 * The studio: a local web page over a run store — the runs, each run's transcript, ledger and
 * layer trace (the onion of every call), and the pending approvals, answered from the page.
 *
 * @example
 * ```ts
 * import { startStudio } from 'koagent/studio';
 * ```
 *
 * @packageDocumentation
 * @module koagent/studio
 */
// The `koagent/studio` entry: the studio's server (its page is bundled at build time).
/** @category Studio */
export { startStudio, type Studio } from './studio/server.js';
