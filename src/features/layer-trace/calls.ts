// The outermost layers of a traced segment's run, model and tool stacks: each opens the entry of
// its segment or call in the run's trace, lets the recording layers inside add theirs, and
// settles it (and, when the run's spans record, exports its layers as spans). A sub-agent's
// segments and calls go into the lead's trace.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Layer } from '../../core/vocabulary/layer.js';
import type { BaseContext, ModelContext, RunContext, ToolContext } from '../../core/vocabulary/contexts.js';
import type { GenerateResult } from '../../core/vocabulary/model.js';
import type { RunResult } from '../../core/vocabulary/result.js';
import type { ToolOutcome } from '../../core/vocabulary/outcome.js';
import { parentSpanOf, runSpanOf } from '../tracing.js';
import { exportLayerSpans } from './otel.js';
import { TRACE_STATE, traceOf, type LayerTraceRecord, type TracedCall, type TracedLayer, type TracedSegment } from './record.js';

/** A call (or a segment's run stack) being traced: its entry, when it started (performance clock), how deep the layers now are. */
export interface LiveCall {
  call: { layers: TracedLayer[] };
  t0: number;
  depth: number;
  /** How many layers around the current one withhold values (`traceValues: false`). */
  withholding?: number;
}

/** Where a segment's calls are written: a record, and how to tell the writer of its run it changed. */
interface Target {
  record: LayerTraceRecord;
  flush(): void;
}

/** Inside a traced tool call: where a sub-agent run by it writes, and under which call. */
interface Frame {
  target: Target;
  callId: string;
}

// Where a traced call (or segment) keeps its entry (`ctx.var`), and a segment its record and
// its model calls per step (`ctx.runVar`).
const LIVE: unique symbol = Symbol('koagent.traceLive');
const TARGET: unique symbol = Symbol('koagent.traceTarget');
const MODEL_COUNTS: unique symbol = Symbol('koagent.traceModelCounts');

declare module '../../core/vocabulary/contexts.js' {
  interface CallVariables {
    /** @internal koagent's own slot. */
    [LIVE]?: LiveCall;
  }
  interface RunVariables {
    /** @internal koagent's own slot. */
    [TARGET]?: Target;
    /** @internal koagent's own slot. */
    [MODEL_COUNTS]?: Map<number, number>;
  }
}

/** Inside a traced tool call, across the async calls it makes: where a sub-agent run by it writes. */
const frames = new AsyncLocalStorage<Frame>();

/** The traced call (or segment) `ctx` belongs to, if it is traced. */
export function liveCall(ctx: BaseContext): LiveCall | undefined {
  return ctx.var[LIVE];
}

/**
 * The record a segment writes to: its run's own (continued from the state, copied, so a state
 * handed out before is never changed), or, in a sub-agent of a traced lead, the lead's.
 */
function place(ctx: BaseContext): { target: Target; parentCallId?: string; agentPath?: string[] } {
  const frame = ctx.subagent === undefined ? undefined : frames.getStore();
  if (frame !== undefined) return { target: frame.target, parentCallId: frame.callId, agentPath: ctx.subagent!.path.slice(1) };
  let target = ctx.runVar[TARGET];
  if (target === undefined) {
    const kept = traceOf(ctx.state.hookState[TRACE_STATE]);
    const record: LayerTraceRecord = { version: 1, calls: kept === undefined ? [] : [...kept.calls], segments: [...(kept?.segments ?? [])] };
    target = { record, flush: () => ctx.setHookState(TRACE_STATE, record) };
    ctx.runVar[TARGET] = target;
  }
  return { target };
}

function open(ctx: BaseContext, id: string, kind: TracedCall['kind'], name: string, step: number): { live: LiveCall & { call: TracedCall }; target: Target } {
  const { target, parentCallId, agentPath } = place(ctx);
  const call: TracedCall = { id, kind, name, step, segment: ctx.state.segment, startedAt: Date.now(), durationMs: 0, outcome: 'ok', layers: [] };
  if (parentCallId !== undefined) call.parentCallId = parentCallId;
  if (agentPath !== undefined) call.agentPath = agentPath;
  target.record.calls.push(call);
  const entry = { call, t0: performance.now(), depth: 0 };
  ctx.var[LIVE] = entry;
  return { live: entry, target };
}

const since = (t0: number) => Math.round((performance.now() - t0) * 1000) / 1000;

function close(entry: LiveCall & { call: TracedCall }, _target: Target, outcome: TracedCall['outcome']): void {
  const { call } = entry;
  call.durationMs = since(entry.t0);
  // A user layer that returned without next() settled the call itself.
  const settledByLayer = call.layers.some((l) => l.source !== 'builtin' && l.effects.some((e) => e.type === 'short-circuit'));
  call.outcome = outcome === 'ok' && settledByLayer ? 'short-circuit' : outcome;
}

function toolOutcome(out: ToolOutcome): TracedCall['outcome'] {
  if (out.requiresApproval === true) return 'approval';
  if (out.error?.kind === 'denied') return 'denied';
  if (out.error !== undefined) return 'error';
  return out.replacedBy === undefined ? 'ok' : 'short-circuit';
}

/** Around each tool call of a traced segment, outermost. */
export const traceToolLayer: Layer<ToolContext, ToolOutcome> = {
  name: 'koagent:layer-trace',
  fn(ctx, next) {
    const { live: entry, target } = open(ctx, ctx.toolCallId, 'tool', ctx.toolName, ctx.step);
    const settled = frames.run({ target, callId: ctx.toolCallId }, () => next());
    return settled.then((out) => {
      close(entry, target, toolOutcome(out));
      const span = parentSpanOf(ctx);
      if (span?.isRecording() === true) exportLayerSpans(span, entry.call);
      return out;
    }, (error: unknown) => {
      close(entry, target, 'error');
      throw error;
    });
  },
};

/** Around each model call of a traced segment, outermost. */
export const traceModelLayer: Layer<ModelContext, GenerateResult> = {
  name: 'koagent:layer-trace',
  fn(ctx, next) {
    const counts = (ctx.runVar[MODEL_COUNTS] ??= new Map());
    const n = (counts.get(ctx.step) ?? 0) + 1;
    counts.set(ctx.step, n);
    const { live: entry, target } = open(ctx, `model:${ctx.step}:${n}`, 'model', ctx.purpose, ctx.step);
    return next().then((out) => {
      named(entry.call, ctx);
      close(entry, target, 'ok');
      const span = runSpanOf(ctx);
      if (span?.isRecording() === true) exportLayerSpans(span, entry.call);
      return out;
    }, (error: unknown) => {
      named(entry.call, ctx);
      close(entry, target, 'error');
      throw error;
    });
  },
};

/** Name the model a call asked: the provider set last, since a layer inside may have swapped it (a fallback). */
function named(call: TracedCall, ctx: ModelContext): void {
  const { name, modelId } = ctx.provider ?? {};
  if (typeof name === 'string' && name !== '') call.provider = name;
  if (typeof modelId === 'string' && modelId !== '') call.model = modelId;
}

/**
 * Around each traced segment, outermost: the segment's entry records the run layers inside it
 * (run middleware, criogen onStart/onEnd), and the segment's record is handed to its state's
 * writer once, as the segment ends (completed, suspended or failed), so a store writes the trace
 * once a segment rather than again at every step's checkpoint (which would grow with the run's square).
 */
export const traceRunLayer: Layer<RunContext, RunResult> = {
  name: 'koagent:layer-trace',
  fn(ctx, next) {
    const { target, parentCallId, agentPath } = place(ctx);
    const entry: TracedSegment = { segment: ctx.state.segment, startedAt: Date.now(), durationMs: 0, outcome: 'failed', firstCall: target.record.calls.length, layers: [] };
    if (parentCallId !== undefined) entry.parentCallId = parentCallId;
    if (agentPath !== undefined) entry.agentPath = agentPath;
    (target.record.segments ??= []).push(entry);
    const t0 = performance.now();
    ctx.var[LIVE] = { call: entry, t0, depth: 0 };
    const end = (outcome: TracedSegment['outcome']) => {
      entry.durationMs = since(t0);
      entry.outcome = outcome;
      const span = runSpanOf(ctx);
      if (span?.isRecording() === true && entry.layers.length > 0) exportLayerSpans(span, entry);
      ctx.runVar[TARGET]?.flush();
    };
    return next().then((result) => {
      end(result.status);
      return result;
    }, (error: unknown) => {
      end('failed');
      throw error;
    });
  },
};
