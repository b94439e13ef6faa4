// The connection to an MCP server: opened by a run and closed when it ends (or kept for the agent
// until agent.close()), a dead server reported and connected to again, cancellation and timeouts
// sent to the server, the tool list refreshed between model turns, Streamable HTTP with headers.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, RunFailedError, type AgentEvent } from '../../src/index.js';
import type { ToolSpec } from '../../src/types.js';
import { mcpTools } from '../../src/mcp/index.js';
import { mockModel } from '../../src/testing/index.js';
import { answerTo } from '../fixtures/counting-tools.js';
import { childProcesses, serverEntry, startHttpMcpServer, type HttpMcpServer } from '../fixtures/mcp-servers.js';

const everything = (extra: Partial<Parameters<typeof mcpTools>[0]> = {}) => mcpTools({ name: 'everything', command: process.execPath, args: [serverEntry('everything'), 'stdio'], prefix: 'ev_', ...extra });

let http: HttpMcpServer | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});
afterAll(() => {
  expect(childProcesses()).toEqual([]);
});

/** A layer that notes how many server processes run while a tool call goes through it. */
function processCounter() {
  const counts: number[] = [];
  return { counts, layer: { name: 'count-processes', tool: async (_ctx: unknown, next: () => Promise<unknown>) => (counts.push(childProcesses().length), next()) } as never };
}

describe('MCP connections: lifetime', () => {
  it("with lifetime 'run', the run that opened the connection closes it: no process is left", async () => {
    const counter = processCounter();
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'ev_echo', args: { message: 'hi' } }] }, 'Done.']), tools: [everything()], middleware: [counter.layer] });
    await agent.run('go');
    expect(counter.counts).toEqual([1]);
    expect(childProcesses()).toEqual([]);
  });

  it("with lifetime 'agent', the connection outlives the run until agent.close()", async () => {
    const set = everything({ lifetime: 'agent' });
    const agent = createAgent({ model: mockModel(['One.', 'Two.']), tools: [set] });
    await agent.run('first');
    await agent.run('second');
    expect([set.connected, childProcesses().length]).toEqual([true, 1]);
    await agent.close();
    expect([set.connected, childProcesses()]).toEqual([false, []]);
  });

  it('a server that cannot be started fails the run with a message saying so, and leaves nothing behind', async () => {
    const broken = mcpTools({ name: 'broken', command: process.execPath, args: ['-e', 'console.error("no config file"); process.exit(3)'] });
    const error = await createAgent({ model: mockModel(['Never.']), tools: [broken] }).run('go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFailedError);
    expect((error as Error).message).toMatch(/could not connect to MCP server "broken" \(.*\): .*its last words on stderr: "no config file"/s);
    expect(childProcesses()).toEqual([]);
  });
});

describe('MCP connections: a server that dies', () => {
  it('killed mid-call gives the call a clear execution error; the next call connects again', async () => {
    const events: AgentEvent[] = [];
    const agent = createAgent({
      model: mockModel([
        { toolCalls: [{ id: 'long', name: 'ev_trigger-long-running-operation', args: { duration: 30, steps: 300 } }] },
        { toolCalls: [{ id: 'echo', name: 'ev_echo', args: { message: 'still there?' } }] },
        'Recovered.',
      ]),
      tools: [everything()],
      onEvent: (event) => {
        events.push(event);
        // The server is working on the call (it reports progress): kill it.
        if (event.type === 'mcp.progress' && events.filter((e) => e.type === 'mcp.progress').length === 1) {
          const [pid] = childProcesses()[0].split(' ');
          process.kill(Number(pid), 'SIGKILL');
        }
      },
    });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'long').content).toMatch(/^Error \(execution\): .*MCP server "everything" closed the connection while trigger-long-running-operation was running.*the call may have taken effect/s);
    expect(answerTo(result.messages, 'echo').content).toBe('Echo: still there?');
    expect(result.text).toBe('Recovered.');
    expect(childProcesses()).toEqual([]);
  });

  it('an HTTP server that went away between turns is reported at the next call, without a hang', async () => {
    http = await startHttpMcpServer((server) => server.registerTool('ping', { description: 'Ping', inputSchema: {} }, () => ({ content: [{ type: 'text', text: 'pong' }] })));
    const gone = http;
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ id: 'a', name: 'ping', args: {} }] }, { toolCalls: [{ id: 'b', name: 'ping', args: {} }] }, 'Done.']),
      tools: [mcpTools({ name: 'pinger', url: gone.url })],
      middleware: [{ name: 'stop-server', tool: async (ctx, next) => { const outcome = await next(); if (ctx.toolCallId === 'a') await gone.close(); return outcome; } }],
    });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'a').content).toBe('pong');
    expect(answerTo(result.messages, 'b').content).toMatch(/^Error \(execution\): .*MCP server "pinger" \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached for ping/s);
  });
});

/** A server whose `slow` tool waits until it is cancelled, and records how it ended. */
async function slowServer() {
  const seen: { started: number; cancelled: string[] } = { started: 0, cancelled: [] };
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  http = await startHttpMcpServer((server) =>
    server.registerTool('slow', { description: 'Takes its time', inputSchema: {} }, (_args, extra) => {
      seen.started++;
      started();
      return new Promise((resolve) => extra.signal.addEventListener('abort', () => {
        seen.cancelled.push(String(extra.signal.reason));
        resolve({ content: [{ type: 'text', text: 'cancelled' }] });
      }));
    }),
  );
  return { url: http.url, seen, running };
}

describe('MCP connections: cancellation and timeouts reach the server', () => {
  it('aborting the run mid-call sends the server a cancellation, and the call settles as aborted', async () => {
    const { url, seen, running } = await slowServer();
    const controller = new AbortController();
    void running.then(() => controller.abort(new Error('the user stopped it')));
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'slow', args: {} }] }, 'Never.']), tools: [mcpTools({ name: 'slowpoke', url })] });
    const result = await agent.run('go', { signal: controller.signal });
    expect([result.status, result.stopReason]).toEqual(['completed', 'aborted']);
    expect(answerTo(result.messages, 'c').metadata?.error).toMatchObject({ kind: 'aborted' });
    await expect.poll(() => seen.cancelled).toEqual([expect.stringContaining('the user stopped it')]);
  });

  it('a request past its timeout is cancelled on the server and settles as an execution error saying so', async () => {
    const { url, seen } = await slowServer();
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'slow', args: {} }] }, 'It timed out.']), tools: [mcpTools({ name: 'slowpoke', url, timeout: 300 })] });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toBe('Error (execution): slow threw: MCP server "slowpoke" did not answer slow within 300 ms, so koagent cancelled the call (the server was told; it may have taken effect)');
    await expect.poll(() => seen.cancelled.length).toBe(1);
  });
});

describe('MCP connections: Streamable HTTP', () => {
  const echo = (server: Parameters<Parameters<typeof startHttpMcpServer>[0]>[0]) => server.registerTool('whoami', { description: 'Who is calling', inputSchema: { name: z.string() } }, ({ name }) => ({ content: [{ type: 'text', text: `hello ${name}` }] }));

  it('sends the headers with every request, and ends its session when the run ends', async () => {
    http = await startHttpMcpServer(echo, { requireHeader: ['Authorization', 'Bearer s3cret'] });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'whoami', args: { name: 'ada' } }] }, 'Done.']), tools: [mcpTools({ name: 'api', url: http.url, headers: { Authorization: 'Bearer s3cret' } })] });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toBe('hello ada');
    expect(http.requests.every((r) => r.headers.authorization === 'Bearer s3cret')).toBe(true);
    expect(http.requests.map((r) => r.method)).toContain('DELETE');
    expect(http.sessions()).toBe(0);
  });

  it('a server that refuses the credentials fails the run, saying which server', async () => {
    http = await startHttpMcpServer(echo, { requireHeader: ['Authorization', 'Bearer s3cret'] });
    const error = await createAgent({ model: mockModel(['Never.']), tools: [mcpTools({ name: 'api', url: http.url, headers: { Authorization: 'Bearer wrong' } })] }).run('go').catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/could not connect to MCP server "api" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): .*unauthorized/s);
  });

  it('a tools/list_changed the server sends before it answers brings the new tools into the next model turn', async () => {
    http = await startHttpMcpServer((server) => {
      server.registerTool('unlock', { description: 'Unlock the secret tool', inputSchema: {} }, async (_args, extra) => {
        server.registerTool('secret', { description: 'The secret', inputSchema: {} }, () => ({ content: [{ type: 'text', text: '42' }] }));
        // Sent on this call's own stream, so it arrives before the answer.
        await server.server.notification({ method: 'notifications/tools/list_changed' }, { relatedRequestId: extra.requestId });
        return { content: [{ type: 'text', text: 'unlocked' }] };
      });
    });
    const model = mockModel([{ toolCalls: [{ id: 'a', name: 'unlock', args: {} }] }, { toolCalls: [{ id: 'b', name: 'secret', args: {} }] }, 'The secret is 42.']);
    const result = await createAgent({ model, tools: [mcpTools({ name: 'vault', url: http.url })] }).run('go');
    expect(model.calls.map((call) => (call.request.tools as ToolSpec[]).map((spec) => spec.name))).toEqual([['unlock'], ['unlock', 'secret'], ['unlock', 'secret']]);
    expect(answerTo(result.messages, 'b').content).toBe('42');
  });
});
