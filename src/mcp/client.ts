// `mcpTools`: an MCP server as a toolset of an agent. Its tools are ordinary koagent tools, so
// every layer, hook, permission rule, guardrail and approval applies to them; its middleware
// holds the connection for each run segment and brings a changed tool list in between model turns.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { functionSchema, optionsSchema, parseOptions, wholeNumberSchema, type Middleware, type Tool, type ToolSpec } from '../api.js';
import type { Toolset } from '../tools/toolset.js';
import { McpConnection } from './connection.js';
import { koagentTools } from './tools.js';

// The event a call to a server's tool emits (in tools.ts), declared here, in the module
// koagent/mcp's declarations load, so that `AgentEvent` and `ctx.emit` know it.
declare module '../api.js' {
  interface MiddlewareEvents {
    'mcp.progress': { server: string; toolName: string; toolCallId: string; progress: number; total?: number; message?: string };
  }
}

/**
 * Options of `mcpTools`: the server (a command to spawn over stdio, or a Streamable HTTP URL),
 * how its tools are named, and how long requests and the connection may last.
 *
 * @example mcpTools({ name: 'fs', command: process.execPath, args: [serverEntry, dir], prefix: 'fs_' })
 *
 * @inline
 */
export interface McpToolsOptions {
  /** Names the server in messages, events (`mcp.progress`) and its layer (`mcp:<name>`). */
  name: string;
  /** stdio: the program to spawn (the server speaks MCP on its stdin and stdout). */
  command?: string;
  args?: string[];
  /** Added to the small default environment the SDK gives a server (PATH, HOME …). */
  env?: Record<string, string>;
  cwd?: string;
  /** Told what the server writes to stderr (koagent keeps its end for messages either way). */
  onStderr?: (text: string) => void;
  /** Streamable HTTP: the server's endpoint. */
  url?: string | URL;
  /** Sent with every HTTP request (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Put before each of the server's tool names, so two servers' tools cannot collide (`fs_` → `fs_read_file`). */
  prefix?: string;
  /** Milliseconds a request may take (a progress notification starts the wait again); default 60 000. */
  timeout?: number;
  /** Milliseconds to connect and list the tools; default 30 000. */
  connectTimeout?: number;
  /**
   * stdio: the largest message koagent reads from the server, in bytes; default 10 MiB (the MCP
   * SDK's). A larger answer (an image, a file) closes the connection, and the call fails saying so.
   */
  maxMessageBytes?: number;
  /**
   * `'run'` (default): a run segment that opened the connection closes it when it ends (when no
   * other segment uses it). `'agent'`: it stays open for the next runs until `agent.close()`.
   */
  lifetime?: 'run' | 'agent';
}

const optionsShape = optionsSchema({
  name: z.string({ error: 'must be a non-empty string naming the server' }).min(1, { error: 'must be a non-empty string naming the server' }),
  command: z.string({ error: 'must be the program to spawn, e.g. process.execPath' }).min(1).optional(),
  args: z.array(z.string(), { error: 'must be an array of strings' }).optional(),
  env: z.record(z.string(), z.string(), { error: 'must be an object of strings' }).optional(),
  cwd: z.string({ error: 'must be a directory path' }).optional(),
  onStderr: functionSchema('a function (text) => void').optional(),
  url: z.union([z.string(), z.instanceof(URL)], { error: 'must be the server\'s URL, e.g. http://127.0.0.1:3000/mcp' }).optional(),
  headers: z.record(z.string(), z.string(), { error: 'must be an object of header names to strings' }).optional(),
  prefix: z.string({ error: 'must be a string such as "fs_"' }).regex(/^[A-Za-z0-9_-]*$/, { error: 'may hold only letters, digits, "_" and "-" (what model APIs accept in tool names)' }).optional(),
  timeout: wholeNumberSchema(1, false, 'must be a whole number of milliseconds ≥ 1').optional(),
  connectTimeout: wholeNumberSchema(1, false, 'must be a whole number of milliseconds ≥ 1').optional(),
  maxMessageBytes: wholeNumberSchema(1024, false, 'must be a whole number of bytes ≥ 1024, e.g. 64 * 1024 * 1024').optional(),
  lifetime: z.enum(['run', 'agent'], { error: "must be 'run' or 'agent'" }).optional(),
}, { noun: 'an option of mcpTools', aliases: { cmd: 'command', argv: 'args', endpoint: 'url', serverUrl: 'url', environment: 'env', requestTimeout: 'timeout', timeoutMs: 'timeout', toolPrefix: 'prefix', namePrefix: 'prefix', keepAlive: 'lifetime', maxBufferSize: 'maxMessageBytes', maxMessageSize: 'maxMessageBytes', maxBytes: 'maxMessageBytes' } });

/**
 * An MCP server's tools as a toolset: give it to an agent in `tools`.
 *
 * @example const fs = mcpTools({ name: 'fs', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', dir] });
 *          const agent = createAgent({ model, tools: [fs], permissions: [{ annotations: { destructiveHint: true }, decision: 'ask' }] });
 */
export class McpToolset implements Toolset {
  readonly name: string;
  readonly middleware: Middleware;
  readonly #connection: McpConnection;
  #tools: readonly Tool[] = Object.freeze([]);
  /** Every spec this toolset ever offered, to find its own in a request built before its list changed. */
  readonly #specs = new WeakSet<ToolSpec>();
  /** Why tools of the server were left out at the last listing, not yet told to the agent's logger. */
  #untold: string[] = [];

  constructor(options: McpToolsOptions) {
    const o = parseOptions(optionsShape, options, 'mcpTools');
    if ((o.command === undefined) === (o.url === undefined)) {
      throw new TypeError(`mcpTools(${JSON.stringify(o.name)}): give either command (a server spawned over stdio) or url (a Streamable HTTP server), ${o.command === undefined ? 'not neither' : 'not both'}`);
    }
    if (o.command === undefined && (o.args ?? o.env ?? o.cwd ?? o.onStderr) !== undefined) throw new TypeError(`mcpTools(${JSON.stringify(o.name)}): args, env, cwd and onStderr belong to a server spawned with command, not to one at a url`);
    if (o.url !== undefined && o.maxMessageBytes !== undefined) throw new TypeError(`mcpTools(${JSON.stringify(o.name)}): maxMessageBytes limits what a server spawned with command sends over stdio; a server at a url has no such limit`);
    if (o.command !== undefined && o.headers !== undefined) throw new TypeError(`mcpTools(${JSON.stringify(o.name)}): headers belong to a server at a url, not to one spawned with command (use env)`);
    this.name = o.name;
    const prefix = o.prefix ?? '';
    this.#connection = new McpConnection({
      name: o.name,
      target: o.url !== undefined ? String(o.url) : [o.command, ...(o.args ?? [])].join(' '),
      transport: o.url !== undefined ? () => httpTransport(String(o.url), o.headers) : () => stdioTransport(o as McpToolsOptions & { command: string }),
      lifetime: o.lifetime ?? 'run',
      timeout: o.timeout ?? 60_000,
      connectTimeout: o.connectTimeout ?? 30_000,
      ...(o.maxMessageBytes !== undefined ? { maxMessageBytes: o.maxMessageBytes } : {}),
      onTools: (list, leftOut) => {
        this.#untold = leftOut.map((why) => `koagent: MCP server "${o.name}": ${why}; its other tools are offered`);
        const tools = koagentTools(list, { server: o.name, prefix, connection: this.#connection });
        for (const tool of tools) this.#specs.add(tool.spec);
        this.#tools = Object.freeze(tools);
      },
    });
    this.middleware = this.#layer();
  }

  /** The server's tools as of the last listing (none before the first connection). */
  tools(): readonly Tool[] {
    return this.#tools;
  }

  /** Whether a connection to the server is open now. */
  get connected(): boolean {
    return this.#connection.connected;
  }

  /**
   * Connect now and keep the connection until `close()` (whatever the lifetime): to list the
   * tools before a run, or to fail early when the server cannot be reached.
   *
   * @example await fs.connect(); console.log(fs.tools().map((t) => t.name));
   */
  connect(): Promise<void> {
    return this.#connection.open();
  }

  /**
   * Close the connection (a spawned server's process ends); a later run opens it again.
   *
   * @example await fs.close();
   */
  close(): Promise<void> {
    return this.#connection.close();
  }

  #layer(): Middleware {
    const connection = this.#connection;
    return {
      name: `mcp:${this.name}`,
      // The connection is this agent's: a sub-agent's runs hold their own toolsets.
      scope: 'lead-only',
      run: async (ctx, next) => {
        await connection.acquire();
        this.#tell(ctx.logger);
        try {
          return await next();
        } finally {
          await connection.release().catch((error: unknown) => ctx.logger.warn(`koagent: closing MCP server "${this.name}" failed`, error));
        }
      },
      model: async (ctx, next) => {
        // The server said its tools changed: this turn's request gets the new list.
        const refreshing = connection.refreshing;
        if (refreshing !== undefined) {
          const failed = await refreshing;
          if (failed !== undefined) ctx.logger.warn(`koagent: ${failed.message}`);
        }
        this.#tell(ctx.logger);
        ctx.request.tools = this.#current(ctx.request.tools ?? []);
        return next();
      },
    };
  }

  /** Warn of the tools left out at the last listing, once (a listing outside a run waits for the next run). */
  #tell(logger: { warn(message: string): void }): void {
    if (this.#untold.length === 0) return;
    for (const warning of this.#untold) logger.warn(warning);
    this.#untold = [];
  }

  /** The request's tools with this toolset's of the moment in place of any older ones. */
  #current(specs: readonly ToolSpec[]): ToolSpec[] {
    const now = this.#tools.map((tool) => tool.spec);
    if (now.every((spec) => specs.includes(spec)) && specs.every((spec) => !this.#specs.has(spec) || now.includes(spec))) return specs as ToolSpec[];
    const others = specs.filter((spec) => !this.#specs.has(spec));
    const names = new Set(others.map((spec) => spec.name));
    return [...others, ...now.filter((spec) => !names.has(spec.name))];
  }
}

/**
 * An MCP server's tools as a toolset of an agent (see `McpToolset`).
 *
 * @example const agent = createAgent({ model, tools: [mcpTools({ name: 'docs', url: 'https://example.com/mcp', headers: { Authorization: `Bearer ${token}` } })] });
 */
export function mcpTools(options: McpToolsOptions): McpToolset {
  return new McpToolset(options);
}

function stdioTransport(o: McpToolsOptions & { command: string }): StdioClientTransport & { stderrTail(): string } {
  const transport = new StdioClientTransport({
    command: o.command, args: o.args ?? [], stderr: 'pipe',
    ...(o.env ? { env: o.env } : {}), ...(o.cwd ? { cwd: o.cwd } : {}), ...(o.maxMessageBytes !== undefined ? { maxBufferSize: o.maxMessageBytes } : {}),
  });
  // Read always, so a talkative server never blocks on a full pipe; the end is kept for messages.
  let tail = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-2000);
    o.onStderr?.(text);
  });
  return Object.assign(transport, { stderrTail: () => tail });
}

function httpTransport(url: string, headers: Record<string, string> | undefined): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(url), headers === undefined ? {} : { requestInit: { headers } });
}
