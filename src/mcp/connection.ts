// One connection to an MCP server, opened when something needs it and closed when the last
// holder lets go: the runs that use it (each segment holds it while it runs), or the user who
// opened it. A server that died is connected to again at the next call; a call in flight when it
// died fails at once with a message saying so. Every request has a timeout: nothing waits forever.
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, ListToolsResultSchema, McpError, ToolListChangedNotificationSchema, ToolSchema, type CallToolResult, type Progress, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { KoagentError } from '../api.js';

declare module '../api.js' {
  interface ErrorCodes {
    /** An MCP server could not be started or reached, or did not list its tools, when a run (or `toolset.connect()`) needed it. */
    mcp_connect_failed: true;
  }
}

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** What a connection needs to know of its server. */
export interface ConnectionSpec {
  /** The toolset's name, for messages. */
  name: string;
  /** How the server is reached, for messages: the command line, or the URL. */
  target: string;
  /** A fresh transport for each connection (a new process, a new HTTP session). */
  transport(): Transport & { stderrTail?(): string };
  /** Close after the last holder lets go (`'run'`), or only when told to (`'agent'`). */
  lifetime: 'run' | 'agent';
  timeout: number;
  connectTimeout: number;
  /** stdio: the largest message koagent reads from the server, in bytes (the SDK refuses larger ones). */
  maxMessageBytes?: number;
  /** The server's tools, after each listing (at connect, and after it said they changed), and why any it listed were left out. */
  onTools(tools: McpTool[], leftOut: string[]): void;
}

/** Options of one tool call. */
export interface CallOptions {
  signal: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

export class McpConnection {
  readonly #spec: ConnectionSpec;
  #client: Client | undefined;
  #transport: ReturnType<ConnectionSpec['transport']> | undefined;
  #opening: Promise<Client> | undefined;
  #closing: Promise<void> | undefined;
  #users = 0;
  #held = false;
  /** Why the last connection ended by itself (the server went away), for the next message. */
  #lost: string | undefined;
  /** The last connection ended because the server sent a message past `maxMessageBytes`. */
  #tooBig = false;
  #listing = 0;
  #refreshing: Promise<Error | undefined> | undefined;

  constructor(spec: ConnectionSpec) {
    this.#spec = spec;
  }

  /** Whether a connection is open now. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** A listing of the tools still under way (the server said they changed), resolving to its error if it failed. */
  get refreshing(): Promise<Error | undefined> | undefined {
    return this.#refreshing;
  }

  /** Hold the connection (a run segment, a call): opened if it is not. */
  async acquire(): Promise<void> {
    this.#users++;
    try {
      await this.#ensure();
    } catch (error) {
      await this.release();
      throw error;
    }
  }

  /** Let go of it: with lifetime `'run'`, the last holder closes it. */
  async release(): Promise<void> {
    this.#users--;
    if (this.#users === 0 && !this.#held && this.#spec.lifetime === 'run') await this.#shutdown();
  }

  /** Open it and keep it open until `close()`. */
  async open(): Promise<void> {
    this.#held = true;
    await this.#ensure();
  }

  /** Close it now (calls in flight fail); a later use opens it again. */
  async close(): Promise<void> {
    this.#held = false;
    await this.#shutdown();
  }

  /** Call a tool of the server; protocol and transport failures are errors whose message says what happened. */
  async call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    await this.acquire();
    try {
      const client = this.#client!;
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, {
          signal: options.signal,
          timeout: this.#spec.timeout,
          resetTimeoutOnProgress: true,
          ...(options.onProgress !== undefined ? { onprogress: options.onProgress } : {}),
        });
        return result as CallToolResult;
      } catch (error) {
        throw this.#callError(client, tool, error, options.signal);
      }
    } finally {
      await this.release();
    }
  }

  #callError(client: Client, tool: string, error: unknown, signal: AbortSignal): unknown {
    // Cancelled by the run: the SDK has told the server; the tool step reports it as aborted.
    if (signal.aborted) return error;
    const { name } = this.#spec;
    const code = error instanceof McpError ? error.code : undefined;
    if (code === ErrorCode.RequestTimeout) {
      return new Error(`MCP server "${name}" did not answer ${tool} within ${this.#spec.timeout} ms, so koagent cancelled the call (the server was told; it may have taken effect)`);
    }
    if ((code === ErrorCode.ConnectionClosed || this.#client !== client) && this.#tooBig) {
      return new Error(`MCP server "${name}" sent a message larger than ${sizeOf(this.#spec.maxMessageBytes)} while ${tool} was running (most likely its answer), more than koagent reads from a stdio server, so the connection was closed and the server stopped; the call may have taken effect. Raise the toolset's maxMessageBytes, or have the tool return less (a resource link rather than inline data). koagent connects again at the next call`);
    }
    if (code === ErrorCode.ConnectionClosed || this.#client !== client) {
      return new Error(`MCP server "${name}" closed the connection while ${tool} was running${this.#lost ?? ''}; the call may have taken effect. koagent connects again at the next call`);
    }
    if (code !== undefined) return new Error(`MCP server "${name}" refused ${tool}: ${describe(error)}`);
    // Not a protocol answer: the transport failed (an HTTP server that went away). Start afresh next time.
    this.#forget(client, ` (${describe(error)})`);
    return new Error(`MCP server "${name}" (${this.#spec.target}) could not be reached for ${tool}: ${describe(error)}. koagent connects again at the next call`);
  }

  #ensure(): Promise<Client> {
    if (this.#client !== undefined) return Promise.resolve(this.#client);
    return (this.#opening ??= this.#connect().finally(() => (this.#opening = undefined)));
  }

  async #connect(): Promise<Client> {
    await this.#closing;
    const { name, target, connectTimeout } = this.#spec;
    const again = this.#lost !== undefined;
    const transport = this.#spec.transport();
    const client = new Client({ name: 'koagent', version }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.#client === client) this.#refresh(client);
    });
    let tooBig = false;
    // The stdio transport reports a message past its limit here, then closes the connection.
    client.onerror = (error) => {
      if (/ReadBuffer exceeded maximum size/.test(error.message)) tooBig = true;
    };
    client.onclose = () => {
      if (this.#client === client) this.#tooBig = tooBig;
      this.#forget(client, transport.stderrTail === undefined ? '' : lastWords(transport.stderrTail()));
    };
    try {
      await client.connect(transport, { timeout: connectTimeout });
      const { tools, leftOut } = await listTools(client, connectTimeout);
      this.#client = client;
      this.#transport = transport;
      this.#lost = undefined;
      this.#tooBig = false;
      this.#listing++;
      this.#spec.onTools(tools, leftOut);
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      const words = transport.stderrTail === undefined ? '' : lastWords(transport.stderrTail());
      const why = tooBig ? `it sent a message larger than ${sizeOf(this.#spec.maxMessageBytes)}, more than koagent reads from a stdio server; raise the toolset's maxMessageBytes` : describe(error);
      throw new KoagentError('mcp_connect_failed', `could not ${again ? 'reconnect' : 'connect'} to MCP server "${name}" (${target}): ${why}${hintFor(error)}${words}`, { cause: error });
    }
  }

  /** The connection ended without koagent closing it: the next use connects again. */
  #forget(client: Client, why: string): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#transport = undefined;
    this.#lost = why;
    client.close().catch(() => undefined);
  }

  #refresh(client: Client): void {
    const listing = ++this.#listing;
    const done: Promise<Error | undefined> = listTools(client, this.#spec.timeout).then(
      ({ tools, leftOut }) => {
        // Only the newest listing counts: one started later may have finished first.
        if (this.#client === client && listing === this.#listing) this.#spec.onTools(tools, leftOut);
        return undefined;
      },
      (error: unknown) => new Error(`MCP server "${this.#spec.name}" said its tools changed, but listing them failed: ${describe(error)}; the last list stays`),
    );
    this.#refreshing = done;
    done.then(() => {
      if (this.#refreshing === done) this.#refreshing = undefined;
    });
  }

  #shutdown(): Promise<void> {
    const run = async () => {
      await this.#opening?.catch(() => undefined);
      const client = this.#client;
      const transport = this.#transport;
      this.#client = undefined;
      this.#transport = undefined;
      if (client === undefined) return;
      // An HTTP session is ended on the server too (bounded: a server that went away does not hold us up).
      const session = transport as { terminateSession?: () => Promise<void>; sessionId?: string } | undefined;
      if (session?.terminateSession !== undefined && session.sessionId !== undefined) {
        await Promise.race([session.terminateSession().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      }
      await client.close();
    };
    const closing: Promise<void> = (this.#closing ?? Promise.resolve()).then(run).finally(() => {
      if (this.#closing === closing) this.#closing = undefined;
    });
    this.#closing = closing;
    return closing;
  }
}

/** What an error says, for a message of ours. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// A listing whose tools are checked one by one: the SDK's own check of the whole answer
// (`client.listTools`) fails every tool of a server for one that is malformed.
const LenientListing = ListToolsResultSchema.extend({ tools: z.array(z.unknown()) });

/** Every tool of the server, page by page; a tool that breaks the protocol is left out, and `leftOut` says why. */
async function listTools(client: Client, timeout: number): Promise<{ tools: McpTool[]; leftOut: string[] }> {
  const tools: McpTool[] = [];
  const leftOut: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, LenientListing, { timeout });
    for (const listed of page.tools) {
      const checked = ToolSchema.safeParse(listed);
      if (checked.success) tools.push(checked.data);
      else leftOut.push(toolProblem(listed, checked.error.issues));
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  // What `client.listTools` would remember: the output schemas it checks results against.
  (client as unknown as { cacheToolMetadata(tools: McpTool[]): void }).cacheToolMetadata(tools);
  return { tools, leftOut };
}

/** Why a listed tool is left out, on one line: which tool, and what is wrong with it. */
function toolProblem(listed: unknown, issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const name = typeof (listed as { name?: unknown } | null)?.name === 'string' ? JSON.stringify((listed as { name: string }).name) : 'without a name';
  const schema = (listed as { inputSchema?: unknown } | null)?.inputSchema;
  if (issues.some((issue) => issue.path[0] === 'inputSchema')) {
    return `its tool ${name} is left out: its inputSchema must be an object schema ({ "type": "object", … }), as MCP requires, got ${preview(schema)}`;
  }
  return `its tool ${name} is left out: ${issues.map((issue) => `${issue.path.length === 0 ? 'the tool' : issue.path.map(String).join('.')}: ${issue.message}`).join('; ')}`;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** A byte count as messages give it: MiB when it is whole ones. */
function sizeOf(bytes = DEFAULT_MAX_MESSAGE_BYTES): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB (${bytes} bytes)` : `${bytes} bytes`;
}

/** The MCP SDK's limit on one message from a stdio server. */
const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** What to do about a failure to start the server, when the error says. */
function hintFor(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return ' (no such file: the command is not installed or not on the PATH the server gets, which is the SDK\'s default environment plus env, or cwd does not exist; give the command\'s full path)';
  if (code === 'EACCES') return ' (the command is not executable)';
  return '';
}

/** The end of what a server wrote to stderr, for a message about why it went away. */
function lastWords(tail: string): string {
  const text = tail.trim();
  return text === '' ? '' : ` (its last words on stderr: ${JSON.stringify(text.length > 300 ? `…${text.slice(-300)}` : text)})`;
}
