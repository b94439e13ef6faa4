// A traced call's layers as OpenTelemetry spans, children of the call's span (a tool call's
// `execute_tool`, or, for a model call and a segment's run layers, the run's span), each inside
// the layer around it.
import { context, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { enclosing, layerAttributes, layerSpanName } from './attributes.js';
import type { TracedLayer } from './record.js';

/** Export the layers of `call` (or of a segment) as spans under `parent`, with the times they were recorded at. */
export function exportLayerSpans(parent: Span, call: { startedAt: number; durationMs: number; layers: TracedLayer[] }): void {
  const tracer = trace.getTracer('koagent');
  const parents = enclosing(call);
  const spans: Span[] = [];
  call.layers.forEach((layer, i) => {
    const above = parents[i] === -1 ? parent : spans[parents[i]];
    const span = tracer.startSpan(layerSpanName(layer), { startTime: call.startedAt + layer.inAt, attributes: layerAttributes(layer) }, trace.setSpan(context.active(), above));
    if (layer.effects.some((e) => e.type === 'threw')) span.setStatus({ code: SpanStatusCode.ERROR });
    spans.push(span);
  });
  // Ended innermost first, so an exporter never sees a child end after its parent.
  for (let i = spans.length - 1; i >= 0; i--) {
    const layer = call.layers[i];
    spans[i].end(call.startedAt + (layer.outAt ?? call.durationMs));
  }
}
