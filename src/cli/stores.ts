// The store a command works on: a SQLite file, or PostgreSQL by connection string. Each driver is
// an optional peer of koagent, loaded only for the store that needs it.
import { existsSync } from 'node:fs';
import type { ApprovalDecision } from '../core/vocabulary/state.js';
import type { RunStore } from '../stores/run-store.js';
import { CliError, EXIT } from './io.js';

/** Open the store `--store` names; a SQLite file must exist already (reading a store never creates one), unless `create` (a command that writes runs). */
export async function openStore(given: string | undefined, { create = false } = {}): Promise<RunStore> {
  if (given === undefined || given === '') throw new CliError(EXIT.usage, 'give the run store: --store runs.db (a SQLite file) or --store postgres://user@host/db');
  if (/^postgres(ql)?:\/\//.test(given)) {
    const { postgresStore } = await import('../postgres.js').catch((error: unknown) => driverMissing('pg', error));
    return postgresStore({ connectionString: given });
  }
  // The flag is well formed; the store it names is not there: a failure to open it (exit 1), as for a database that refuses the connection.
  if (!create && !existsSync(given)) throw new CliError(EXIT.failure, `no run store at ${given}: --store takes an existing SQLite file or a postgres:// URL`);
  const { sqliteStore } = await import('../sqlite.js').catch((error: unknown) => driverMissing('better-sqlite3', error));
  return sqliteStore({ path: given });
}

function driverMissing(driver: string, error: unknown): never {
  throw new CliError(EXIT.failure, `the store needs the ${driver} package (npm i ${driver}): ${(error as Error).message}`);
}

/** What the CLI uses of the workers' client: the store it shares with the workers, and `answer`. */
export interface CliQueue {
  readonly store: RunStore;
  answer(runId: string, decisions: Record<string, ApprovalDecision>): Promise<void>;
  close(): Promise<void>;
}

/** A client of the workers' queue at `url` (PostgreSQL), over `store` when one is given (default: the queue's own database). */
export async function openQueue(url: string, store: string | undefined): Promise<CliQueue> {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new CliError(EXIT.usage, `--queue takes the workers' PostgreSQL connection string (postgres://…), got ${url}`);
  const { createClient } = await import('../worker.js').catch((error: unknown) => driverMissing('pg-boss', error));
  const runs = store === undefined ? undefined : await openStore(store);
  try {
    const client = await createClient({ connectionString: url, ...(runs === undefined ? {} : { store: runs }) });
    return { store: client.store, answer: (runId, decisions) => client.answer(runId, decisions), close: async () => (await client.close(), await runs?.close()) };
  } catch (error) {
    await runs?.close();
    throw new CliError(EXIT.failure, `the workers' queue at --queue could not be opened: ${(error as Error).message}`);
  }
}
