// koagent/mcp: the Model Context Protocol. An MCP server's tools as a toolset of an agent (every
// layer, hook, rule and approval applies to them), and an agent served over MCP. The MCP SDK is an
// optional peer dependency: only this entry point loads it.
export { mcpTools, McpToolset, type McpToolsOptions } from './client.js';
export { McpAgentServer, serveMcp, type McpServeOptions } from './server.js';
