// A run's layer trace as OTLP JSON (the OTLP/HTTP JSON encoding of an ExportTraceServiceRequest),
// for any OpenTelemetry backend: one span for the run, one per call (a sub-agent's inside the
// lead's call that ran it), one per layer inside its call's, and each segment's run layers
// under the run (a sub-agent's under the lead's call). No dependency: it runs anywhere.
import { decisionAttributes, decisionOf, enclosing, layerAttributes, layerSpanName, type AttributeValue } from './attributes.js';
import { traceOf, type TracedCall, type TracedLayer } from './record.js';

/**
 * An OTLP JSON attribute (`{ key, value: { stringValue } }` and its kin).
 *
 * @example const attribute: OtlpAttribute = { key: 'koagent.layer.name', value: { stringValue: 'redact' } };
 *
 * @inline
 */
export interface OtlpAttribute {
  key: string;
  value: { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: { stringValue: string }[] } };
}

/**
 * One span as OTLP JSON encodes it: ids in hex, times as nanosecond strings, kind and status code as numbers.
 *
 * @example const names = otlp.resourceSpans[0].scopeSpans[0].spans.map((s: OtlpSpan) => s.name);
 *
 * @inline
 */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 3 client. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  /** 0 unset, 2 error. */
  status: { code: number; message?: string };
}

/**
 * What `traceToOtlp` gives: the body of an OTLP/HTTP JSON export (`POST /v1/traces`).
 *
 * @example await fetch('http://localhost:4318/v1/traces', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(traceToOtlp(state)) });
 */
export interface OtlpTraces {
  resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { scope: { name: string; version?: string }; spans: OtlpSpan[] }[] }[];
}

/**
 * A run's layer trace as OTLP JSON: give the run's state (its id names the trace, its agent the
 * service), or the record alone (`state.hookState['koagent.trace']`). A state without a trace
 * gives a run span only. Ids are derived from the run id, so exporting twice gives the same spans.
 *
 * @example const body = JSON.stringify(traceToOtlp(await store.loadRun(runId)));
 */
export function traceToOtlp(stateOrRecord: unknown): OtlpTraces {
  const state = (typeof stateOrRecord === 'object' && stateOrRecord !== null && 'hookState' in stateOrRecord ? stateOrRecord : {}) as { runId?: string; agentName?: string; sessionId?: string };
  const record = traceOf(stateOrRecord);
  const runId = state.runId ?? 'run';
  const traceId = hex(`trace:${runId}`, 32);
  const calls = record?.calls ?? [];
  const segments = record?.segments ?? [];
  const spans: OtlpSpan[] = [];
  const timed = [...calls, ...segments];
  const start = Math.min(...timed.map((c) => c.startedAt), Number.POSITIVE_INFINITY);
  const end = Math.max(...timed.map((c) => c.startedAt + c.durationMs), Number.NEGATIVE_INFINITY);
  const rootId = hex(`run:${runId}`, 16);
  const now = Date.now();
  spans.push({
    traceId, spanId: rootId, name: `invoke_agent ${state.agentName ?? 'agent'}`, kind: 1,
    startTimeUnixNano: nanos(Number.isFinite(start) ? start : now), endTimeUnixNano: nanos(Number.isFinite(end) ? end : now),
    attributes: attributes({ 'gen_ai.operation.name': 'invoke_agent', ...(state.agentName !== undefined ? { 'gen_ai.agent.name': state.agentName } : {}), ...(state.sessionId !== undefined ? { 'gen_ai.conversation.id': state.sessionId } : {}), 'koagent.run.id': runId }),
    status: { code: 0 },
  });
  // A call's span id: by its position, since an approved call runs twice under one id.
  const callIds = calls.map((call, i) => hex(`call:${runId}:${i}:${call.id}`, 16));
  const lastById = new Map<string, number>();
  calls.forEach((call, i) => {
    const parentIndex = call.parentCallId === undefined ? undefined : lastById.get(call.parentCallId);
    lastById.set(call.id, i);
    spans.push(callSpan(call, traceId, callIds[i], parentIndex === undefined ? rootId : callIds[parentIndex]));
    spans.push(...layerSpans(call, traceId, callIds[i], (j) => `layer:${runId}:${i}:${j}`));
  });
  segments.forEach((segment, i) => {
    // A sub-agent's segment ran inside the lead's call: the last call of that id before it.
    let parent = rootId;
    if (segment.parentCallId !== undefined) {
      for (let c = Math.min(segment.firstCall, calls.length) - 1; c >= 0; c--) if (calls[c].id === segment.parentCallId) {
        parent = callIds[c];
        break;
      }
    }
    spans.push(...layerSpans(segment, traceId, parent, (j) => `run-layer:${runId}:${i}:${j}`));
  });
  return {
    resourceSpans: [{
      resource: { attributes: attributes({ 'service.name': state.agentName ?? 'koagent' }) },
      scopeSpans: [{ scope: { name: 'koagent.layer-trace' }, spans }],
    }],
  };
}

/** The spans of the layers of a call (or a segment's run layers), each inside the layer around it. */
function layerSpans(owner: { startedAt: number; durationMs: number; layers: TracedLayer[] }, traceId: string, parentSpanId: string, key: (j: number) => string): OtlpSpan[] {
  const parents = enclosing(owner);
  const ids = owner.layers.map((_, j) => hex(key(j), 16));
  return owner.layers.map((layer, j) => {
    const threw = layer.effects.find((e) => e.type === 'threw');
    return {
      traceId, spanId: ids[j], parentSpanId: parents[j] === -1 ? parentSpanId : ids[parents[j]], name: layerSpanName(layer), kind: 1,
      startTimeUnixNano: nanos(owner.startedAt + layer.inAt), endTimeUnixNano: nanos(owner.startedAt + (layer.outAt ?? owner.durationMs)),
      attributes: attributes(layerAttributes(layer)),
      status: threw === undefined ? { code: 0 } : { code: 2, message: threw.message },
    };
  });
}

function callSpan(call: TracedCall, traceId: string, spanId: string, parentSpanId: string): OtlpSpan {
  const tool = call.kind === 'tool';
  const own: Record<string, AttributeValue> = tool
    ? { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, 'gen_ai.tool.call.id': call.id }
    : { 'gen_ai.operation.name': 'chat', 'koagent.call.purpose': call.name, ...(call.model !== undefined ? { 'gen_ai.request.model': call.model } : {}), ...(call.provider !== undefined ? { 'gen_ai.provider.name': call.provider } : {}) };
  Object.assign(own, { 'koagent.call.id': call.id, 'koagent.call.step': call.step, 'koagent.call.segment': call.segment, 'koagent.call.outcome': call.outcome });
  if (call.agentPath !== undefined) own['koagent.agent.path'] = call.agentPath;
  const decided = decisionOf(call);
  if (decided !== undefined) Object.assign(own, decisionAttributes(decided));
  return {
    traceId, spanId, parentSpanId, name: tool ? `execute_tool ${call.name}` : `chat ${call.name}`, kind: tool ? 1 : 3,
    startTimeUnixNano: nanos(call.startedAt), endTimeUnixNano: nanos(call.startedAt + call.durationMs),
    attributes: attributes(own),
    status: call.outcome === 'error' ? { code: 2 } : { code: 0 },
  };
}

function attributes(values: Record<string, AttributeValue>): OtlpAttribute[] {
  return Object.entries(values).map(([key, value]) => ({ key, value: otlpValue(value) }));
}

function otlpValue(value: AttributeValue): OtlpAttribute['value'] {
  if (Array.isArray(value)) return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { stringValue: value };
}

/** Epoch milliseconds (fractions kept to the microsecond) as a nanosecond string. */
function nanos(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}

/** `digits` hex digits derived from `text` (FNV-1a, 32 bits at a time with a running seed): never all zeros. */
function hex(text: string, digits: number): string {
  let out = '';
  for (let seed = 0; out.length < digits; seed++) {
    let h = 0x811c9dc5 ^ seed;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    out += (h >>> 0).toString(16).padStart(8, '0');
  }
  out = out.slice(0, digits);
  return /^0+$/.test(out) ? `1${out.slice(1)}` : out;
}
