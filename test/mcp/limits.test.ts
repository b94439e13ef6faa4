// What an MCP server may send that koagent cannot take as it is, and servers that cannot be
// started: an answer past the stdio message limit, a missing command, a listed tool that breaks
// the protocol. Each is said plainly, naming the server, and the rest of the server still works.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, KoagentError, RunFailedError } from '../../src/index.js';
import type { ToolMessage } from '../../src/types.js';
import { mcpTools } from '../../src/mcp/index.js';
import type { McpToolsOptions } from '../../src/mcp/client.js';
import { mockModel } from '../../src/testing/index.js';
import { answerTo } from '../fixtures/counting-tools.js';
import { childProcesses } from '../fixtures/mcp-servers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const MiB = 1024 * 1024;

/** The odd server of test/fixtures/mcp-odd-server.ts, spawned over stdio. */
const odd = (extra: Partial<McpToolsOptions> = {}, ...flags: string[]) =>
  mcpTools({ name: 'odd', command: process.execPath, args: ['--import', 'tsx', join(ROOT, 'test/fixtures/mcp-odd-server.ts'), ...flags], cwd: ROOT, ...extra });

afterAll(() => {
  expect(childProcesses()).toEqual([]);
});

describe('MCP connections: an answer past the stdio message limit', () => {
  const script = () => mockModel([
    { toolCalls: [{ id: 'big', name: 'big_image', args: { length: 11 * MiB } }] },
    { toolCalls: [{ id: 'echo', name: 'echo', args: { text: 'still there?' } }] },
    'Done.',
  ]);

  it('fails the call saying the answer was larger than the limit, which option raises it and what else to do; the next call connects again', async () => {
    const result = await createAgent({ model: script(), tools: [odd()] }).run('go');
    expect(answerTo(result.messages, 'big').content).toMatch(
      /^Error \(execution\): .*MCP server "odd" sent a message larger than 10 MiB \(10485760 bytes\) while big_image was running .*the call may have taken effect\. Raise the toolset's maxMessageBytes, or have the tool return less/s,
    );
    expect(answerTo(result.messages, 'echo').content).toBe('still there?');
    expect(childProcesses()).toEqual([]);
  }, 30_000);

  it('with maxMessageBytes raised, the same answer arrives whole, as an image part', async () => {
    const result = await createAgent({ model: script(), tools: [odd({ maxMessageBytes: 32 * MiB })] }).run('go');
    const [image] = answerTo(result.messages, 'big').content as Extract<ToolMessage['content'], unknown[]>;
    expect(image).toMatchObject({ type: 'image', mediaType: 'image/png' });
    expect((image as { image: string }).image).toHaveLength(11 * MiB);
  }, 30_000);

  it('maxMessageBytes is for a stdio server, and a whole number of bytes', () => {
    expect(() => mcpTools({ name: 'web', url: 'http://127.0.0.1:1/mcp', maxMessageBytes: 32 * MiB })).toThrow(/maxMessageBytes limits what a server spawned with command sends over stdio/);
    expect(() => odd({ maxMessageBytes: 1.5 })).toThrow(/maxMessageBytes must be a whole number of bytes ≥ 1024/);
    expect(() => odd({ maxBufferSize: 1 } as never)).toThrow(/did you mean `maxMessageBytes`/);
  });
});

describe('MCP connections: a server that cannot be started', () => {
  const nope = () => mcpTools({ name: 'nope', command: 'koagent-no-such-mcp-server', args: ['--port', '1'] });

  it('fails the run with code mcp_connect_failed (not hook_failed), naming the server and the command, and saying what to check', async () => {
    const error = await createAgent({ model: mockModel(['Never.']), tools: [nope()] }).run('go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error).toMatchObject({ code: 'mcp_connect_failed', layer: 'mcp:nope' });
    expect((error as Error).message).toMatch(/^could not connect to MCP server "nope" \(koagent-no-such-mcp-server --port 1\): .*ENOENT \(no such file: the command is not installed or not on the PATH/);
    // The state is kept: resuming it retries once the server is there.
    expect((error as RunFailedError).state.status).toBe('failed');
  });

  it('toolset.connect() rejects with the same code', async () => {
    const error = await nope().connect().catch((e: unknown) => e);
    expect(KoagentError.is(error) && error.code).toBe('mcp_connect_failed');
  });
});

describe('MCP listings: a tool that breaks the protocol', () => {
  it('a tool whose inputSchema is not an object schema is left out with a warning naming it; the server\'s other tools are offered and work', async () => {
    const warnings: string[] = [];
    const model = mockModel([{ toolCalls: [{ id: 'echo', name: 'echo', args: { text: 'hi' } }] }, 'Done.']);
    const result = await createAgent({ model, tools: [odd({}, 'bad-schema')], logger: { warn: (message: string) => void warnings.push(message) } }).run('go');
    expect(warnings).toEqual([
      'koagent: MCP server "odd": its tool "weird" is left out: its inputSchema must be an object schema ({ "type": "object", … }), as MCP requires, got {"type":"string"}; its other tools are offered',
    ]);
    expect(model.calls[0].request.tools?.map((t) => t.name)).toEqual(['big_image', 'echo']);
    expect(answerTo(result.messages, 'echo').content).toBe('hi');
  }, 30_000);
});
