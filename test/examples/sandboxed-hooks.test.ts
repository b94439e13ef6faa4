// examples/sandboxed-hooks.ts: a tenant's redaction hook works from source text; a hostile hook's
// file read and endless loop are contained, and the agent serves the next run.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { sandboxedHooksExample } from '../../examples/sandboxed-hooks.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/sandboxed-hooks', () => {
  it('the model reads the card number redacted; the file read and the loop each fail as hook_failed in snoop; the next run works in a fresh sandbox', async () => {
    const { seen, refused, after, hostileStarts } = await sandboxedHooksExample(() => undefined);
    expect(seen).toBe('ada pays with [card ending 1234]');
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatch(/^hook_failed \(snoop\): .*imports "node:fs"/);
    expect(refused[1]).toMatch(/^hook_failed \(snoop\): .*snoop\.preToolCall\(\) went over its time limit \(timeoutMs: 250\); the sandbox was replaced/);
    expect(after).toBe('grace pays with [card ending 1234]');
    expect(hostileStarts).toBe(2);
  });

  it('runs offline with npx tsx in a second process and prints its story', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/sandboxed-hooks.ts'], { cwd: repo });
    expect(stdout).toContain('the model read: ada pays with [card ending 1234]');
    expect(stdout).toMatch(/loop: hook_failed in snoop: .*went over its time limit/);
  }, 60_000);
});
