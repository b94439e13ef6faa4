// The layer trace as the studio reads it: the runtime's own record types, re-exported type-only
// so the page's bundle can import them without pulling the record module's code into the browser.
export type { JsonChange, LayerTraceRecord, TracedCall, TracedEffect, TracedLayer, TracedSegment } from '../features/layer-trace/record.js';
