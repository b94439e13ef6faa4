// The layer trace as OpenTelemetry spans (each layer a child of its call's span, inside the layer
// around it, with its effects as attributes), and as OTLP JSON (traceToOtlp).
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAgent, type Middleware } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { traceToOtlp } from '../../../src/trace.js';
import type { OtlpSpan } from '../../../src/features/layer-trace/otlp.js';
import { search } from './support.js';

const exporter = new InMemorySpanExporter();
beforeAll(() => trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })));
afterAll(() => trace.disable());
beforeEach(() => exporter.reset());

const lang: Middleware = { name: 'lang', tool: (ctx, next) => { ctx.args = { q: 'cats lang:en' }; return next(); } };
const searchOnce = () => mockModel([{ toolCalls: [{ name: 'search', args: { q: 'cats' }, id: 'c1' }] }, 'Done.']);
const spans = () => exporter.getFinishedSpans();
const one = (name: string): ReadableSpan => {
  const found = spans().filter((s) => s.name === name);
  expect(found, name).toHaveLength(1);
  return found[0];
};
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;

describe('OpenTelemetry spans', () => {
  it('makes each run layer of a segment a span under the run\'s span, each inside the one around it', async () => {
    const outer: Middleware = { name: 'outer', run: (_ctx, next) => next() };
    const inner: Middleware = { name: 'inner', run: (_ctx, next) => next() };
    await createAgent({ name: 'greeter', model: mockModel(['Hello.']), middleware: [outer, inner], layerTrace: true }).run('Hi');
    const run = one('invoke_agent greeter');
    expect(parentOf(one('layer outer'))).toBe(idOf(run));
    expect(parentOf(one('layer inner'))).toBe(idOf(one('layer outer')));
  });

  it('makes each layer of a tool call a span under the call\'s span, each inside the one around it, with its effects', async () => {
    await createAgent({ name: 'finder', model: searchOnce(), tools: [search], middleware: [lang], layerTrace: true }).run('Find cats');
    const tool = one('execute_tool search');
    const validate = one('layer koagent:validate');
    const rewrite = one('layer lang');
    expect(parentOf(validate)).toBe(idOf(tool));
    expect(parentOf(rewrite)).toBe(idOf(validate));
    expect(parentOf(one('layer koagent:resolve'))).toBe(idOf(rewrite));
    expect(rewrite.attributes['koagent.layer.source']).toBe('middleware');
    expect(rewrite.attributes['koagent.layer.effects']).toEqual(['rewrote-args']);
    expect(JSON.parse(String(rewrite.attributes['koagent.layer.rewrote-args']))).toEqual([{ path: '/args/q', before: 'cats', after: 'cats lang:en' }]);
  });

  it('makes no layer spans without the layer trace, and no trace without spans when only tracing is on', async () => {
    const result = await createAgent({ model: searchOnce(), tools: [search], middleware: [lang] }).run('Find cats');
    expect(spans().filter((s) => s.name.startsWith('layer '))).toEqual([]);
    expect(spans().length).toBeGreaterThan(0);
    expect(result.state.hookState['koagent.trace']).toBeUndefined();
  });
});

describe('traceToOtlp', () => {
  it('gives OTLP JSON: a resource, a scope, and spans for the run, each call and each layer, parented as the onion', async () => {
    const result = await createAgent({ name: 'finder', model: searchOnce(), tools: [search], middleware: [lang], layerTrace: true }).run('Find cats');
    const otlp = traceToOtlp(result.state);
    expect(otlp.resourceSpans).toHaveLength(1);
    const [resource] = otlp.resourceSpans;
    expect(resource.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'finder' } });
    const { spans: all } = resource.scopeSpans[0];
    const byName = (name: string) => all.find((s) => s.name === name)!;
    const root = byName('invoke_agent finder');
    const call = byName('execute_tool search');
    const rewrite = byName('layer lang');
    expect(root.parentSpanId).toBeUndefined();
    expect(call.parentSpanId).toBe(root.spanId);
    expect(rewrite.parentSpanId).toBe(byName('layer koagent:validate').spanId);
    for (const span of all) {
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.startTimeUnixNano).toMatch(/^\d+$/);
      expect(BigInt(span.endTimeUnixNano) >= BigInt(span.startTimeUnixNano)).toBe(true);
      expect(typeof span.kind).toBe('number');
    }
    expect(new Set(all.map((s) => s.spanId)).size).toBe(all.length);
    expect(rewrite.attributes).toContainEqual({ key: 'koagent.layer.next_calls', value: { intValue: '1' } });
    expect(rewrite.attributes).toContainEqual({ key: 'koagent.layer.effects', value: { arrayValue: { values: [{ stringValue: 'rewrote-args' }] } } });
    // Same run, same ids: exporting twice sends the same spans.
    expect(traceToOtlp(JSON.parse(JSON.stringify(result.state)))).toEqual(otlp);
  });

  it('accepts the record alone, and gives a run span only for a state without a trace', async () => {
    const result = await createAgent({ model: mockModel(['Hi.']), layerTrace: true }).run('Hi');
    const fromRecord = traceToOtlp(result.state.hookState['koagent.trace']).resourceSpans[0].scopeSpans[0].spans;
    expect(fromRecord.map((s: OtlpSpan) => s.name)).toEqual(['invoke_agent agent', 'chat turn']);
    // The model call's span names the model, as the live spans do.
    expect(fromRecord[1].attributes).toEqual(expect.arrayContaining([{ key: 'gen_ai.request.model', value: { stringValue: 'mock' } }, { key: 'gen_ai.provider.name', value: { stringValue: 'mockModel' } }]));
    const untraced = await createAgent({ model: mockModel(['Hi.']) }).run('Hi');
    expect(traceToOtlp(untraced.state).resourceSpans[0].scopeSpans[0].spans).toHaveLength(1);
  });
});
