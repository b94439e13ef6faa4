// compareTraces and formatComparison (koagent/replay): a stored run's layer trace and a replay's,
// call by call and layer by layer, what each layer did then and now, times left out.
import { describe, expect, it } from 'vitest';
import type { Middleware } from '../../../src/index.js';
import { traceOf, type LayerTraceRecord } from '../../../src/trace.js';
import { compareTraces, formatComparison, replay } from '../../../src/replay.js';
import { notingAgent } from '../../replay/support.js';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const file = join(tmpdir(), `koagent-compare-${process.pid}.txt`);
const louder: Middleware = { name: 'louder', tool: (ctx, next) => { if (ctx.toolCallId === 'c2') ctx.args = { text: 'TWO' }; return next(); } };

describe('compareTraces', () => {
  it('finds two traces of the same calls the same, whatever their times', async () => {
    const { agent } = notingAgent(file);
    const a = traceOf((await agent.run('Note four things')).state)!;
    const b = structuredClone(a) as LayerTraceRecord;
    for (const call of b.calls) {
      call.durationMs += 5;
      for (const layer of call.layers) layer.selfMs += 1;
    }
    const comparison = compareTraces(a, b);
    expect(comparison.same).toBe(true);
    expect(comparison.calls.map((c) => c.id)).toEqual(['model:1:1', 'c1', 'model:2:1', 'c2', 'c3', 'model:3:1', 'c4', 'model:4:1']);
  });

  it('marks a call whose layer did something else, and the calls one side never made', async () => {
    const { agent } = notingAgent(file);
    const run = await agent.run('Note four things');
    const report = await replay(agent, run.state, { layers: [louder] });
    const c2 = report.comparison.calls.find((c) => c.id === 'c2')!;
    expect([c2.then, c2.now, c2.same]).toEqual(['ok', 'error', false]);
    const layer = c2.layers.find((l) => l.name === 'louder')!;
    expect(layer.then).toBeUndefined();
    expect(layer).toMatchObject({ same: false, now: { effects: [{ type: 'rewrote-args' }, { type: 'threw', code: 'replay_diverged' }] } });
    expect(report.comparison.calls.find((c) => c.id === 'model:2:1')?.same).toBe(true);
    expect(report.comparison.calls.find((c) => c.id === 'c4')).toMatchObject({ then: 'ok', same: false });
  });
});

describe('formatComparison', () => {
  it('prints the two traces side by side, a ≠ before each line that differs and (same) where a layer did the same', async () => {
    const { agent } = notingAgent(file);
    const run = await agent.run('Note four things');
    const text = formatComparison((await replay(agent, run.state, { layers: [louder] })).comparison);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^ {2}CALL\s+THEN \(stored\)\s+NOW \(replayed\)$/);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}model turn model:2:1 \(step 2\)\s+ok\s+ok$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}turn-counter\s+passed it on\s+\(same\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^≠ tool note c2 \(step 2\)\s+ok\s+error$/));
    expect(lines).toContainEqual(expect.stringMatching(/^≠ {5}louder\s+—\s+rewrote-args: \/args\/text "two" → "TWO"; threw replay_diverged: replay diverged at tool note \(c2, step 2\)/));
    expect(lines).toContainEqual(expect.stringMatching(/^≠ model turn model:3:1 \(step 3\)\s+ok\s+— not made$/));
  });
});
