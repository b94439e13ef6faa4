// The `koagent/postgres` entry: the PostgreSQL run store. It needs the pg package, an optional
// peer dependency of koagent, so the package root never loads it.
export { postgresStore, type PostgresClient, type PostgresPool, type PostgresPoolConfig, type PostgresStoreOptions } from './stores/postgres.js';
