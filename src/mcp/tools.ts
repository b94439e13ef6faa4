// An MCP server's tools as koagent tools, made with `defineTool` like any other: a name models
// accept (with the server's prefix), the server's description, its JSON Schema as the input the
// model sees (checked with Ajv before any layer runs), and its annotations, with the protocol's
// defaults filled in, so a rule on `destructiveHint` treats a server that says nothing as
// destructive.
import { createHash } from 'node:crypto';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Tool, ToolAnnotations, ToolContext } from '../api.js';
import { defineTool } from '../tools/define.js';
import { jsonSchemaInput } from '../tools/json-schema-input.js';
import type { McpConnection } from './connection.js';
import { SchemaChecks } from './json-schema.js';
import { modelOutputOf, resultOf } from './results.js';

/** How a toolset names and runs its server's tools. */
export interface ToolMaking {
  server: string;
  prefix: string;
  connection: McpConnection;
}

const MAX_NAME = 64;

/** The server's tools as koagent tools, with the server's name of each (they may differ). */
export function koagentTools(list: readonly McpTool[], making: ToolMaking): Tool[] {
  const checks = new SchemaChecks();
  const taken = new Set<string>();
  return list.map((remote) => {
    const name = toolName(making.prefix, remote.name, taken);
    taken.add(name);
    return defineTool({
      name,
      description: remote.description ?? remote.title ?? remote.annotations?.title ?? `The ${remote.name} tool of MCP server "${making.server}"`,
      input: jsonSchemaInput(inputSchemaOf(remote), checks.check(inputSchemaOf(remote))),
      annotations: annotationsOf(remote),
      execute: (args, ctx) => callRemote(making, remote.name, args, ctx),
      toModelOutput: modelOutputOf,
    });
  });
}

async function callRemote(making: ToolMaking, remote: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  const emit = ctx.emit;
  const result = await making.connection.call(remote, args, {
    signal: ctx.signal,
    // Progress is asked for only when someone listens to the run's events.
    ...(emit === undefined ? {} : {
      onProgress: (p: { progress: number; total?: number; message?: string }) => emit({
        type: 'mcp.progress', server: making.server, toolName: ctx.toolName, toolCallId: ctx.toolCallId, progress: p.progress,
        ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}),
      }),
    }),
  });
  return resultOf(result, remote);
}

/** The server's input schema; one that is not an object schema (against the protocol) takes an object of anything. */
function inputSchemaOf(remote: McpTool): Record<string, unknown> {
  const schema = remote.inputSchema as Record<string, unknown> | undefined;
  return schema?.type === 'object' ? schema : { type: 'object' };
}

/** The server's hints with the protocol's defaults: not read-only, destructive, not idempotent, open world. */
function annotationsOf(remote: McpTool): ToolAnnotations {
  const given = remote.annotations ?? {};
  const readOnlyHint = given.readOnlyHint ?? false;
  const title = given.title ?? remote.title;
  return {
    ...(title !== undefined ? { title } : {}),
    readOnlyHint,
    // "Meaningful only when readOnlyHint is false": a read-only tool destroys nothing.
    destructiveHint: readOnlyHint ? false : given.destructiveHint ?? true,
    idempotentHint: given.idempotentHint ?? false,
    openWorldHint: given.openWorldHint ?? true,
  };
}

/**
 * A name models accept (letters, digits, `_`, `-`, at most 64): the prefix and the server's name,
 * other characters as `_`, a long one cut with a hash of the whole, and a clash told apart the same way.
 */
function toolName(prefix: string, remote: string, taken: ReadonlySet<string>): string {
  const full = `${prefix}${remote}`;
  const plain = full.replace(/[^A-Za-z0-9_-]/g, '_');
  if (plain.length <= MAX_NAME && !taken.has(plain)) return plain;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${plain.slice(0, MAX_NAME - 9)}_${hash}`;
}
