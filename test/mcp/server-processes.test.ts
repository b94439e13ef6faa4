// koagent's own MCP server, driven by the SDK's client: the agent's tools as tools over stdio, the
// server in a child process (test/fixtures/mcp-serve-child.ts) as an MCP client spawns one. (The
// agent as one tool over Streamable HTTP: server.test.ts.)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childProcesses } from '../fixtures/mcp-servers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

const text = (result: unknown) => ((result as { content: { type: string; text?: string }[] }).content.map((c) => c.text).join(''));

describe("serveMcp: the agent's tools as tools, over stdio in another process", () => {
  let client: Client;
  let answers: ElicitResult[];

  beforeAll(async () => {
    answers = [];
    client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, () => answers.shift() ?? { action: 'cancel' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', join(ROOT, 'test/fixtures/mcp-serve-child.ts')], cwd: ROOT, stderr: 'pipe' }));
  });
  afterAll(async () => {
    await client.close();
    expect(childProcesses()).toEqual([]);
  });

  it('lists each tool with its JSON Schema and annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['get_balance', 'transfer', 'delete_account']);
    expect(tools[1]).toMatchObject({
      description: 'Send money',
      inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } }, required: ['to', 'amount'] },
      annotations: { readOnlyHint: false, destructiveHint: true },
    });
  });

  it("a call goes through the agent's hooks", async () => {
    const result = await client.callTool({ name: 'get_balance', arguments: {} });
    expect(JSON.parse(text(result))).toEqual({ account: 'main', balance: 120 });
  });

  it("a call its permission rules deny is an error result with the rule's reason", async () => {
    const result = await client.callTool({ name: 'delete_account', arguments: { account: 'main' } });
    expect([text(result), result.isError]).toEqual(['Error (denied): Accounts are closed at the branch', true]);
  });

  it('arguments that do not fit are an error result naming the field', async () => {
    const result = await client.callTool({ name: 'transfer', arguments: { to: 'alice', amount: 'lots' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^Error \(validation\): Invalid arguments for transfer: .*→ at amount/s);
  });

  it('a call that needs approval runs when the client approves it, and not when it declines', async () => {
    answers.push({ action: 'accept', content: { approve: true } }, { action: 'decline' });
    const approved = await client.callTool({ name: 'transfer', arguments: { to: 'alice', amount: 80 } });
    expect([text(approved), approved.isError]).toEqual(['sent 80 to alice', undefined]);
    const declined = await client.callTool({ name: 'transfer', arguments: { to: 'bob', amount: 5 } });
    expect([text(declined), declined.isError]).toEqual(["Error (denied): The MCP client's user declined the approval", true]);
  });
});
