// One connection to an MCP server, opened when something needs it and closed when the last
// holder lets go: the runs that use it (each segment holds it while it runs), or the user who
// opened it. A server that died is connected to again at the next call; a call in flight when it
// died fails at once with a message saying so. Every request has a timeout: nothing waits forever.
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Progress, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';

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
  /** The server's tools, after each listing (at connect, and after it said they changed). */
  onTools(tools: McpTool[]): void;
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
    client.onclose = () => this.#forget(client, transport.stderrTail === undefined ? '' : lastWords(transport.stderrTail()));
    try {
      await client.connect(transport, { timeout: connectTimeout });
      const tools = await listTools(client, connectTimeout);
      this.#client = client;
      this.#transport = transport;
      this.#lost = undefined;
      this.#listing++;
      this.#spec.onTools(tools);
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      const words = transport.stderrTail === undefined ? '' : lastWords(transport.stderrTail());
      throw new Error(`could not ${again ? 'reconnect' : 'connect'} to MCP server "${name}" (${target}): ${describe(error)}${words}`, { cause: error });
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
      (tools) => {
        // Only the newest listing counts: one started later may have finished first.
        if (this.#client === client && listing === this.#listing) this.#spec.onTools(tools);
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

/** Every tool of the server, page by page. */
async function listTools(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** The end of what a server wrote to stderr, for a message about why it went away. */
function lastWords(tail: string): string {
  const text = tail.trim();
  return text === '' ? '' : ` (its last words on stderr: ${JSON.stringify(text.length > 300 ? `…${text.slice(-300)}` : text)})`;
}
