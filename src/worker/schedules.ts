// Recurring runs: a schedule is pg-boss's cron on a queue of its own (pg-boss keeps one
// schedule per queue), whose jobs say which agent to start with what. Workers take the jobs
// of the schedules of their agents and start each as a run, as a client's start would.
import { newRunId } from '../core/vocabulary/state.js';
import type { RunInput } from '../core/vocabulary/messages.js';
import { enqueueStart } from './dispatch.js';
import type { JobParts } from './job-runner.js';
import { isScheduleQueue } from './schema.js';

/**
 * What a schedule starts, each time its cron fires.
 *
 * @example await client.schedule('nightly-report', { agent: 'reporter', cron: '0 3 * * *', input: 'Write the report', tz: 'Europe/Paris' });
 *
 * @inline
 */
export interface ScheduleSpec {
  agent: string;
  /** A cron expression (five fields: minute hour day month weekday), read by pg-boss. */
  cron: string;
  input: RunInput;
  /** The time zone of the cron expression (default UTC). */
  tz?: string;
  tenant?: string;
  priority?: number;
  metadata?: Record<string, unknown>;
  context?: unknown;
  version?: string;
  stream?: boolean;
}

/** The queues of schedules for this worker's agents, added to `queues` (pg-boss gives the list). */
export async function relaySchedules(parts: JobParts, queues: string[]): Promise<void> {
  const schedules = await parts.boss.getSchedules();
  for (const schedule of schedules) {
    const spec = schedule.data as ScheduleSpec | undefined;
    if (spec === undefined || !parts.agents.has(spec.agent) || !isScheduleQueue(schedule.name) || queues.includes(schedule.name)) continue;
    queues.push(schedule.name);
  }
}

/** A cron job of a schedule: start its run, once per job (its id is the idempotency key). */
export async function startScheduled(parts: JobParts, jobId: string, queue: string, spec: ScheduleSpec): Promise<string> {
  const { runId } = await enqueueStart(parts.db, parts.boss, {
    runId: newRunId(), agent: spec.agent, input: spec.input, version: spec.version, tenant: spec.tenant ?? '', priority: spec.priority ?? 0,
    idempotencyKey: `${queue}:${jobId}`, metadata: spec.metadata, context: spec.context, stream: spec.stream === true,
  });
  return runId;
}

