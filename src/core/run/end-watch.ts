import type { RunContext } from '../vocabulary/contexts.js';
import type { Layer } from '../vocabulary/layer.js';
import type { RunResult } from '../vocabulary/result.js';
import { segmentOf } from './base-context.js';

/**
 * The run stack's user layers, each with a step of koagent's outside it and one inside the
 * last: as a layer (or the terminal) settles, its step tells the segment's end how the segment
 * ends so far — before the layer outside resumes, so what it reads in `ctx.state` after
 * `next()` says how the segment ended (see `SegmentEnd.answered`, `SegmentEnd.failing`).
 */
export function endWatched(user: Layer<RunContext, RunResult>[]): Layer<RunContext, RunResult>[] {
  if (user.length === 0) return user;
  return [...user.flatMap((layer) => [endWatch(layer.name), layer]), endWatch(undefined)];
}

/** The step outside a run layer named `inner` (undefined: the terminal). */
function endWatch(inner: string | undefined): Layer<RunContext, RunResult> {
  return {
    name: 'koagent:end',
    fn(ctx, next) {
      const { end } = segmentOf(ctx);
      end.goOn();
      return next().then(
        (result) => (end.answered(result), result),
        (error: unknown) => {
          end.failing(error, inner);
          throw error;
        },
      );
    },
  };
}
