// The run stack in the layer trace: each segment's pass through it — the run layers it entered
// (criogen onStart/onEnd, run middleware), in and out, their time, and what they did — kept per
// segment across an approval, a sub-agent's in the lead's trace, and exported as spans.
import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type Middleware } from '../../../src/index.js';
import type { Hook } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { traceOf, traceToOtlp, type TracedSegment } from '../../../src/trace.js';
import { deploy, layer, search } from './support.js';

/** The run's segments as the trace keeps them (failing the test when it has none). */
function segmentsOf(result: { state: unknown }): TracedSegment[] {
  const segments = traceOf(result.state)?.segments;
  if (segments === undefined) throw new Error('the run\'s trace keeps no segments');
  return segments;
}

class Journal implements Hook {
  onStart() {
    return undefined;
  }
  onEnd() {}
}
const timing: Middleware = { name: 'timing', run: (_ctx, next) => next() };

describe('a segment\'s run layers', () => {
  it('are recorded with their source, the dialect methods that ran, depth, and when each was entered and left', async () => {
    const result = await createAgent({ model: mockModel(['Hello.']), middleware: [timing], hooks: [new Journal()], layerTrace: true }).run('Hi');
    const [segment] = segmentsOf(result);
    expect(segment).toMatchObject({ segment: 1, outcome: 'completed', firstCall: 0 });
    expect(segment.layers.map((l) => [l.name, l.source, l.depth, l.nextCalls])).toEqual([['timing', 'middleware', 0, 1], ['Journal', 'criogen', 1, 1]]);
    expect(layer(segment, 'Journal').hooks).toEqual(['onStart', 'onEnd']);
    for (const l of segment.layers) {
      expect(l.outAt).toBeGreaterThanOrEqual(l.inAt);
      expect(l.outAt).toBeLessThanOrEqual(segment.durationMs);
      expect(l.effects).toEqual([]);
    }
    // The outer layer's own time leaves out the time inside its next().
    expect(segment.layers[0].selfMs).toBeLessThanOrEqual(segment.layers[0].outAt! - segment.layers[0].inAt);
  });

  it('are recorded for each segment: the one that asked for approval, and the one after the resume', async () => {
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'deploy', args: { env: 'prod' }, id: 'd1' }] }, 'Deployed.'], { resumable: true }), tools: [deploy], hooks: [new Journal()], store: memoryStore(), layerTrace: true });
    const asked = await agent.run('Deploy');
    expect(segmentsOf(asked).map((s) => [s.segment, s.outcome])).toEqual([[1, 'suspended']]);
    const done = await agent.resume(asked.runId, { d1: true });
    const segments = segmentsOf(done);
    expect(segments.map((s) => [s.segment, s.outcome, s.layers.map((l) => l.name)])).toEqual([[1, 'suspended', ['Journal']], [2, 'completed', ['Journal']]]);
    // Each segment points at the first call it made: the second starts where the first's calls end.
    const calls = traceOf(done.state)!.calls;
    expect(calls.slice(segments[1].firstCall).every((c) => c.segment === 2)).toBe(true);
    expect(calls.slice(0, segments[1].firstCall).every((c) => c.segment === 1)).toBe(true);
    expect(segments[1].startedAt).toBeGreaterThanOrEqual(segments[0].startedAt);
  });

  it('say what a run layer did: ended the segment without next(), replaced the result, called next() again, threw', async () => {
    class Gate implements Hook {
      onStart() {
        return { end: true, output: 'closed' };
      }
    }
    const gated = segmentsOf(await createAgent({ model: mockModel(['Never.']), hooks: [new Gate()], layerTrace: true }).run('Hi'))[0];
    expect(layer(gated, 'Gate').effects).toEqual([{ type: 'short-circuit' }]);

    const verdict: Middleware = { name: 'verdict', run: async (ctx, next) => (await next(), ctx.end({ verdict: 'too long' }, 'stop:guardrail')) };
    const replaced = segmentsOf(await createAgent({ model: mockModel(['A long answer.']), middleware: [verdict], layerTrace: true }).run('Hi'))[0];
    const effect = layer(replaced, 'verdict').effects[0] as { type: string; changes: { path: string; before?: unknown; after?: unknown }[] };
    expect(effect.type).toBe('replaced-result');
    expect(effect.changes).toEqual(expect.arrayContaining([{ path: '/stopReason', before: 'final', after: 'stop:guardrail' }, { path: '/output', before: 'A long answer.', after: { verdict: 'too long' } }]));

    const twice: Middleware = { name: 'twice', run: async (_ctx, next) => (await next(), next()) };
    const again = segmentsOf(await createAgent({ model: mockModel(['One.', 'Two.']), middleware: [twice], layerTrace: true }).run('Hi'))[0];
    expect(layer(again, 'twice').effects).toEqual([{ type: 'next-again', times: 1 }]);

    const broken: Middleware = { name: 'broken', run: () => { throw new Error('no run today'); } };
    const failed = await createAgent({ model: mockModel(['Never.']), middleware: [broken], layerTrace: true }).run('Hi').catch((error: { state: unknown }) => error);
    const [segment] = segmentsOf(failed);
    expect(segment.outcome).toBe('failed');
    expect(layer(segment, 'broken').effects).toEqual([{ type: 'threw', message: 'no run today' }]);
    expect(layer(segment, 'broken').outAt).toBeUndefined();
  });

  it('of a sub-agent go into the lead\'s trace, under the lead\'s call that ran it', async () => {
    const researcher = createAgent({ name: 'researcher', model: mockModel([{ toolCalls: [{ name: 'search', args: { q: 'otters' }, id: 's1' }] }, 'Otters hold hands.']), tools: [search], hooks: [new Journal()] });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'Otters' }, id: 'r1' }] }, 'Done.']), tools: [researcher.asTool({ description: 'Researches' })], layerTrace: true });
    const result = await lead.run('Tell me of otters');
    const segments = segmentsOf(result);
    expect(segments.map((s) => [s.parentCallId, s.agentPath, s.layers.map((l) => l.name)])).toEqual([[undefined, undefined, []], ['r1', ['researcher'], ['Journal']]]);
    // The sub-agent's segment began after the lead's call r1, before the sub-agent's first call.
    const calls = traceOf(result.state)!.calls;
    expect(calls[segments[1].firstCall]).toMatchObject({ parentCallId: 'r1', id: 'model:1:1' });
  });

  it('are exported as OTLP spans under the run\'s span', async () => {
    const result = await createAgent({ name: 'greeter', model: mockModel(['Hello.']), middleware: [timing], hooks: [new Journal()], layerTrace: true }).run('Hi');
    const spans = traceToOtlp(result.state).resourceSpans[0].scopeSpans[0].spans;
    const run = spans.find((s) => s.name === 'invoke_agent greeter')!;
    const timingSpan = spans.find((s) => s.name === 'layer timing')!;
    const journalSpan = spans.find((s) => s.name === 'layer Journal')!;
    expect(timingSpan.parentSpanId).toBe(run.spanId);
    expect(journalSpan.parentSpanId).toBe(timingSpan.spanId);
    expect(journalSpan.attributes).toContainEqual({ key: 'koagent.layer.hooks', value: { arrayValue: { values: [{ stringValue: 'onStart' }, { stringValue: 'onEnd' }] } } });
  });
});
