// koagent: the package root. What an application builds, runs and extends an agent with: the
// agent, tools, middleware and the contexts it sees, both hook dialects as their guides import
// them, the built-in middleware, the OpenAI-compatible provider, the memory store, the errors,
// and the types everyday code names. Each name here is a decision: test/exports.test.ts lists
// them all and holds the root to 70. The other types of the API's signatures are on
// `koagent/types`, a run store's interface on `koagent/store`, the hook dialects in full on
// `koagent/hooks`, the options-checking helpers on `koagent/option-checks` and the media helpers
// on `koagent/media` (docs/design.md, "Entry points").

// The fields features declare on `Middleware` for themselves (`holdStream`, streaming's; `scope`,
// sub-agents'): imported here by name, so that every program importing the root sees them.
import './features/streaming/stream-reply.js';
import './features/subagents/subagent-tool.js';

// The agent.
export { Agent, createAgent } from './agent/agent.js';
export type { AgentOptions, RunCallOptions } from './agent/options.js';
export type { AgentEvent, ApprovalDecision, PendingApproval, RunResult, RunState } from './api.js';
export type { AgentStream } from './features/streaming/agent-stream.js';
export { hasToolCall, stepCountIs } from './features/limits.js';
export { InvalidOutputError } from './features/structured-output.js';

// Messages.
export { estimateTokens, mapText, textOf, type Message } from './api.js';

// Tools.
export { defineTool, type ToolDefinition } from './tools/define.js';
export { jsonSchemaInput } from './tools/json-schema-input.js';
export { isToolset } from './tools/toolset.js';
export { deny, toolError, ToolError, type Tool, type ToolOutcome } from './api.js';

// Middleware: writing one, and the built-in ones.
export { defineMiddleware, type Middleware, type ModelContext, type RunContext, type ToolContext } from './api.js';
export { compactionMiddleware, type CompactionOptions } from './middleware/compaction-middleware.js';
export { fileMediaStore, mediaStoreMiddleware, type MediaStore, type MediaStoreOptions } from './middleware/media-store-middleware.js';
export { isRetryableError, retryMiddleware, type RetryOptions } from './middleware/retry-middleware.js';
export { timeoutMiddleware, TimeoutError, type TimeoutOptions } from './middleware/timeout-middleware.js';

// The AgentHook dialect, as its guide imports it (all of it is on `koagent/hooks`).
export type { AgentHook, GenerateHookContext, ToolCallHookContext, ToolCallHookResult } from './dialects/agent-hook/agent-hook.js';
export { HookRegistry } from './dialects/agent-hook/hook-registry.js';

// The criogen Hook dialect, as its reference imports it (all of it is on `koagent/hooks`).
export { ToolResult } from './dialects/criogen/tool-result.js';
export type { Hook, HookAction, HookContext, Maybe, ToolCall } from './dialects/criogen/types.js';

// Models.
export type { GenerateOptions, GenerateResult, ModelProvider } from './api.js';
export { openai, type OpenAIProviderOptions } from './providers/openai.js';
export { registerModelPrefix, resolveModel } from './providers/registry.js';

// Runs kept in memory (the database stores are `koagent/sqlite` and `koagent/postgres`).
export { memoryStore, type MemoryStoreOptions } from './stores/memory.js';

// Errors.
export { KoagentError, ProviderError, RunFailedError } from './api.js';
