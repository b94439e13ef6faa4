// A human's decision in the layer trace and the spans: the approval step of the segment where a
// call settled says what was decided (approved as asked, approved with edited arguments from →
// to, denied), by whom and through which surface; the tool call's span carries the same.
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Middleware, type RunResult } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { traceToOtlp } from '../../../src/trace.js';
import { callsOf, layer, toolCall } from './support.js';

const exporter = new InMemorySpanExporter();
beforeAll(() => trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })));
afterAll(() => trace.disable());
beforeEach(() => exporter.reset());

const ISO = /^\d{4}-\d\d-\d\dT/;

/** A traced teller asking to transfer 42.5 to Ada; `seen` lists the calls its `audit` layer saw. */
function teller(middleware: Middleware[] = []) {
  const seen: string[] = [];
  const audit: Middleware = { name: 'audit', tool: (ctx, next) => { seen.push(`${ctx.toolCallId} ${JSON.stringify(ctx.args)}`); return next(); } };
  const transfer = defineTool({ name: 'transfer', description: 'Sends money', input: z.object({ to: z.string(), amount: z.number() }), needsApproval: true, execute: ({ amount }) => `sent ${amount}` });
  const model = mockModel([{ toolCalls: [{ id: 't1', name: 'transfer', args: { to: 'Ada', amount: 42.5 } }] }, 'Done.']);
  return { agent: createAgent({ name: 'teller', model, tools: [transfer], middleware: [...middleware, audit], layerTrace: true }), seen };
}

/** The traced call t1 of the resumed segment (segment 2). */
function settled(result: RunResult) {
  const call = toolCall(result, 't1');
  expect(call.segment).toBe(2);
  return call;
}

describe('the approval step of a call a human decided on', () => {
  it('says "approved" with the edit from → to (42.5 → 40), who and where, instead of passing it on unchanged', async () => {
    const { agent } = teller();
    const paused = await agent.run('Pay Ada');
    const done = await agent.resume(paused.state, { t1: { approved: true, args: { to: 'Ada', amount: 40 }, actor: { id: 'u_17', name: 'Grace' } } });
    const call = settled(done);
    expect(call.outcome).toBe('ok');
    expect(layer(call, 'koagent:approval').effects).toEqual([{
      type: 'human-decision', decision: 'approved', surface: 'api', actor: { id: 'u_17', name: 'Grace' }, at: expect.stringMatching(ISO),
      changes: [{ path: '/args/amount', before: 42.5, after: 40 }],
    }]);
  });

  it('says "approved" with no changes when the call was approved as asked', async () => {
    const { agent } = teller();
    const done = await agent.resume((await agent.run('Pay Ada')).state, { t1: { approved: true, actor: 'grace', surface: 'cli' } });
    expect(layer(settled(done), 'koagent:approval').effects).toEqual([{ type: 'human-decision', decision: 'approved', surface: 'cli', actor: { id: 'grace' }, at: expect.stringMatching(ISO) }]);
  });

  it('shows a denied call settling in the approval step on the human\'s decision, with no user layer seeing it', async () => {
    const { agent, seen } = teller();
    const paused = await agent.run('Pay Ada');
    seen.length = 0;
    const done = await agent.resume(paused.state, { t1: { approved: false, reason: 'Not today', actor: 'grace', surface: 'studio' } });
    const call = settled(done);
    expect(call.outcome).toBe('denied');
    expect(call.layers.map((l) => l.name)).toEqual(['koagent:approval']);
    expect(layer(call, 'koagent:approval').effects).toEqual(expect.arrayContaining([
      { type: 'human-decision', decision: 'denied', surface: 'studio', actor: { id: 'grace' }, reason: 'Not today', at: expect.stringMatching(ISO) },
      { type: 'denied', reason: 'Not today', by: 'approval' },
    ]));
    expect(seen).toEqual([]);
  });

  it('keeps the values of the edit out of the trace inside a layer that withholds them (traceValues: false)', async () => {
    const redact: Middleware = { name: 'redact', traceValues: false, tool: (_ctx, next) => next() };
    const { agent } = teller([redact]);
    const done = await agent.resume((await agent.run('Pay Ada')).state, { t1: { approved: true, args: { to: 'Ada', amount: 40 } } });
    expect(layer(settled(done), 'koagent:approval').effects[0]).toMatchObject({ type: 'human-decision', changes: [{ path: '/args/amount', before: '[withheld]', after: '[withheld]' }] });
  });

  it('says nothing of a decision in the segment that asked, nor on a call no human decided on', async () => {
    const { agent } = teller();
    const paused = await agent.run('Pay Ada');
    expect(callsOf(paused).flatMap((c) => c.layers.flatMap((l) => l.effects)).some((e) => e.type === 'human-decision')).toBe(false);
  });
});

describe('the tool call\'s span', () => {
  const attributesOf = (span: ReadableSpan) => Object.fromEntries(Object.entries(span.attributes).filter(([key]) => key.startsWith('koagent.approval.')));
  const executed = () => exporter.getFinishedSpans().filter((s) => s.name === 'execute_tool transfer');

  it('carries the decision of a call approved with edited arguments (42.5 → 40)', async () => {
    const { agent } = teller();
    const paused = await agent.run('Pay Ada');
    exporter.reset();
    await agent.resume(paused.state, { t1: { approved: true, args: { to: 'Ada', amount: 40 }, reason: 'Round it', actor: { id: 'u_17', name: 'Grace' } } });
    const [span] = executed();
    expect(attributesOf(span)).toEqual({
      'koagent.approval.decision': 'approved', 'koagent.approval.surface': 'api', 'koagent.approval.edited': true,
      'koagent.approval.actor.id': 'u_17', 'koagent.approval.actor.name': 'Grace', 'koagent.approval.reason': 'Round it',
      'koagent.approval.changes': JSON.stringify([{ path: '/args/amount', before: 42.5, after: 40 }]), 'koagent.approval.at': expect.stringMatching(ISO),
    });
    // The approval step's own span says the same.
    const step = exporter.getFinishedSpans().find((s) => s.name === 'layer koagent:approval')!;
    expect(step.attributes['koagent.approval.changes']).toBe(span.attributes['koagent.approval.changes']);
  });

  it('is made for a denied call too, as denied, with the decision', async () => {
    const { agent } = teller();
    const paused = await agent.run('Pay Ada');
    exporter.reset();
    await agent.resume(paused.state, { t1: { approved: false, reason: 'Not today', actor: 'grace', surface: 'cli' } });
    const [span] = executed();
    expect(span.attributes['error.type']).toBe('denied');
    expect(attributesOf(span)).toMatchObject({ 'koagent.approval.decision': 'denied', 'koagent.approval.surface': 'cli', 'koagent.approval.actor.id': 'grace', 'koagent.approval.edited': false });
  });

  it('in OTLP export, carries the decision on the call\'s span and its approval step\'s', async () => {
    const { agent } = teller();
    const done = await agent.resume((await agent.run('Pay Ada')).state, { t1: { approved: true, args: { to: 'Ada', amount: 40 }, actor: 'grace', surface: 'cli' } });
    const spans = traceToOtlp(done.state).resourceSpans[0].scopeSpans[0].spans;
    const attribute = (name: string, key: string) => spans.filter((s) => s.name === name).map((s) => s.attributes.find((a) => a.key === key)?.value);
    expect(attribute('execute_tool transfer', 'koagent.approval.decision')).toEqual([undefined, { stringValue: 'approved' }]);
    expect(attribute('execute_tool transfer', 'koagent.approval.actor.id')).toEqual([undefined, { stringValue: 'grace' }]);
    expect(attribute('layer koagent:approval', 'koagent.approval.changes')).toEqual([undefined, { stringValue: JSON.stringify([{ path: '/args/amount', before: 42.5, after: 40 }]) }]);
  });
});
