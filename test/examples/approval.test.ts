import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../examples/approval.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/approval.ts', () => {
  it('pauses on the dangerous tool, prints the pending call, resumes with an approval and finishes', async () => {
    const lines: string[] = [];
    const result = await main(true, (line) => lines.push(line));
    expect(result).toMatchObject({ status: 'completed', stopReason: 'final', text: 'I deleted old-backup.tar; notes.txt is untouched.' });
    expect(lines).toEqual([
      '  [audit] list_files: allow by rule "read-only"',
      '  [audit] delete_file: ask by rule "destructive" (deleting is permanent)',
      'run: suspended (approval)',
      'waiting for a human: delete_file {"path":"old-backup.tar"}, because deleting is permanent',
      expect.stringMatching(/^state stored: \d+ bytes of JSON$/),
      'the human approves: the backup is on tape',
      '  [audit] delete_file: allow by approval (the backup is on tape)',
      '  list_files → ["notes.txt","old-backup.tar"]',
      '  delete_file → {"deleted":"old-backup.tar"}',
      'run: completed (final)',
      'answer: I deleted old-backup.tar; notes.txt is untouched.',
    ]);
  });

  it('with a denial, the file is not deleted and the model is told why', async () => {
    const lines: string[] = [];
    const result = await main(false, (line) => lines.push(line));
    expect(lines).toContain('  delete_file → Error (denied): keep it until Friday');
    expect(result.text).toBe('I left old-backup.tar in place, as you asked.');
  });

  it('runs by itself with npx tsx, offline', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/approval.ts', 'deny'], { cwd: ROOT });
    expect(stdout).toContain('waiting for a human: delete_file {"path":"old-backup.tar"}');
    expect(stdout.trim().split('\n').at(-1)).toBe('answer: I left old-backup.tar in place, as you asked.');
  });
});
