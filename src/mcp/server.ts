// An agent served over MCP (stdio or Streamable HTTP), driven by any MCP client: as one tool
// (its input → the run's final text), or its tools as tools. Either way each call goes through
// the agent's whole onion; a call that needs a human is asked of the client through MCP
// elicitation, and refused with a message saying why when the client cannot be asked.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { optionsSchema, parseOptions, setOwn, wholeNumberSchema, type AgentEvent, type ApprovalDecision, type Message, type PendingApproval, type RunResult, type ToolMessage } from '../api.js';
import type { Agent } from '../agent/agent.js';
import { describe } from './connection.js';
import { mcpContentOf } from './results.js';

const { version: koagentVersion } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * Options of `serveMcp`: what the agent offers (itself as one tool, or its tools), how it names
 * itself, and how long the client has to answer an approval.
 *
 * @example serveMcp(agent, { expose: 'tools', allowedHosts: ['127.0.0.1:3000'] })
 *
 * @inline
 */
export interface McpServeOptions {
  /** `'agent'` (default): one tool that runs the agent on its `input`; `'tools'`: the agent's tools, each a tool. */
  expose?: 'agent' | 'tools';
  /** The server's name for clients (default: the agent's name) and its version (default: koagent's). */
  name?: string;
  version?: string;
  /** With `expose: 'agent'`: the tool's name (default: the agent's name) and what the client's model is told it does. */
  toolName?: string;
  description?: string;
  /** Milliseconds the client has to answer an approval (default 600 000); no answer denies the call. */
  approvalTimeout?: number;
  /** Streamable HTTP: the Host header values accepted (protection against DNS rebinding), e.g. `['127.0.0.1:3000']`. */
  allowedHosts?: string[];
}

const serveOptions = optionsSchema({
  expose: z.enum(['agent', 'tools'], { error: "must be 'agent' or 'tools'" }).optional(),
  name: z.string({ error: 'must be a string' }).min(1).optional(),
  version: z.string({ error: 'must be a string' }).min(1).optional(),
  toolName: z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9_.-]{1,128}$/, { error: 'must be 1-128 letters, digits, "_", "-" or "."' }).optional(),
  description: z.string({ error: 'must be a string' }).optional(),
  approvalTimeout: wholeNumberSchema(1, false, 'must be a whole number of milliseconds ≥ 1').optional(),
  allowedHosts: z.array(z.string(), { error: 'must be an array of host[:port] strings' }).optional(),
}, { noun: 'an option of serveMcp', aliases: { mode: 'expose', as: 'expose', tool: 'toolName', hosts: 'allowedHosts', timeout: 'approvalTimeout' } });

type Extra = { signal: AbortSignal; requestId: string | number; sendNotification: (n: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message?: string } }) => Promise<void>; _meta?: { progressToken?: string | number } };

/**
 * An agent as an MCP server. One instance serves any number of connections: stdio, Streamable
 * HTTP sessions, or any transport of the SDK.
 *
 * @example const server = serveMcp(agent); await server.serveStdio();
 */
export class McpAgentServer {
  readonly #agent: Agent;
  readonly #options: McpServeOptions;
  readonly #servers = new Set<Server>();
  readonly #sessions = new Map<string, StreamableHTTPServerTransport>();

  constructor(agent: Agent, options: McpServeOptions = {}) {
    this.#agent = agent;
    this.#options = parseOptions(serveOptions, options, 'serveMcp');
  }

  /**
   * Serve one connection over an SDK transport.
   *
   * @example await server.connect(new StdioServerTransport());
   */
  async connect(transport: Transport): Promise<void> {
    const server = this.#server();
    await server.connect(transport);
  }

  /**
   * Serve over this process's stdin and stdout (what an MCP client that spawns the process expects).
   *
   * @example await serveMcp(agent).serveStdio();
   */
  serveStdio(): Promise<void> {
    return this.connect(new StdioServerTransport());
  }

  /**
   * Answer one HTTP request of the Streamable HTTP transport: a client's `initialize` starts a
   * session, later requests carry its `mcp-session-id`. Give it every request to the MCP path.
   *
   * @example createServer((req, res) => void server.handleHttp(req, res)).listen(3000, '127.0.0.1');
   */
  async handleHttp(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = this.#sessions.get(id);
      if (session === undefined) return void res.writeHead(404, { 'content-type': 'application/json' }).end(rpcError(-32001, `No MCP session ${id} (it ended, or the server restarted): initialize a new one`));
      return session.handleRequest(req, res, body);
    }
    if (req.method !== 'POST') return void res.writeHead(400, { 'content-type': 'application/json' }).end(rpcError(-32000, 'Start a session with an initialize request (POST) first'));
    const { allowedHosts } = this.#options;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void this.#sessions.set(sid, transport),
      ...(allowedHosts !== undefined ? { allowedHosts, enableDnsRebindingProtection: true } : {}),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.#sessions.delete(transport.sessionId);
    };
    await this.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /**
   * End every connection and session.
   *
   * @example process.on('SIGTERM', () => void server.close());
   */
  async close(): Promise<void> {
    const servers = [...this.#servers];
    this.#servers.clear();
    this.#sessions.clear();
    await Promise.all(servers.map((server) => server.close()));
  }

  #server(): Server {
    const agent = this.#agent;
    const o = this.#options;
    const server = new Server({ name: o.name ?? agent.name, version: o.version ?? koagentVersion }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: o.expose === 'tools' ? this.#toolList() : [this.#agentTool()] }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const args = request.params.arguments ?? {};
      try {
        if (o.expose === 'tools') return await this.#callTool(server, request.params.name, args, extra as unknown as Extra);
        if (request.params.name !== this.#agentTool().name) return failure(`There is no tool named "${request.params.name}"; this server offers ${this.#agentTool().name}`);
        return await this.#runAgent(server, args, extra as unknown as Extra);
      } catch (error) {
        return failure(`${agent.name} failed: ${describe(error)}`);
      }
    });
    server.onclose = () => void this.#servers.delete(server);
    this.#servers.add(server);
    return server;
  }

  #agentTool(): McpTool {
    const name = this.#options.toolName ?? this.#agent.name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 128);
    return {
      name,
      description: this.#options.description ?? `Ask the ${this.#agent.name} agent: it works on the input with its own tools and answers with its final reply`,
      inputSchema: { type: 'object', properties: { input: { type: 'string', description: 'What to ask the agent' } }, required: ['input'] },
    };
  }

  #toolList(): McpTool[] {
    return [...this.#agent.tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: { ...tool.spec.parameters, type: 'object' } as McpTool['inputSchema'],
      ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
    }));
  }

  /** The agent on the client's input, to its final reply; approvals asked of the client in between. */
  async #runAgent(server: Server, args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> {
    if (typeof args.input !== 'string') return failure(`${this.#agentTool().name} takes { input: string }, the request for the agent (got ${JSON.stringify(args.input) ?? 'nothing'})`);
    const options = { signal: extra.signal, onEvent: progressReporter(extra) };
    let result = await this.#agent.run(args.input, options);
    while (result.status === 'suspended') result = await this.#agent.resume(result.state, await this.#decide(server, result.pendingApprovals, extra), options);
    return outcomeOf(result);
  }

  /** One of the agent's tools, called through the agent's tool stack in a run that asks no model. */
  async #callTool(server: Server, name: string, args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> {
    const id = `mcp_${randomUUID()}`;
    const input: Message[] = [
      { role: 'user', content: `An MCP client calls ${name}.` },
      { role: 'assistant', content: '', toolCalls: [{ id, name, args }] },
    ];
    // Stop before any model turn: the run is the one call.
    const options = { signal: extra.signal, stopWhen: () => true };
    let result = await this.#agent.run(input, options);
    while (result.status === 'suspended') result = await this.#agent.resume(result.state, await this.#decide(server, result.pendingApprovals, extra), options);
    const answer = result.messages.find((m): m is ToolMessage => m.role === 'tool' && m.toolCallId === id);
    if (answer === undefined) return failure(`${name} did not run (the run stopped: ${result.stopReason})`);
    return { content: mcpContentOf(answer.content), ...(answer.metadata?.error !== undefined ? { isError: true } : {}) };
  }

  /**
   * A decision for each waiting call: asked of the client through elicitation, or a denial saying
   * why it cannot be; each on the run's record as given through `mcp`.
   */
  async #decide(server: Server, pending: readonly PendingApproval[], extra: Extra): Promise<Record<string, ApprovalDecision>> {
    const decisions: Record<string, ApprovalDecision> = {};
    for (const [id, decision] of Object.entries(await this.#asked(server, pending, extra))) {
      decisions[id] = typeof decision === 'boolean' ? { approved: decision, surface: 'mcp' } : { ...decision, surface: 'mcp' };
    }
    return decisions;
  }

  async #asked(server: Server, pending: readonly PendingApproval[], extra: Extra): Promise<Record<string, ApprovalDecision>> {
    const decisions: Record<string, ApprovalDecision> = {};
    const canAsk = server.getClientCapabilities()?.elicitation !== undefined;
    for (const call of pending) {
      if (!canAsk) {
        setOwn(decisions, call.toolCallId, { approved: false, reason: `${call.toolName} needs a human's approval, and this MCP client cannot be asked (it does not support elicitation), so it was not run` });
        continue;
      }
      try {
        const answer = await server.elicitInput({
          mode: 'form',
          message: `${this.#agent.name} wants to call ${call.toolName} with ${JSON.stringify(call.args)}${call.reason !== undefined ? ` (${call.reason})` : ''}. Approve it?`,
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', title: 'Approve', description: `Run ${call.toolName} with these arguments` }, reason: { type: 'string', title: 'Reason', description: 'Why not (told to the agent)' } },
            required: ['approve'],
          },
        }, { relatedRequestId: extra.requestId, signal: extra.signal, timeout: this.#options.approvalTimeout ?? 600_000 });
        const approved = answer.action === 'accept' && answer.content?.approve === true;
        const reason = typeof answer.content?.reason === 'string' && answer.content.reason !== '' ? answer.content.reason : answer.action === 'accept' ? 'The MCP client\'s user did not approve this call' : `The MCP client's user ${answer.action === 'decline' ? 'declined' : 'cancelled'} the approval`;
        setOwn(decisions, call.toolCallId, approved ? true : { approved: false, reason });
      } catch (error) {
        if (extra.signal.aborted) throw error;
        setOwn(decisions, call.toolCallId, { approved: false, reason: `Asking the MCP client to approve ${call.toolName} failed (${describe(error)}), so it was not run` });
      }
    }
    return decisions;
  }
}

/**
 * Serve `agent` over MCP (see `McpAgentServer`).
 *
 * @example const http = createServer((req, res) => void serveMcp(agent).handleHttp(req, res));
 */
export function serveMcp(agent: Agent, options: McpServeOptions = {}): McpAgentServer {
  return new McpAgentServer(agent, options);
}

function outcomeOf(result: RunResult): CallToolResult {
  const output = result.output;
  const structured = typeof output === 'object' && output !== null && !Array.isArray(output) ? { structuredContent: output as Record<string, unknown> } : {};
  // An output given through a tool (mode 'tool') leaves the last reply empty: the answer is then
  // its JSON, as MCP asks of a result's text, so an output that is no object is not lost.
  const text = result.text !== '' ? result.text
    : output !== undefined ? JSON.stringify(output)
    : result.stopReason === 'final' ? '' : `The run stopped (${result.stopReason}) without a reply`;
  return { content: [{ type: 'text', text }], ...structured };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

function rpcError(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** With a progress token from the client, each model turn and tool call of the run is a progress notification. */
function progressReporter(extra: Extra): ((event: AgentEvent) => void) | undefined {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  let progress = 0;
  return (event) => {
    const message = event.type === 'tool.start' ? `calling ${event.toolName}` : event.type === 'model.done' && event.purpose === 'turn' ? `model turn ${event.step}` : undefined;
    if (message === undefined) return;
    progress++;
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(() => undefined);
  };
}
