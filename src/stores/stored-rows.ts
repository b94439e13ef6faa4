// Reading a run's rows back, checked: a value that is not JSON, or a transcript whose rows do
// not add up to the count its run row keeps, is a `corrupt_run` error that names the run, the
// table and the row, so an operator can find it; nothing of such a run goes on running.
import { KoagentError } from '../core/vocabulary/errors.js';

declare module '../core/vocabulary/errors.js' {
  interface ErrorCodes {
    /**
     * A stored run's rows cannot be read (a value is not JSON, a transcript row is missing):
     * loading it is refused, and recovery stores it failed with this code and goes on.
     */
    corrupt_run: true;
  }
}

/**
 * Where a stored value lives, for the error that names it: its table, the row's key after the
 * run id, and the column. The SQL stores' names, which the memory store keeps too.
 *
 * @example const where: RowPlace = { table: 'koagent_calls', key: "call_id 'c1'", column: 'held' };
 */
export interface RowPlace {
  table: 'koagent_runs' | 'koagent_messages' | 'koagent_calls' | 'koagent_hook_state' | 'koagent_run_events';
  /** The row's key besides its run id (`seq 3`, `call_id 'c1'`); none for the run's own row. */
  key?: string;
  column: string;
}

/** Where a message of the transcript is stored. */
export const messageRow = (seq: number): RowPlace => ({ table: 'koagent_messages', key: `seq ${seq}`, column: 'message' });

/** A run whose rows cannot be read: what is wrong, and where. */
export function corruptRun(runId: string, what: string, cause?: unknown): KoagentError {
  const options = cause === undefined ? {} : { cause };
  return new KoagentError('corrupt_run', `run ${runId} cannot be read: ${what}; repair or delete that row (or delete the run: store.deleteRun('${runId}'))`, options);
}

/** The name of a row, as an operator would look it up. */
function rowName(runId: string, place: RowPlace): string {
  return `table ${place.table}, row (run_id '${runId}'${place.key === undefined ? '' : `, ${place.key}`}), column ${place.column}`;
}

/** A stored JSON value, parsed; a value that is not JSON is a `corrupt_run` error naming its row. */
export function parseStored(runId: string, text: string, place: RowPlace): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw corruptRun(runId, `${rowName(runId, place)} is not JSON (${(error as Error).message})`, error);
  }
}

/**
 * Check that a run's transcript rows are the ones its run row counts: positions 0 … count - 1,
 * each once. A missing row would otherwise go unseen, and the run would go on from a transcript
 * with a hole in it (a call without its result).
 */
export function checkTranscript(runId: string, count: number, seqs: readonly number[]): void {
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i) {
      throw corruptRun(runId, `its row in table koagent_runs counts ${count} messages, but table koagent_messages has no row (run_id '${runId}', seq ${i}) of its transcript (or of the session's run it continues)`);
    }
  }
  if (seqs.length !== count) {
    throw corruptRun(runId, `its row in table koagent_runs counts ${count} messages, but table koagent_messages holds ${seqs.length} of them (seq ${seqs.length} on is missing)`);
  }
}

/** A `corrupt_run` error (what a store quarantines a run for; any other failure is the store's own). */
export function isCorrupt(error: unknown): error is KoagentError {
  return KoagentError.is(error) && error.code === 'corrupt_run';
}

/** The error a quarantined run is stored failed with: the reading error, and what follows from it. */
export function quarantine(error: KoagentError): { code: 'corrupt_run'; message: string } {
  return { code: 'corrupt_run', message: `${error.message}. Recovery stored the run failed and went on with the others; once repaired, continue it with agent.resume(runId)` };
}
