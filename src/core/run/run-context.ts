import { CallContext, segmentOf } from './base-context.js';
import type { RunContext } from '../vocabulary/contexts.js';
import type { Message } from '../vocabulary/messages.js';
import { resultContent } from '../vocabulary/outcome.js';
import type { RunResult } from '../vocabulary/result.js';
import type { EndReason } from '../vocabulary/state.js';
import type { Segment } from './segment.js';

/** The context of the `run` hook point: one per segment. */
export class SegmentContext extends CallContext implements RunContext {
  /** `segment` is the segment's number; the segment itself is the base class's private field. */
  constructor(owner: Segment, readonly input: Message[], readonly segment: number, readonly resumed: boolean) {
    super(owner);
  }

  end(output?: unknown, reason?: EndReason): RunResult {
    const owner = segmentOf(this);
    endRun(owner, output, reason);
    return owner.end.decide('hook_end');
  }
}

/**
 * A layer ends the run with `output`, which is kept in the run state: it must be JSON, and
 * `reason`, which must not pass for one of koagent's own ends. Shared by the run and model
 * contexts' `end`.
 */
export function endRun(segment: Segment, output: unknown, reason: EndReason | undefined): void {
  if (reason !== undefined && reason !== 'hook_end' && !/^(limit|stop):./.test(String(reason))) {
    throw new TypeError(`ctx.end(output, reason): reason must be 'hook_end', 'limit:<what>' or 'stop:<what>' (e.g. 'limit:cost'), not ${JSON.stringify(reason)}`);
  }
  if (output !== undefined) {
    try {
      resultContent(output);
    } catch (error) {
      throw new TypeError(`ctx.end(output): the output is kept in the run state, so it must be JSON; ${(error as Error).message.replace('the result is not JSON: ', '')}`);
    }
  }
  segment.end.requested = { output, reason: reason ?? 'hook_end' };
}

/**
 * For a run layer whose own code failed with `error` and that runs more of its own code before
 * it throws it (a criogen Hook's `onEnd`): from here on `ctx.state` shows the segment failing
 * with it, as the layers outside see it once it is thrown. Returns `error`, to throw.
 *
 * @example catch (error) { const thrown = failing(ctx, blame(error, hookName)); await cleanUp(ctx.state); throw thrown; }
 */
export function failing(ctx: RunContext, error: unknown): unknown {
  segmentOf(ctx).end.failing(error);
  return error;
}
