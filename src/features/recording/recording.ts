// The recording as the build step installs it in a segment that records its layer trace: a run
// layer that starts the segment's recorder and hands the record to the state at its end, a model
// layer that marks each step's end, a provider layer that keeps each request's fingerprint and
// reply, and the way the execute step enters tools, keeping what each returned.
import type { Layer } from '../../core/vocabulary/layer.js';
import type { ModelContext, RunContext, Tool, ToolContext } from '../../core/vocabulary/contexts.js';
import type { GenerateResult } from '../../core/vocabulary/model.js';
import type { RunResult } from '../../core/vocabulary/result.js';
import type { RunState } from '../../core/vocabulary/state.js';
import type { ProviderCall } from '../../core/run/agent-core.js';
import type { ToolCallContext } from '../../core/run/tool-context.js';
import { isSuspension, type ToolInvoker } from '../../core/run/tool-steps.js';
import { unwrap } from '../../core/state/transcript-view.js';
import { Recorder } from './recorder.js';
import { replayRecordOf, REPLAY_STATE } from './record.js';

// Where a recording segment keeps its recorder (`ctx.runVar`).
const RECORDER: unique symbol = Symbol('koagent.recorder');

declare module '../../core/vocabulary/contexts.js' {
  interface RunVariables {
    /** @internal koagent's own slot. */
    [RECORDER]?: Recorder;
  }
}

/**
 * Outermost but for the spans and the trace: a segment of the lead agent (a sub-agent's run is
 * one tool call of the lead's, recorded there) starts a recorder continuing the run's record,
 * marks the run's start in its first segment, and hands the record to the state as it ends.
 * `withhold`: a layer of the agent keeps values out of traces (`traceValues: false`), so no reply
 * or result is kept either.
 */
export function recordRunLayer(withhold: boolean): Layer<RunContext, RunResult> {
  return {
    name: 'koagent:record',
    fn(ctx, next) {
      if (ctx.subagent !== undefined) return next();
      const state = unwrap(ctx.state) as RunState;
      const recorder = new Recorder(state, replayRecordOf(state.hookState[REPLAY_STATE]), withhold);
      ctx.runVar[RECORDER] = recorder;
      if (recorder.record.marks.length === 0) recorder.mark('start', state.steps);
      return next().then((result) => {
        recorder.flush(ctx);
        return result;
      }, (error: unknown) => {
        recorder.flush(ctx);
        throw error;
      });
    },
  };
}

/** Outermost in the model stack: the steps before this turn are done; the state there is marked. */
export const recordModelLayer: Layer<ModelContext, GenerateResult> = {
  name: 'koagent:record',
  fn(ctx, next) {
    ctx.runVar[RECORDER]?.mark('step', ctx.step - 1);
    return next();
  },
};

/** Outermost in the provider stack: each request as the provider gets it, and what came back. */
export const recordProviderLayer: Layer<ProviderCall, GenerateResult> = {
  name: 'koagent:record',
  fn(call, next) {
    const recorder = call.runVar[RECORDER];
    if (recorder === undefined) return next();
    const name = call.provider.name;
    const entry = recorder.modelCall(call.request, call.purpose, call.turn?.step, typeof name === 'string' ? name : undefined);
    return next().then((reply) => {
      recorder.replied(entry, reply);
      return reply;
    }, (error: unknown) => {
      recorder.failed(entry, error);
      throw error;
    });
  },
};

/** How a recording segment enters a tool: as usual, keeping the call, its arguments and what it returned or threw. */
export const recordingInvoke: ToolInvoker = (tool: Tool, args: unknown, ctx: ToolContext) => {
  const recorder = ctx.runVar[RECORDER];
  if (recorder === undefined) return tool.execute(args, ctx);
  const { call } = ctx as ToolCallContext;
  const entry = recorder.toolCall(call.id, call.name, ctx.step, call.current);
  let value: unknown;
  try {
    value = tool.execute(args, ctx);
  } catch (error) {
    recorder.failed(entry, error);
    throw error;
  }
  if (typeof (value as PromiseLike<unknown> | undefined)?.then !== 'function') {
    recorder.toolResult(entry, value, isSuspension(value));
    return value;
  }
  return Promise.resolve(value).then((result) => {
    recorder.toolResult(entry, result, isSuspension(result));
    return result;
  }, (error: unknown) => {
    recorder.failed(entry, error);
    throw error;
  });
};
