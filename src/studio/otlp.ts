// The run's layer trace as OTLP JSON (an ExportTraceServiceRequest), for any OpenTelemetry
// backend: one span per traced call, one child span per layer.
import { createHash } from 'node:crypto';
import type { RunState } from '../api.js';
import type { LayerTraceRecord } from './trace-types.js';

const hex = (seed: string, bytes: number) => createHash('sha256').update(seed).digest('hex').slice(0, bytes * 2);
const nanos = (ms: number) => `${BigInt(Math.round(ms * 1000)) * 1000n}`;
const attr = (key: string, value: string | number) => ({ key, value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value } });

/**
 * The OTLP JSON of a run's layer trace.
 *
 * @example const body = traceToOtlp(state.hookState['koagent.trace'] as LayerTraceRecord, state);
 */
// integration: traceToOtlp — the runtime's own conversion replaces this one when it lands.
export function traceToOtlp(record: LayerTraceRecord, state: RunState): Record<string, unknown> {
  const traceId = hex(state.runId, 16);
  const spans = record.calls.flatMap((call) => {
    const spanId = hex(`${state.runId}/${call.id}`, 8);
    const parent = call.parentCallId === undefined ? {} : { parentSpanId: hex(`${state.runId}/${call.parentCallId}`, 8) };
    const own = {
      traceId, spanId, ...parent, name: `${call.kind} ${call.name}`, kind: 1,
      startTimeUnixNano: nanos(call.startedAt), endTimeUnixNano: nanos(call.startedAt + call.durationMs),
      attributes: [attr('koagent.call.id', call.id), attr('koagent.call.kind', call.kind), attr('koagent.step', call.step), attr('koagent.segment', call.segment), attr('koagent.outcome', call.outcome)],
      status: { code: call.outcome === 'error' ? 2 : 1 },
    };
    const layers = call.layers.map((layer, i) => ({
      traceId, spanId: hex(`${state.runId}/${call.id}/${i}`, 8), parentSpanId: spanId, name: `layer ${layer.name}`, kind: 1,
      startTimeUnixNano: nanos(call.startedAt + layer.inAt), endTimeUnixNano: nanos(call.startedAt + (layer.outAt ?? call.durationMs)),
      attributes: [attr('koagent.layer.source', layer.source), attr('koagent.layer.self_ms', layer.selfMs), attr('koagent.layer.next_calls', layer.nextCalls), attr('koagent.layer.effects', JSON.stringify(layer.effects))],
    }));
    return [own, ...layers];
  });
  return {
    resourceSpans: [{
      resource: { attributes: [attr('service.name', 'koagent'), attr('koagent.agent', state.agentName), attr('koagent.run_id', state.runId)] },
      scopeSpans: [{ scope: { name: 'koagent.studio' }, spans }],
    }],
  };
}
