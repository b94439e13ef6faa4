// The runtime examples (streaming, sub-agents, compaction): each one's main() is imported and
// what it returns is checked, and each runs by itself, offline, with `npx tsx`.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main as compaction } from '../../examples/compaction.js';
import { main as streaming } from '../../examples/streaming.js';
import { main as subagents } from '../../examples/subagents.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const runExample = (name: string) => promisify(execFile)(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], { cwd: ROOT, timeout: 60_000 });

describe('examples/streaming.ts', () => {
  it('holds the redacted card number back, retracts the rejected draft, and stops cleanly on break', async () => {
    const written: string[] = [];
    const demo = await streaming((text) => written.push(text), 0);
    expect(demo.held).toEqual({
      shown: 'Let me look that order up.Card [card] was charged twice for order A-17; the refund is pending.',
      final: 'Card [card] was charged twice for order A-17; the refund is pending.',
      eventsWithCard: 0,
    });
    expect(demo.retried).toEqual({ retracted: ['DRAFT: otters are fish.'], shown: 'Otters are mammals of the weasel family.', final: 'Otters are mammals of the weasel family.' });
    expect(demo.stopped).toEqual({ deltasRead: 5, stopReason: 'aborted', runEnds: 1 });
    expect(written.join('')).not.toContain('4111');
  });

  it('runs by itself with npx tsx, offline', async () => {
    const { stdout } = await runExample('streaming');
    expect(stdout).toContain('→ 0 stream events carried the card number');
    expect(stdout).toContain('⟲ (retracted "DRAFT: otters are fish.")');
    expect(stdout.trim().split('\n').at(-1)).toBe('  → run stopped: aborted; run.end fired 1 time(s) before the loop went on');
  });
});

describe('examples/subagents.ts', () => {
  it('audits the researcher\'s calls from the editor, keeps lead-only layers home, and resumes the researcher\'s approval from JSON', async () => {
    const lines: string[] = [];
    const demo = await subagents((line) => lines.push(line));
    expect(demo.audit).toEqual([
      '[audit] editor: researcher',
      '[audit] editor › researcher (depth 1): search',
      '[audit] editor › researcher (depth 1): publish',
      '[audit] editor: researcher (approved, running now)',
      '[audit] editor › researcher (depth 1): publish (approved, running now)',
    ]);
    expect(demo.leadOnly).toEqual(['[editor-calls] editor asks its model (step 1)', '[editor-calls] editor asks its model (step 2)']);
    expect(demo.pending).toEqual([{ toolCallId: 'call_1/call_2', toolName: 'publish', args: { title: 'Otters', body: 'Otters hold hands while sleeping.' }, path: ['researcher'] }]);
    expect(demo.result).toMatchObject({ status: 'completed', stopReason: 'final', text: 'Done: the otter note is live at https://notes.example/otters.' });
    expect(demo.result.usage).toEqual({ inputTokens: 300, outputTokens: 71, totalTokens: 371, modelCalls: 5, toolCalls: 3 });
    expect(demo.taggedEvents).toBeGreaterThan(10);
    expect(lines).toContain('  waiting: call_1/call_2 = researcher › publish {"title":"Otters","body":"Otters hold hands while sleeping."}');
  });

  it('runs by itself with npx tsx, offline', async () => {
    const { stdout } = await runExample('subagents');
    expect(stdout).toContain('editor: suspended (approval)');
    expect(stdout).toContain('usage of the whole team: 5 model calls, 3 tool calls, 300 + 71 tokens');
  });
});

describe('examples/compaction.ts', () => {
  it('keeps every model call within 8 messages, with each result beside its call, and the facts in the summary', async () => {
    const demo = await compaction(() => undefined);
    expect(demo.sent).toEqual([2, 4, 6, 8, 6, 8, 6]);
    expect(demo.compactions.map(({ before, after }) => [before, after])).toEqual([[10, 6], [10, 6]]);
    for (const c of demo.compactions) expect(c.tokensAfter).toBeLessThan(c.tokensBefore);
    expect(demo.resultsWithTheirCalls).toBe(true);
    expect(demo.summary).toBe('Summary of the earlier conversation:\nThe user asked: "How do I set up the device? Read the whole manual." Read so far: step 1 is to unpack; step 2 is to charge; step 3 is to pair; step 4 is to calibrate.');
    expect(demo.result.text).toBe('To set it up: unpack, charge, pair, calibrate, update, register.');
    expect(demo.result.usage.modelCalls).toBe(9);
  });

  it('runs by itself with npx tsx, offline', async () => {
    const { stdout } = await runExample('compaction');
    expect(stdout).toContain('[compaction] 10 messages');
    expect(stdout).toContain('messages sent per model call: 2, 4, 6, 8, 6, 8, 6 (never more than 8)');
  });
});
