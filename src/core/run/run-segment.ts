import { failureRecord, runFailure } from '../vocabulary/errors.js';
import type { Message } from '../vocabulary/messages.js';
import type { RunResult } from '../vocabulary/result.js';
import type { RunState } from '../vocabulary/state.js';
import type { AgentCore } from './agent-core.js';
import { SegmentContext } from './run-context.js';
import { Segment, type SegmentOptions } from './segment.js';

/** What whoever runs a segment adds around it: a store that keeps the run (see `runSegment`). */
export interface SegmentKeeper {
  /** Told how to cancel the segment, for when its store takes the run away. */
  watch(abort: (reason: unknown) => void): void;
  /** The segment's end is in the state: resolves once it is kept (a failed one's, if it can be). */
  finish(): Promise<void>;
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
    // A durable run's result is given only once its end is stored.
    if (keeper !== undefined) await keeper.finish();
    segment.bus.publish({ type: 'run.end', status: result.status, stopReason: result.stopReason });
    return result;
  } catch (error) {
    const failure = runFailure(error, state);
    const recorded = failureRecord(failure);
    // Whatever still runs in the failed segment (an orphaned next()) may not write to its state, and is cancelled.
    segment.fail(recorded, error);
    // Kept as failed, if the keeper can; if it cannot, the run is picked up again later as it was.
    await keeper?.finish().catch(() => undefined);
    segment.bus.publish({ type: 'run.end', status: 'failed', error: recorded });
    throw failure;
  } finally {
    keeper?.stop();
    segment.cancel.dispose();
  }
}
