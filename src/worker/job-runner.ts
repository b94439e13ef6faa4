// One job of the queue, run by a worker: the checks that make a duplicate or stale job do
// nothing, the agent's slot, and the segment itself through the agent's public API (run, send,
// resume, recover) on the run store. The store decides who writes the run; this decides what
// the dispatch row says afterwards.
import type PgBoss from 'pg-boss';
import type { Agent } from '../agent/agent.js';
import type { Logger } from '../core/vocabulary/contexts.js';
import { describe, KoagentError, RunFailedError } from '../core/vocabulary/errors.js';
import type { AgentEvent } from '../core/vocabulary/events.js';
import type { RunInput } from '../core/vocabulary/messages.js';
import type { RunResult } from '../core/vocabulary/result.js';
import type { RunStore } from '../stores/run-store.js';
import type { QueueDb } from './connection.js';
import { getDispatch, markActive, markCancelled, markDead, markQueued, markSettled, pinVersion, releaseRun, sendJob, settleFromStore, type Dispatch, type JobData } from './dispatch.js';
import { queueName } from './schema.js';
import type { AgentLimit, Slots } from './slots.js';

/** An agent a worker runs, with the version its runs belong to. */
export interface VersionedAgent {
  agent: Agent<any, any>;
  version: string;
}

/**
 * What a worker counts: jobs by how they ended.
 *
 * @example const { segments, recovered, dead } = worker.counts;
 *
 * @inline
 */
export interface WorkerCounts {
  /** Segments run to their end (completed, suspended or failed as the run's own outcome). */
  segments: number;
  /** Runs this worker took over from a dead one. */
  recovered: number;
  /** Jobs that did nothing: a duplicate, a stale resume, a run another worker holds. */
  refused: number;
  /** Jobs sent back for later: the agent or the tenant had no free slot. */
  deferred: number;
  /** Runs that went to the dead letters. */
  dead: number;
}

/** What a job needs of its worker. */
export interface JobParts {
  id: string;
  db: QueueDb;
  boss: PgBoss;
  store: RunStore;
  logger: Logger;
  agents: ReadonlyMap<string, VersionedAgent>;
  slots: Slots;
  limits: Readonly<Record<string, AgentLimit>>;
  maxAttempts: number;
  retryOn: (error: { code: string; message: string }) => boolean;
  retryDelayMs: number;
  /** Log each segment's events in the run's event log (`eventLog`). */
  recordEvents: boolean;
  /** The segments running now, by run, each with the controller a cancel aborts. */
  running: Map<string, AbortController>;
  /** The jobs whose run's dispatch row this worker took when it fetched them (see `holdRuns`). */
  holding: Set<string>;
  counts: WorkerCounts;
}

/** How a job ended, for the log and the counts. */
export type JobOutcome = 'ran' | 'refused' | 'deferred' | 'forwarded' | 'dead' | 'cancelled';

/** Run one job; a throw fails it in pg-boss (which retries it, up to its limit). */
export async function runJob(parts: JobParts, job: PgBoss.JobWithMetadata<JobData>): Promise<JobOutcome> {
  try {
    return await jobOf(parts, job, parts.holding.has(job.id));
  } finally {
    parts.holding.delete(job.id);
  }
}

/**
 * A start, resume or retry goes ahead only if this job took the run's row (else another worker
 * holds it: the job is a duplicate). A recover needs no row: the store's claim decides, and the
 * row is taken when the segment starts.
 */
async function jobOf(parts: JobParts, job: PgBoss.JobWithMetadata<JobData>, held: boolean): Promise<JobOutcome> {
  const data = job.data;
  const entry = parts.agents.get(data.agent);
  // A duplicate is refused before it reads or pins anything: only the job holding the row may.
  if (entry === undefined || (!held && data.kind !== 'recover')) return refused(parts);
  // A start reads its row and pins its version in one statement.
  const row = data.kind === 'start' ? await pinVersion(parts.db, data.runId, entry.version) : await getDispatch(parts.db, data.runId);
  if (row === undefined) return refused(parts);
  const mine = held ? row : undefined;
  if (row.state === 'dead' || row.state === 'cancelled') return refused(parts, mine);
  if (row.version !== entry.version) {
    // A new run another version's worker took first and then lost: it goes to its own version.
    if (data.kind !== 'start') return refused(parts, mine);
    await parts.db.tx(async (tx) => {
      await releaseRun(tx, row.runId, parts.id);
      await sendJob(tx, parts.boss, queueName(data.agent, row.version!), data, { priority: row.priority });
    });
    return 'forwarded';
  }
  if (row.cancel && data.kind !== 'recover') {
    await markCancelled(parts.db, row.runId);
    return 'cancelled';
  }
  if (data.kind === 'recover' && row.attempts >= parts.maxAttempts) {
    const message = `run ${row.runId}: its segment was started ${row.attempts} times and never ended (each time its worker died or was stopped); it is not taken over again: look at it, then client.retry('${row.runId}')`;
    await markDead(parts.db, row.runId, { code: 'dead_letter', message });
    parts.counts.dead++;
    return 'dead';
  }
  const limit = parts.limits[data.agent];
  const slot = limit === undefined ? undefined : await parts.slots.take(data.agent, row.tenant, row.runId, limit);
  if (slot === false) {
    // Back-pressure: the job comes back a little later, with its priority, as a new job (not a failure).
    const delay = 100 + Math.floor(Math.random() * 200);
    await parts.db.tx(async (tx) => {
      await releaseRun(tx, row.runId, parts.id);
      await sendJob(tx, parts.boss, job.name, data, { priority: job.priority, startAfter: new Date(Date.now() + delay) });
    });
    parts.counts.deferred++;
    return 'deferred';
  }
  // A slot the run held already is another job's (a duplicate's) until this segment gets the run.
  let ownsSlot = slot === 'taken';
  const onBegan = () => {
    if (slot !== 'held') return;
    parts.slots.adopt(row!.runId);
    ownsSlot = true;
  };
  try {
    return await runSegment(parts, entry, row, data, job, onBegan, held);
  } finally {
    if (ownsSlot) await parts.slots.release(row.runId).catch((error: unknown) => parts.logger.warn(`koagent worker: giving back the slot of run ${row!.runId} failed (${describe(error)}); it frees itself when its lease runs out`));
  }
}

/** A job that does nothing; the row it held is given back. */
async function refused(parts: JobParts, held?: Dispatch): Promise<JobOutcome> {
  parts.counts.refused++;
  if (held !== undefined) await releaseRun(parts.db, held.runId, parts.id);
  return 'refused';
}

/**
 * The store refused a job whose row this worker holds (the run was started, resumed or
 * finished already — its last worker died before it said so): the row is set from the store.
 */
async function reconciled(parts: JobParts, row: Dispatch, held: boolean): Promise<JobOutcome> {
  const state = await parts.store.loadRun(row.runId).catch(() => undefined);
  if (state === undefined || state.status === 'running') return refused(parts, held ? row : undefined);
  parts.counts.refused++;
  await settleFromStore(parts.db, state);
  return 'refused';
}

/** The segment a job asks for, through the agent; the dispatch row is set from how it ended. */
async function runSegment(parts: JobParts, entry: VersionedAgent, row: Dispatch, data: JobData, job: PgBoss.JobWithMetadata<JobData>, onBegan: () => void, held: boolean): Promise<JobOutcome> {
  const { db, logger } = parts;
  const controller = new AbortController();
  if (row.cancel) controller.abort(new KoagentError('timeout', 'the run was cancelled by its client'));
  parts.running.set(row.runId, controller);
  // The dispatch row says `active` once the store gave this worker the run (its segment started).
  let began: Promise<void> | undefined;
  const onEvent = (event: AgentEvent) => {
    if (event.type === 'run.start' && began === undefined) {
      onBegan();
      began = markActive(db, row.runId, parts.id, parts.store.leaseMs);
    }
  };
  const options = {
    store: parts.store,
    signal: controller.signal,
    context: row.context,
    metadata: { ...row.metadata, koagentWorker: { id: parts.id, version: entry.version } },
    stream: row.stream,
    // The segment's events go to the run's log in the store, with its checkpoints: a client
    // follows them from there, and a segment's events are all stored before it settles.
    eventLog: parts.recordEvents,
  };
  try {
    const result = await segment(entry.agent, row, data, options, onEvent);
    await began;
    if (result === undefined) return await reconciled(parts, row, held);
    if (data.kind === 'recover') parts.counts.recovered++;
    parts.counts.segments++;
    if (row.cancel || controller.signal.aborted) await markCancelled(db, row.runId, result.status, result.stopReason);
    else await markSettled(db, row.runId, result.status, result.stopReason, undefined);
    return 'ran';
  } catch (error) {
    await began?.catch(() => undefined);
    return await failed(parts, row, data, job, error, began !== undefined, held);
  } finally {
    parts.running.delete(row.runId);
  }
}

/** Options of the agent call a segment is, beside the run's own. */
interface SegmentOptions {
  store: RunStore;
  signal: AbortSignal;
  context: unknown;
  metadata: Record<string, unknown>;
  stream: boolean;
  eventLog: boolean;
}

/** Run the segment a job asks for: its result, or undefined when there was nothing to do (a recover that found the run taken). */
async function segment(agent: Agent<any, any>, row: Dispatch, data: JobData, options: SegmentOptions, onEvent: (event: AgentEvent) => void): Promise<RunResult | undefined> {
  const { stream, ...rest } = options;
  const call = { ...rest, onEvent: stream ? undefined : onEvent, stream };
  switch (data.kind) {
    case 'start': {
      const input = row.input as RunInput;
      const started = row.sessionId === null ? agent.run(input, { ...call, runId: row.runId } as never) : agent.send(input, { ...call, runId: row.runId, sessionId: row.sessionId } as never);
      return follow(started as unknown as Promise<RunResult>, stream, onEvent);
    }
    case 'resume':
    case 'retry': {
      const decisions = data.kind === 'resume' ? data.decisions : {};
      const stored = row.adopt ? await options.store.loadRun(row.runId) : undefined;
      const target = stored === undefined ? row.runId : agent.runs.adoptState(stored);
      return follow(agent.resume(target, decisions, call as never) as unknown as Promise<RunResult>, stream, onEvent);
    }
    case 'recover': {
      // The hold and the lease lapse together; waiting for the lease (or for its renewal, when
      // its worker is alive after all) makes a job sent a moment early do its work.
      const recovered = await follow(agent.runs.recover({ ...call, runId: row.runId, wait: true } as never) as unknown as Promise<{ result?: RunResult; error?: unknown }[]>, stream, onEvent);
      if (recovered.length === 0) return undefined;
      const [{ result, error }] = recovered;
      if (error !== undefined) throw error;
      return result;
    }
  }
}

/** The call's result; for a streamed call, its events are read as they come (text deltas included). */
async function follow<T>(call: Promise<T> | AsyncIterable<AgentEvent> & { result: Promise<T> }, stream: boolean, onEvent: (event: AgentEvent) => void): Promise<T> {
  if (!stream) return call as Promise<T>;
  const streamed = call as AsyncIterable<AgentEvent> & { result: Promise<T> };
  try {
    for await (const event of streamed) onEvent(event);
  } catch {
    // The stream ends with the run's failure; `result` rejects with the same error.
  }
  return streamed.result;
}

/**
 * A segment that failed: the run's own failure (stored failed) is retried while its error is
 * one `retryOn` accepts and attempts are left, else it settles failed — or, when it was
 * retried to the end, dies. Anything else fails the job, for pg-boss to retry, and dies with
 * the job's last retry.
 */
async function failed(parts: JobParts, row: Dispatch, data: JobData, job: PgBoss.JobWithMetadata<JobData>, error: unknown, began: boolean, held: boolean): Promise<JobOutcome> {
  const { db } = parts;
  const code = KoagentError.is(error) ? error.code : 'internal';
  const fault = { code, message: describe(error) };
  // Another worker holds the run now (this one's lease ran out): it is that worker's to record.
  if (code === 'lease_lost') return refused(parts, row);
  // A run the store could not read, or recovery refused (another version's): the store stored it failed.
  if (code === 'corrupt_run' || (code === 'invalid_resume' && data.kind === 'recover')) {
    await markSettled(db, row.runId, 'failed', undefined, fault);
    return 'ran';
  }
  // A start or resume the store refused (the run exists, the segment was resumed): a duplicate.
  if (code === 'invalid_resume' && !began) return reconciled(parts, row, held);
  if (error instanceof RunFailedError) {
    parts.counts.segments++;
    const attempts = (await getDispatch(db, row.runId))?.attempts ?? row.attempts;
    if (!parts.retryOn(fault)) {
      await markSettled(db, row.runId, 'failed', error.state.stopReason, fault);
      return 'ran';
    }
    if (attempts >= parts.maxAttempts) {
      await markDead(db, row.runId, { code: fault.code, message: `run ${row.runId} failed ${attempts} times; the last error: ${fault.message}` });
      parts.counts.dead++;
      return 'dead';
    }
    const delay = parts.retryDelayMs * 2 ** Math.max(0, attempts - 1);
    await db.tx(async (tx) => {
      await markQueued(tx, row.runId, ['active', 'settled', 'queued'], fault);
      await sendJob(tx, parts.boss, queueName(row.agentName, row.version!), { kind: 'retry', runId: row.runId, agent: row.agentName }, { priority: row.priority, startAfter: new Date(Date.now() + delay) });
    });
    return 'ran';
  }
  if (error instanceof TypeError || job.retryCount >= job.retryLimit) {
    // A misuse (input the agent refuses) fails the same way every time; so does a job out of retries.
    await markDead(db, row.runId, fault);
    parts.counts.dead++;
    return 'dead';
  }
  // pg-boss retries the job: whichever worker fetches it then holds the row.
  await releaseRun(db, row.runId, parts.id);
  throw error;
}
