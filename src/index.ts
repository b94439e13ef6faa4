/**
 * What an application is written with: the agent and its results, tools, middleware and the
 * contexts they see, per-run state for a layer, the OpenAI-compatible provider and model strings,
 * the memory store, stop conditions and the errors. The built-in middleware are on
 * `koagent/middleware`, the hook dialects on `koagent/hooks`, the other types on `koagent/types`.
 *
 * @example
 * ```ts
 * import { createAgent, defineTool } from 'koagent';
 * ```
 *
 * @packageDocumentation
 * @module koagent
 */
// koagent: the package root, what an application is written with. Each name here is a decision:
// test/exports.test.ts lists them all and holds the root to 40. The built-in middleware are on
// `koagent/middleware`, both hook dialects on `koagent/hooks`, the other types of the API's
// signatures on `koagent/types`, a run store's interface on `koagent/store` (docs/design.md,
// "Entry points").

// The fields features declare on `Middleware` for themselves (`holdStream`, streaming's; `scope`,
// sub-agents'; `traceValues`, the layer trace's): imported here by name, so that every program
// importing the root sees them.
import './features/streaming/stream-reply.js';
import './features/subagents/subagent-tool.js';
import './features/layer-trace/layers.js';

// The agent.
/** @category Agent */
export { Agent, createAgent } from './agent/agent.js';
/** @category Agent */
export type { AgentOptions, RunCallOptions } from './agent/options.js';
/** @category Agent */
export type { AgentEvent, ApprovalDecision, PendingApproval, RunResult, RunState } from './api.js';
/** @category Agent */
export type { AgentStream } from './features/streaming/agent-stream.js';
/** @category Agent */
export { hasToolCall, stepCountIs } from './features/limits.js';
/** @category Errors */
export { InvalidOutputError } from './features/structured-output.js';

// Messages.
/** @category Messages */
export { mapText, textOf, type Message } from './api.js';

// Tools.
/** @category Tools */
export { defineTool } from './tools/define.js';
/** @category Tools */
export { jsonSchemaInput } from './tools/json-schema-input.js';
/** @category Tools */
export { deny, toolError, ToolError, type Tool, type ToolOutcome } from './api.js';

// Middleware: writing one, the contexts it sees, and a layer's own state in a run.
/** @category Middleware */
export { defineMiddleware, hookState, type Middleware, type ModelContext, type RunContext, type ToolContext } from './api.js';

// Models.
/** @category Providers */
export type { GenerateOptions, GenerateResult, ModelProvider } from './api.js';
/** @category Providers */
export { openai } from './providers/openai.js';
/** @category Providers */
export { registerModelPrefix, resolveModel } from './providers/registry.js';

// Runs kept in memory (the database stores are `koagent/sqlite` and `koagent/postgres`).
/** @category Stores */
export { memoryStore } from './stores/memory.js';

// Errors.
/** @category Errors */
export { KoagentError, ProviderError, RunFailedError } from './api.js';
