/**
 * The PostgreSQL run store, for many processes on many machines. Needs `pg` 8, an optional peer
 * dependency.
 *
 * @example
 * ```ts
 * import { postgresStore } from 'koagent/postgres';
 * ```
 *
 * @packageDocumentation
 * @module koagent/postgres
 */
// The `koagent/postgres` entry: the PostgreSQL run store. It needs the pg package, an optional
// peer dependency of koagent, so the package root never loads it.
/** @category Stores */
export { postgresStore, type PostgresPool } from './stores/postgres.js';
