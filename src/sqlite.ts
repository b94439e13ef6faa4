/**
 * The SQLite run store, the embedded default. Needs `better-sqlite3` 12, an optional peer
 * dependency.
 *
 * @example
 * ```ts
 * import { sqliteStore } from 'koagent/sqlite';
 * ```
 *
 * @packageDocumentation
 * @module koagent/sqlite
 */
// The `koagent/sqlite` entry: the SQLite run store. It needs the better-sqlite3 package, an
// optional peer dependency of koagent, so the package root never loads it.
/** @category Stores */
export { sqliteStore } from './stores/sqlite.js';
