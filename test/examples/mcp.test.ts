import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../examples/mcp.js';
import { childProcesses } from '../fixtures/mcp-servers.js';
import { runExample } from '../support/examples.js';

afterAll(() => {
  expect(childProcesses()).toEqual([]);
});

describe('examples/mcp.ts', () => {
  it('lists, asks before the write, writes once approved, reads back, and closes the server after each segment', async () => {
    const lines: string[] = [];
    const result = await main(true, (line) => lines.push(line));
    expect(result).toMatchObject({ status: 'completed', stopReason: 'final', text: 'The note is in place.' });
    expect(lines).toEqual([
      'run:',
      '  → model turn 1, told of 14 tools of MCP server "fs"',
      '    → fs_list_allowed_directories {}',
      '      [rule] fs_list_allowed_directories: allow by default',
      '    ← fs_list_allowed_directories: {"content":"Allowed directories:\\n<folder>"}',
      '  → model turn 2, told of 14 tools of MCP server "fs"',
      '    → fs_write_file {"path":"notes.txt","content":"MCP tools go through the onion."} (destructive)',
      '      [rule] fs_write_file: ask by rule "destructive-mcp" (it changes files)',
      '    ← fs_write_file: waits for a human',
      'run: suspended (approval); the server process is closed',
      'waiting for a human: fs_write_file {"path":"<folder>/notes.txt","content":"MCP tools go through the onion."}, because it changes files',
      expect.stringMatching(/^the human approves; resuming from \d+ bytes of JSON:$/),
      '      [rule] fs_write_file: allow by approval',
      '    → fs_write_file {"path":"<folder>/notes.txt","content":"MCP tools go through the onion."} (destructive)',
      '    ← fs_write_file: {"content":"Successfully wrote to <folder>/notes.txt"}',
      '  → model turn 3, told of 14 tools of MCP server "fs"',
      '    → fs_read_text_file {"path":"notes.txt"}',
      '      [rule] fs_read_text_file: allow by default',
      '    ← fs_read_text_file: {"content":"MCP tools go through the onion."}',
      '  → model turn 4, told of 14 tools of MCP server "fs"',
      'run: completed (final); the server process is closed',
      'folder: ["notes.txt"]',
      'answer: The note is in place.',
    ]);
  });

  it('runs by itself with npx tsx, offline; denied, the write never happens', async () => {
    const { code, stdout } = await runExample('examples/mcp.ts', { args: ['deny'] });
    expect(code).toBe(0);
    // The denied call settles at once, without going through the layers again; the read finds no file.
    expect(stdout).toMatch(/← fs_read_text_file: tool_error: ENOENT: no such file or directory, open '<folder>\/notes\.txt'/);
    expect(stdout).toContain('folder: []');
    expect(stdout.trim().split('\n').at(-1)).toBe('answer: I may not write here, so there is no note.');
  });
});
