// koagent's own MCP server, driven by the SDK's client: the agent as one tool over Streamable
// HTTP on 127.0.0.1 (its tools as tools over stdio in a child process: server-processes.test.ts);
// approval through elicitation where the client supports it, a clear refusal where it does not.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/index.js';
import { serveMcp, type McpAgentServer } from '../../src/mcp/index.js';
import type { McpServeOptions } from '../../src/mcp/server.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { buildTeller } from '../fixtures/mcp-teller.js';

/** The teller served over Streamable HTTP, and an SDK client connected to it. */
async function served(script: MockReply[], elicit?: (message: string) => ElicitResult) {
  const teller = buildTeller(script);
  return { ...teller, ...(await servedAgent(teller.agent, { description: 'A careful teller' }, elicit)) };
}

/** `agent` served over Streamable HTTP, and an SDK client connected to it. */
async function servedAgent(agent: Agent, options: McpServeOptions = {}, elicit?: (message: string) => ElicitResult) {
  const mcp = serveMcp(agent, options);
  const http: HttpServer = createServer((req, res) => void mcp.handleHttp(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: elicit ? { elicitation: {} } : {} });
  const asked: string[] = [];
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => (asked.push(request.params.message), elicit(request.params.message)));
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  opened.push({ mcp, http, client, transport });
  return { client, asked };
}

const opened: { mcp: McpAgentServer; http: HttpServer; client: Client; transport: StreamableHTTPClientTransport }[] = [];
afterEach(async () => {
  for (const { mcp, http, client, transport } of opened.splice(0)) {
    await transport.terminateSession();
    await client.close();
    await mcp.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
});

const text = (result: unknown) => ((result as { content: { type: string; text?: string }[] }).content.map((c) => c.text).join(''));

describe('serveMcp: the agent as one tool, over Streamable HTTP', () => {
  it('lists one tool taking the input, and a call runs the agent to its final reply', async () => {
    const { client } = await served([{ toolCalls: [{ id: 'b', name: 'get_balance', args: {} }] }, 'Your balance is 120.']);
    const { tools } = await client.listTools();
    expect(tools).toEqual([{ name: 'teller', description: 'A careful teller', inputSchema: { type: 'object', properties: { input: { type: 'string', description: 'What to ask the agent' } }, required: ['input'] } }]);
    const result = await client.callTool({ name: 'teller', arguments: { input: 'What is my balance?' } });
    expect([text(result), result.isError]).toEqual(['Your balance is 120.', undefined]);
  });

  it('a call that needs approval is asked of the client through elicitation, and runs once it approves', async () => {
    const { client, transfers, asked } = await served([{ toolCalls: [{ id: 't', name: 'transfer', args: { to: 'alice', amount: 80 } }] }, 'Paid Alice 80.'], () => ({ action: 'accept', content: { approve: true } }));
    const result = await client.callTool({ name: 'teller', arguments: { input: 'Pay Alice 80' } });
    expect(text(result)).toBe('Paid Alice 80.');
    expect(asked).toEqual(['teller wants to call transfer with {"to":"alice","amount":80}. Approve it?']);
    expect(transfers).toEqual([{ to: 'alice', amount: 80 }]);
  });

  it('keeps the client\'s decision on the run\'s record, as given through mcp', async () => {
    const teller = buildTeller([{ toolCalls: [{ id: 't', name: 'transfer', args: { to: 'alice', amount: 80 } }] }, 'Paid Alice 80.']);
    const logs: unknown[] = [];
    teller.agent.use({ name: 'spy', tool: (ctx, next) => (logs.push(JSON.parse(JSON.stringify(ctx.state.decisionLog ?? null))), next()) });
    const { client } = await servedAgent(teller.agent, {}, () => ({ action: 'accept', content: { approve: true } }));
    await client.callTool({ name: 'teller', arguments: { input: 'Pay Alice 80' } });
    expect(logs.at(-1)).toEqual([expect.objectContaining({ toolCallId: 't', decision: 'approved', args: { to: 'alice', amount: 80 }, surface: 'mcp' })]);
  });

  it('a call the client declines does not run, and the agent reads why', async () => {
    const { client, transfers, model } = await served([{ toolCalls: [{ id: 't', name: 'transfer', args: { to: 'alice', amount: 80 } }] }, 'I did not pay.'], () => ({ action: 'accept', content: { approve: false, reason: 'Not this month' } }));
    const result = await client.callTool({ name: 'teller', arguments: { input: 'Pay Alice 80' } });
    expect(text(result)).toBe('I did not pay.');
    expect(transfers).toEqual([]);
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: 'Error (denied): Not this month' });
  });

  it('a client without elicitation gets the call refused, with a message saying why', async () => {
    const { client, transfers, model } = await served([{ toolCalls: [{ id: 't', name: 'transfer', args: { to: 'alice', amount: 80 } }] }, 'I could not pay.']);
    const result = await client.callTool({ name: 'teller', arguments: { input: 'Pay Alice 80' } });
    expect(text(result)).toBe('I could not pay.');
    expect(transfers).toEqual([]);
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: "Error (denied): transfer needs a human's approval, and this MCP client cannot be asked (it does not support elicitation), so it was not run" });
  });

  it("the run's model turns and tool calls reach a client that asks for progress", async () => {
    const { client } = await served([{ toolCalls: [{ id: 'b', name: 'get_balance', args: {} }] }, { toolCalls: [{ id: 'c', name: 'get_balance', args: { account: 'savings' } }] }, 'Both are 120.']);
    const messages: string[] = [];
    await client.callTool({ name: 'teller', arguments: { input: 'Balances?' } }, undefined, { onprogress: (p) => void messages.push(String(p.message)) });
    // The SDK may drop the notification that arrives with the answer, so the last one is not checked.
    expect(messages.slice(0, 3)).toEqual(['model turn 1', 'calling get_balance', 'model turn 2']);
  });

  it('a request of a session that does not exist is answered 404, saying how to go on', async () => {
    await served([]);
    const { http } = opened[0];
    const response = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, { method: 'POST', headers: { 'mcp-session-id': 'gone', 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('No MCP session gone (it ended, or the server restarted): initialize a new one');
  });

  it('an agent whose output is given through a tool answers with that output as JSON, also when it is not an object', async () => {
    const cases: [z.ZodType, object, unknown, unknown][] = [
      [z.array(z.string()), { value: ['alice', 'bob'] }, ['alice', 'bob'], undefined],
      [z.object({ total: z.number() }), { total: 120 }, { total: 120 }, { total: 120 }],
    ];
    for (const [schema, args, answer, structured] of cases) {
      const agent = createAgent({ name: 'lister', model: mockModel([{ toolCalls: [{ name: 'final_answer', args }] }]), output: { schema, mode: 'tool' } });
      const { client } = await servedAgent(agent);
      const result = await client.callTool({ name: 'lister', arguments: { input: 'Who?' } });
      expect(JSON.parse(text(result))).toEqual(answer);
      expect(result.structuredContent).toEqual(structured);
    }
  });

  it('an input that is not a string is an error result naming what the tool takes', async () => {
    const { client } = await served([]);
    const result = await client.callTool({ name: 'teller', arguments: { input: 42 } });
    expect([text(result), result.isError]).toEqual(['teller takes { input: string }, the request for the agent (got 42)', true]);
  });
});
