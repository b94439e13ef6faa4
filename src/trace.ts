/**
 * The layer trace of a run, as code reads it: the record's types, where a state keeps it, its
 * text for a terminal, and its export as OTLP JSON for any OpenTelemetry backend. Record one with
 * `createAgent({ layerTrace: true })` or `run(input, { layerTrace: true })`.
 *
 * @example
 * ```ts
 * import { formatTrace, traceOf, traceToOtlp } from 'koagent/trace';
 * ```
 *
 * @packageDocumentation
 * @module koagent/trace
 */
// The `koagent/trace` entry: the layer trace's record, its text and its OTLP JSON export.
// Nothing here needs a driver or the OpenTelemetry SDK, so viewers and exporters can import it anywhere.
/** @category Layer trace */
export { traceOf, type LayerTraceRecord, type TracedCall, type TracedEffect, type TracedSegment } from './features/layer-trace/record.js';
/** @category Layer trace */
export { traceToOtlp } from './features/layer-trace/otlp.js';
/** @category Layer trace */
export { formatTrace } from './features/layer-trace/format.js';
