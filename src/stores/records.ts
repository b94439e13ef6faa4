// What every store shares: how a run state is split into what is stored once (its identity)
// and what checkpoints change, how it is put together again, and the errors and checks of the
// store options.
import { KoagentError } from '../core/vocabulary/errors.js';
import { setOwn } from '../core/vocabulary/json.js';
import type { Checkpoint } from './run-store.js';
import type { Message, ToolMessage } from '../core/vocabulary/messages.js';
import { inCallOrder, type LedgerCall, type LedgerEntry, type RunState, type RunStatus, type StopReason } from '../core/vocabulary/state.js';
import { STATE_VERSION } from '../core/state/state-schema.js';
import type { RunSummary } from './run-store.js';
import { messageRow, parseStored } from './stored-rows.js';

/** The parts of a run state that checkpoints write; everything else is its identity, stored once. */
const CHANGING = new Set(['status', 'segment', 'steps', 'usage', 'stopReason', 'output', 'error', 'pendingApprovals', 'decisions', 'children', 'messages', 'settled', 'ledger', 'hookState']);

/**
 * The fields of a state that no checkpoint changes (version, ids, the agent's name, any field a
 * later state version adds, and the decision log, which grows only when a resume claims the
 * run: the claim writes it in the same transaction, and a segment's steps never write it again),
 * as JSON: stored with the run and at each claim, merged back on loading.
 */
function identityOf(state: RunState): string {
  const identity: Record<string, unknown> = {};
  for (const key of Object.keys(state)) if (!CHANGING.has(key)) identity[key] = (state as unknown as Record<string, unknown>)[key];
  return JSON.stringify(identity);
}

/** A run's stored fields as text, the way every store keeps them. */
export interface RunRow {
  identity: string;
  status: RunStatus;
  segment: number;
  steps: number;
  usage: string;
  stopReason: StopReason | null | undefined;
  output: string | null;
  error: string | null;
  pending: string;
  decisions: string;
  children: string;
}

/** The run fields of a whole state, as a new run (or a claim) writes them. */
export function rowOf(state: RunState): RunRow {
  return {
    identity: identityOf(state),
    status: state.status,
    segment: state.segment,
    steps: state.steps,
    usage: JSON.stringify(state.usage),
    stopReason: state.stopReason,
    output: state.output === undefined ? null : JSON.stringify(state.output),
    error: state.error === undefined ? null : JSON.stringify(state.error),
    pending: JSON.stringify(state.pendingApprovals),
    decisions: JSON.stringify(state.decisions),
    children: JSON.stringify(state.children),
  };
}

/**
 * A state's transcript from message `from` on (the earlier ones are shared with the session's
 * previous run, not written again), ledger and hook state, as stored rows.
 */
export function partsOf(state: RunState, from = 0): { messages: string[]; calls: [string, LedgerEntry, string | null][]; hooks: [string, string][] } {
  const held = new Map(state.settled.map((message) => [message.toolCallId, message]));
  return {
    messages: state.messages.slice(from).map((m) => JSON.stringify(m)),
    calls: state.ledger.map(({ id, entry }) => { const message = held.get(id); return [id, entry, message === undefined ? null : JSON.stringify(message)]; }),
    hooks: Object.entries(state.hookState).map(([name, value]) => [name, JSON.stringify(value ?? null)]),
  };
}

/** Apply a checkpoint's run fields to a stored row (the fields it leaves out stay). */
export function applyToRow(row: RunRow, checkpoint: Checkpoint): void {
  row.status = checkpoint.status;
  row.segment = checkpoint.segment;
  row.steps = checkpoint.steps;
  row.usage = checkpoint.usage;
  row.stopReason = checkpoint.stopReason;
  row.error = checkpoint.error;
  if (checkpoint.output !== undefined) row.output = checkpoint.output;
  if (checkpoint.pendingApprovals !== undefined) row.pending = checkpoint.pendingApprovals;
  if (checkpoint.decisions !== undefined) row.decisions = checkpoint.decisions;
  if (checkpoint.children !== undefined) row.children = checkpoint.children;
}

/**
 * Put a run state together from its stored row, transcript (message `i` at position `i`), ledger
 * rows and hook states, in the state format of this version (rows are the same in every format;
 * a run stored by an earlier version has that version in its identity). The ledger lists the
 * calls in the order the transcript has them, as the run did, whatever order the store keeps its
 * rows in. A value that is not JSON is a `corrupt_run` error naming the run, its table and row.
 */
export function assembleState(runId: string, row: RunRow, messages: Iterable<string>, calls: Iterable<readonly [string, LedgerEntry, string | null]>, hooks: Iterable<readonly [string, string]>): RunState {
  const column = (name: string, text: string) => parseStored(runId, text, { table: 'koagent_runs', column: name });
  const transcript: Message[] = [];
  for (const message of messages) transcript.push(parseStored(runId, message, messageRow(transcript.length)) as Message);
  const rows = [...calls].sort(inCallOrder(transcript));
  const ledger: LedgerCall[] = [];
  const settled: ToolMessage[] = [];
  for (const [id, entry, held] of rows) {
    ledger.push({ id, entry });
    if (held !== null) settled.push(parseStored(runId, held, { table: 'koagent_calls', key: `call_id '${id}'`, column: 'held' }) as ToolMessage);
  }
  const hookState: Record<string, unknown> = {};
  for (const [name, value] of hooks) setOwn(hookState, name, parseStored(runId, value, { table: 'koagent_hook_state', key: `name '${name}'`, column: 'value' }));
  const state = {
    ...(column('identity', row.identity) as Record<string, unknown>),
    version: STATE_VERSION,
    status: row.status,
    segment: row.segment,
    messages: transcript,
    steps: row.steps,
    usage: column('usage', row.usage),
    pendingApprovals: column('pending', row.pending),
    decisions: column('decisions', row.decisions),
    settled,
    ledger,
    hookState,
    children: column('children', row.children),
  } as RunState;
  if (row.stopReason != null) state.stopReason = row.stopReason;
  if (row.output !== null) state.output = column('output', row.output);
  if (row.error !== null) state.error = column('error', row.error) as RunState['error'];
  return state;
}

/**
 * A run summary from its stored row. A listing is not blocked by one run whose row cannot be
 * read: that run is listed with no pending approvals and a `corrupt_run` error naming the row.
 */
export function summaryOf(runId: string, agentName: string, sessionId: string, row: Pick<RunRow, 'status' | 'segment' | 'steps' | 'stopReason' | 'pending' | 'error'>, times: { createdAt: number; updatedAt: number; leaseExpiresAt: number }): RunSummary {
  const summary: RunSummary = {
    runId, agentName, sessionId, status: row.status, segment: row.segment, steps: row.steps,
    pendingApprovals: [], createdAt: times.createdAt, updatedAt: times.updatedAt,
    leaseExpiresAt: row.status === 'running' ? times.leaseExpiresAt : 0,
  };
  if (row.stopReason != null) summary.stopReason = row.stopReason;
  try {
    summary.pendingApprovals = parseStored(runId, row.pending, { table: 'koagent_runs', column: 'pending' }) as RunSummary['pendingApprovals'];
    if (row.error !== null) summary.error = parseStored(runId, row.error, { table: 'koagent_runs', column: 'error' }) as RunSummary['error'];
  } catch (error) {
    summary.error = { code: 'corrupt_run', message: (error as Error).message };
  }
  return summary;
}

/** The error of a write whose lease was lost: another worker holds the run now. */
export function leaseLost(runId: string): KoagentError {
  return new KoagentError('lease_lost', `run ${runId}: this worker no longer holds the run's lease (it expired and another worker claimed the run, or the run was deleted); nothing more of this segment is stored`);
}

/** A delete refused because a worker holds the run. */
export function stillRunning(runId: string): KoagentError {
  return new KoagentError('session_busy', `run ${runId} is running and a worker holds its lease; delete it once it has finished (or once its lease expired)`);
}

/** The statuses a filter asks for, as a list (undefined: any). */
export function filterStatuses(status: RunStatus | RunStatus[] | undefined): RunStatus[] | undefined {
  return status === undefined ? undefined : Array.isArray(status) ? status : [status];
}
