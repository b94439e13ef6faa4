// examples/workers.ts: an embedded PostgreSQL, two worker processes and a client; one worker is
// killed mid-run, the other takes its runs over, and every run completes once — run as users run it.
import { describe, expect, it } from 'vitest';
import { runExample } from '../support/examples.js';

describe('examples/workers.ts', () => {
  it('runs ten runs on two workers, one killed: every run completes once, the killed worker\'s runs are taken over, the streamed text and the approval reach the client', async () => {
    const { code, stdout, stderr } = await runExample('examples/workers.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('Every run completed once: 10 of 10.');

    // The kill, and the runs it interrupted: each completed once, with B's effects.
    const killed = lines.find((line) => line.startsWith('3. Worker A was killed (SIGKILL) while packing; it was running '));
    expect(killed).toBeDefined();
    const held = killed!.slice(killed!.indexOf('running ') + 8).split(', ');
    expect(held.length).toBeGreaterThan(0);
    for (const order of held) expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^ {3}${order}: +completed once, 3 effects \\(by (A and )?B\\), taken over from A: "All 3 items are packed\\."$`)));
    expect(lines).toContain(`   B took over ${held.join(', ')} from A once their leases expired: no one called recover()`);
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}\[B\] exited with code 0; its counts: segments \d+, recovered \d+, /));
    const recovered = Number(/recovered (\d+)/.exec(stdout)![1]);
    expect(recovered).toBeGreaterThanOrEqual(held.length);

    // Every run: completed once, each effect applied once.
    const runs = lines.filter((line) => /^ {3}order \d+: /.test(line));
    expect(runs).toHaveLength(10);
    for (const run of runs) expect(run).toMatch(/: +completed once, \d effects /);
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}31 effects, 0 applied twice; \d+ pack call\(s\) A was in the middle of ran again on B/));

    // The approval, answered by the client; the refund applied once.
    expect(lines).toContain('4. The client lists the approvals: order 9 waits for refund {"amount":5}; it approves, and a free worker resumes the run');
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}order 9: +completed once, 4 effects \(by (A and )?B\)(, taken over from A)?: "All 3 items are packed and the refund is made\."$/));

    // The streamed run's text, a line per model reply, followed from another process.
    const streamed = lines.indexOf('5. The client starts order 10 streamed, and prints its text as it arrives:');
    expect(lines.slice(streamed + 1, streamed + 5)).toEqual([
      '   streamed: Packing item 1 of 3.',
      '   streamed: Packing item 2 of 3.',
      '   streamed: Packing item 3 of 3.',
      '   streamed: All 3 items are packed.',
    ]);

    // The survivor stops gracefully on SIGTERM, with exit code 0, after finishing whatever job it
    // had fetched (every run has ended by then, so such a job has nothing left to do).
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}\[B\] koagent worker B: stopping \(finishing \d+ job\(s\)/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}\[B\] exited with code 0; /));
  }, 60_000);
});
