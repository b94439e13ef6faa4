// The `koagent/sqlite` entry: the SQLite run store. It needs the better-sqlite3 package, an
// optional peer dependency of koagent, so the package root never loads it.
export { sqliteStore, type SqliteStoreOptions } from './stores/sqlite.js';
