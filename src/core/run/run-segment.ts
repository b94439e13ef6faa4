import { failureRecord, runFailure } from '../vocabulary/errors.js';
import type { AgentEvent } from '../vocabulary/events.js';
import type { Message } from '../vocabulary/messages.js';
import type { RunResult } from '../vocabulary/result.js';
import type { RunState } from '../vocabulary/state.js';
import type { AgentCore } from './agent-core.js';
import { SegmentContext } from './run-context.js';
import { Segment, type SegmentOptions } from './segment.js';

/** A segment's end, as its `run.end` event tells it (the event bus adds `runId` and `at`). */
export type SegmentEnd = Omit<Extract<AgentEvent, { type: 'run.end' }>, 'runId' | 'at'>;

/** What whoever runs a segment adds around it: a store that keeps the run (see `runSegment`). */
export interface SegmentKeeper {
  /** Told how to cancel the segment, for when its store takes the run away. */
  watch(abort: (reason: unknown) => void): void;
  /**
   * The segment's end is in the state: resolves once it is kept (a failed one's, if it can be).
   * `end` is the `run.end` about to be published, for a keeper that logs the segment's events.
   */
  finish(end: SegmentEnd): Promise<void>;
  /** The segment is over, whichever way. */
  stop(): void;
}

/**
 * Run one segment of `state` on `core`: it begins, its run stack runs, and its end is written
 * (and kept, by `keeper`), published and returned — or it fails with the one error a failed run
 * rejects with. The agent starts every segment here: nothing outside the core makes a segment.
 *
 * @example const result = await runSegment(core, state, [{ role: 'user', content: 'Hi' }], false, options);
 */
export async function runSegment(core: AgentCore, state: RunState, input: Message[], resumed: boolean, options: SegmentOptions, keeper?: SegmentKeeper): Promise<RunResult> {
  const segment = new Segment(core, state, options);
  keeper?.watch((reason) => segment.cancel.abort(reason));
  const number = segment.begin();
  const ctx = new SegmentContext(segment, input, number, resumed);
  segment.bus.publish({ type: 'run.start', sessionId: state.sessionId, segment: number, resumed });
  try {
    const result = await segment.stacks.run(ctx);
    segment.close(result);
    const end: SegmentEnd = { type: 'run.end', status: result.status, stopReason: result.stopReason };
    // A durable run's result is given only once its end is stored (its logged run.end with it).
    if (keeper !== undefined) await keeper.finish(end);
    segment.bus.publish(end);
    return result;
  } catch (error) {
    const failure = runFailure(error, state);
    const recorded = failureRecord(failure);
    // Whatever still runs in the failed segment (an orphaned next()) may not write to its state, and is cancelled.
    segment.fail(recorded, error);
    // Kept as failed, if the keeper can; if it cannot, the run is picked up again later as it was.
    const end: SegmentEnd = { type: 'run.end', status: 'failed', error: recorded };
    await keeper?.finish(end).catch(() => undefined);
    segment.bus.publish(end);
    throw failure;
  } finally {
    keeper?.stop();
    segment.cancel.dispose();
  }
}
