// One segment of a run, from start to end: its listeners, span, mode and metadata, the run
// stack, and how it ends (stored, published, traced).
import type { SubagentInfo } from '../core/vocabulary/contexts.js';
import type { EventListener, PermissionListener } from '../core/vocabulary/events.js';
import { copyPlain } from '../core/vocabulary/json.js';
import type { Message } from '../core/vocabulary/messages.js';
import type { NamedMiddleware } from '../core/vocabulary/middleware.js';
import type { RunResult } from '../core/vocabulary/result.js';
import type { AgentCore } from '../core/run/agent-core.js';
import { runSegment as runCoreSegment } from '../core/run/run-segment.js';
import type { RunState } from '../core/vocabulary/state.js';
import type { OutputPlan } from '../features/structured-output.js';
import { runSpan, spanVars, type Span } from '../features/tracing.js';
import type { DurableRun } from '../durable/durable-run.js';
import { hasEventLog } from '../stores/run-store.js';
import { playbackVars, type Playback } from '../features/recording/playback.js';
import { segmentMode } from './build.js';
import type { AgentOptions, RunCallOptions } from './options.js';

/** A segment as koagent itself starts it: the public call options, plus what streams and sub-agents pass. */
export interface SegmentRequest extends RunCallOptions {
  /** The run's output schema, settled (the agent's, unless the call gave its own). */
  output?: OutputPlan;
  streaming?: boolean;
  listeners?: readonly EventListener[];
  permissionListeners?: readonly PermissionListener[];
  subagent?: SubagentInfo;
  /** A parent agent's layers, run outermost in this (sub-agent) run. */
  inherited?: readonly NamedMiddleware[];
  parentSpan?: Span;
  /** The store holding this segment's run, with its lease. */
  durable?: DurableRun;
  /** A replay's world: replies and results from a stored run's record (`koagent/replay`). */
  playback?: Playback;
}

/** Run one segment of `state` on `core`: the run stack, then the segment's end, recorded. */
export async function runSegment(core: AgentCore, state: RunState, input: Message[], request: SegmentRequest, resumed: boolean, o: AgentOptions): Promise<RunResult<any>> {
  const listeners: EventListener[] = [...(request.listeners ?? [])];
  if (o.onEvent) listeners.push(o.onEvent);
  if (request.onEvent) listeners.push(request.onEvent);
  const permissionListeners: PermissionListener[] = [...(o.onPermissionDecision ? [o.onPermissionDecision] : []), ...(request.permissionListeners ?? [])];
  const { durable } = request;
  // The run's event log: asked for by the call or the agent, else kept for the segments that
  // stream and those that continue a run with a log (its readers follow the rest of it, and a
  // dead worker's text is taken back only by a segment that logs).
  if (durable !== undefined && hasEventLog(durable.store)) {
    const logs = request.eventLog ?? o.eventLog ?? (request.streaming === true || (resumed && (await durable.hasLog())));
    if (logs) listeners.push(await durable.openLog(resumed));
  }
  // The run span decides, by whether it records, if this segment's calls get spans of their own;
  // the stacks of a traced mode end it, as their outermost run layer.
  const span = runSpan(core, state.runId, state.sessionId, state.segment + 1, request.parentSpan);
  const tracing = span.isRecording();
  const { playback } = request;
  const mode = segmentMode(request.streaming === true, tracing, request.layerTrace ?? o.layerTrace === true, playback !== undefined);
  // The run's own bag: what a layer puts into ctx.metadata (or into an object in it) stays in this run.
  // Spread, not Object.assign: a `__proto__` key of the caller's stays a key, never the bag's prototype.
  const metadata = copyPlain({ ...o.metadata, ...request.metadata });
  const stopWhen = request.stopWhen === undefined ? undefined : Array.isArray(request.stopWhen) ? request.stopWhen : [request.stopWhen];
  const options = { metadata, context: request.context, signal: request.signal, listeners, permissionListeners, subagent: request.subagent, mode, stopWhen, observer: durable?.observe(state), runVar: playback === undefined ? spanVars(span) : { ...spanVars(span), ...playbackVars(playback) } };
  return runCoreSegment(core, state, input, resumed, options, durable);
}
