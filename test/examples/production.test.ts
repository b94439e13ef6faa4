// examples/production.ts: MCP tools, an approval resumed by run id in a second process, a SQLite
// store whose run survives that process being killed, and every phase streamed — run as users run it.
import { describe, expect, it } from 'vitest';
import { childProcesses } from '../fixtures/mcp-servers.js';
import { runExample } from '../support/examples.js';

describe('examples/production.ts', () => {
  it('streams the fresh run to its approval, resumes it by id in an approver process, and recovers it after that process is killed', async () => {
    const { code, stdout, stderr } = await runExample('examples/production.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    // 1: streamed, through the real MCP server, up to the rule that asks.
    expect(lines.slice(0, 9)).toEqual([
      '1. This process streams a fresh run (SQLite store, MCP filesystem server):',
      '  model: "Reading the changes first." (streamed in 4 deltas)',
      '  → fs_read_text_file {"path":"<workspace>/CHANGES.txt"}',
      '  ← fs_read_text_file: "- streaming everywhere\\n- runs survive crashes"',
      '  model: "Writing the release notes." (streamed in 4 deltas)',
      '  ? fs_write_file waits for a human: it changes files',
      '  run: suspended (approval)',
      '   run suspended, stored: waiting for fs_write_file',
      '2. An approver process resumes it by run id, and is killed while it announces:',
    ]);
    // 2: another process finds the run in the store and approves each pending call.
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}\[approver\] run run_\w+… waits for fs_write_file: approving each$/));
    // The call waiting for a human starts once, when it runs, in the approver.
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}\[approver\] {3}→ fs_write_file \{"path":"<workspace>\/RELEASE\.md","content":"# Release 1\.2/));
    expect(lines.filter((line) => line.includes('→ fs_write_file'))).toHaveLength(1);
    expect(lines).toContain('   [approver]   ← fs_write_file: "Successfully wrote to <workspace>/RELEASE.md"');
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}\[approver\] {3}model: "Announcing it\." \(streamed in \d+ deltas\)$/));
    expect(lines).toContain('   the approver was killed (SIGKILL)');
    // 3: recovered here; what was done is not done again, the interrupted call announces once.
    expect(lines.slice(lines.indexOf('3. This process recovers the run from the file:'))).toEqual([
      '3. This process recovers the run from the file:',
      '  → announce {"channel":"#releases"}',
      '  ← announce: "announced in #releases"',
      expect.stringMatching(/^  model: "Release 1\.2 is out: the notes are in RELEASE\.md and #releases knows\." \(streamed in \d+ deltas\)$/),
      '  run: completed (final)',
      '   answer: Release 1.2 is out: the notes are in RELEASE.md and #releases knows.',
      '   ran once each: fs_read_text_file (by the starter), fs_write_file (by the approver); not again after the crash',
      '   announce was started by the approver and the recoverer, with 1 idempotency key; announcements made: 1',
      '   RELEASE.md: "# Release 1.2\\n\\n- streaming everywhere\\n- runs survive crashes"',
    ]);
    expect(childProcesses()).toEqual([]);
  }, 90_000);
});
