// examples/fork.ts: a run that went wrong, forked after a step with a result corrected, replayed
// with a guard layer, and played back as a fixture — offline, and by itself with `npx tsx`.
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/fork.js';
import { runExample } from '../support/examples.js';

describe('examples/fork.ts', () => {
  it('forks after the lookup with its result corrected (the lookup not run again), replays with a guard that diverges at the refund, and plays the fixture back', async () => {
    const demo = await main(() => undefined);
    expect(demo.incident).toBe('Done: refunded 420 on A-17');
    expect(demo.fork).toBe('Done: refunded 42 on A-17');
    expect(demo.forkedFrom?.step).toBe(1);
    expect(demo.effects).toEqual(['lookup A-17', 'refund 420 on A-17', 'refund 42 on A-17']);
    expect(demo.divergence).toMatchObject({ kind: 'tool', id: 'refund_1', step: 2, changes: [{ path: '/args/amount', before: 420, after: 100 }] });
    expect([demo.sameTranscript, demo.sameTrace]).toEqual([true, true]);
  });

  it('runs by itself with npx tsx, offline', async () => {
    const { code, stdout } = await runExample('examples/fork.ts');
    expect(code).toBe(0);
    expect(stdout).toContain('effects now: lookup A-17, refund 420 on A-17, refund 42 on A-17   (the lookup did not run again)');
    expect(stdout).toContain('replay with cap-refunds: diverged at tool refund (refund_1, step 2): the call runs with other arguments; model and tools asked live: 0');
    expect(stdout).toContain('the fixture played back: the same transcript: true, the same layer trace: true; effects: 3 (no tool ran)');
  });
});
