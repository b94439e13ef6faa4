/**
 * The Model Context Protocol: an MCP server's tools as a toolset of an agent, and an agent
 * served over MCP. Needs `@modelcontextprotocol/sdk`, an optional peer dependency.
 *
 * @example
 * ```ts
 * import { mcpTools, serveMcp } from 'koagent/mcp';
 * ```
 *
 * @packageDocumentation
 * @module koagent/mcp
 */
// koagent/mcp: the Model Context Protocol. An MCP server's tools as a toolset of an agent (every
// layer, hook, rule and approval applies to them), and an agent served over MCP. The MCP SDK is an
// optional peer dependency: only this entry point loads it.
/** @category Tools */
export { mcpTools, McpToolset } from './client.js';
/** @category Agent */
export { McpAgentServer, serveMcp } from './server.js';
