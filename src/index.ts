/**
 * What an application builds, runs and extends an agent with: the agent, tools, middleware and
 * the contexts they see, both hook dialects as their guides import them, the OpenAI-compatible
 * provider, the memory store and the errors. Retry, timeout, compaction and the media store are
 * here too; the home of every built-in middleware is `koagent/middleware`.
 *
 * @example
 * ```ts
 * import { createAgent, defineTool } from 'koagent';
 * ```
 *
 * @packageDocumentation
 * @module koagent
 */
// koagent: the package root. What an application builds, runs and extends an agent with: the
// agent, tools, middleware and the contexts it sees, both hook dialects as their guides import
// them, the four most used built-in middleware (their home is `koagent/middleware`, which the
// docs import them from), the OpenAI-compatible provider, the memory store, the errors,
// and the types everyday code names. Each name here is a decision: test/exports.test.ts lists
// them all and holds the root to 70. The other types of the API's signatures are on
// `koagent/types`, a run store's interface on `koagent/store`, the hook dialects in full on
// `koagent/hooks`, the options-checking helpers on `koagent/option-checks` and the media helpers
// on `koagent/media` (docs/design.md, "Entry points").

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
export { estimateTokens, mapText, textOf, type Message } from './api.js';

// Tools.
/** @category Tools */
export { defineTool, type ToolDefinition } from './tools/define.js';
/** @category Tools */
export { jsonSchemaInput } from './tools/json-schema-input.js';
/** @category Tools */
export { isToolset } from './tools/toolset.js';
/** @category Tools */
export { deny, toolError, ToolError, type Tool, type ToolOutcome } from './api.js';

// Middleware: writing one, and the four built-ins most agents use (also on koagent/middleware,
// their home; the root keeps them for the programs that import them from here).
/** @category Middleware */
export { defineMiddleware, hookState, type HookState, type Middleware, type ModelContext, type RunContext, type ToolContext } from './api.js';
/** @category Middleware */
export { compactionMiddleware, type CompactionOptions } from './middleware/compaction-middleware.js';
/** @category Middleware */
export { fileMediaStore, mediaStoreMiddleware, type MediaStore, type MediaStoreOptions } from './middleware/media-store-middleware.js';
/** @category Middleware */
export { isRetryableError, retryMiddleware, type RetryOptions } from './middleware/retry-middleware.js';
/** @category Middleware */
export { timeoutMiddleware, TimeoutError, type TimeoutOptions } from './middleware/timeout-middleware.js';

// The AgentHook dialect, as its guide imports it (all of it is on `koagent/hooks`).
/** @category Hooks */
export type { AgentHook, GenerateHookContext, ToolCallHookContext, ToolCallHookResult } from './dialects/agent-hook/agent-hook.js';
/** @category Hooks */
export { HookRegistry } from './dialects/agent-hook/hook-registry.js';

// The criogen Hook dialect, as its reference imports it (all of it is on `koagent/hooks`).
/** @category Hooks */
export { ToolResult } from './dialects/criogen/tool-result.js';
/** @category Hooks */
export type { Hook, HookAction, HookContext, Maybe, ToolCall } from './dialects/criogen/types.js';

// Models.
/** @category Providers */
export type { GenerateOptions, GenerateResult, ModelProvider } from './api.js';
/** @category Providers */
export { openai, type OpenAIProviderOptions } from './providers/openai.js';
/** @category Providers */
export { registerModelPrefix, resolveModel } from './providers/registry.js';

// Runs kept in memory (the database stores are `koagent/sqlite` and `koagent/postgres`).
/** @category Stores */
export { memoryStore, type MemoryStoreOptions } from './stores/memory.js';

// Errors.
/** @category Errors */
export { KoagentError, ProviderError, RunFailedError } from './api.js';
