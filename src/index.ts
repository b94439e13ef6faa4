// koagent: the package root. Everything users write code against: the agent, tools, the public
// extension API (contexts, outcomes, messages, models, errors), both hook dialects, the built-in
// middleware and the OpenAI-compatible provider. Internal helpers stay inside.
export * from './api.js';
export { Agent, createAgent } from './agent/agent.js';
export type { PendingApprovalsOptions, RecoveredRun, RecoverOptions, SendOptions } from './agent/durable-options.js';
export type { AgentOptions, RunCallOptions } from './agent/options.js';
export type { AgentHook, GenerateHookContext, PostToolCallOutcome, PreToolCallOutcome, ToolCallHookContext, ToolCallHookResult } from './dialects/agent-hook/agent-hook.js';
export { HookRegistry, type HookRegistryOptions } from './dialects/agent-hook/hook-registry.js';
export { ToolResult } from './dialects/criogen/tool-result.js';
export type { Hook, HookAction, HookContext, HookMessage, HookRunState, Maybe, SegmentOutcome, ToolCall } from './dialects/criogen/types.js';
export { hasToolCall, stepCountIs, type Limits } from './features/limits.js';
export type { AgentStream } from './features/streaming/agent-stream.js';
export { InvalidOutputError, type OutputOptions, type OutputOptionsOf, type OutputSpec } from './features/structured-output.js';
export type { SubagentToolOptions } from './features/subagents/subagent-tool.js';
export { compactionMiddleware, type CompactionOptions } from './middleware/compaction-middleware.js';
export { fileMediaStore, MEDIA_REF, mediaStoreMiddleware, type MediaStore, type MediaStoreOptions } from './middleware/media-store-middleware.js';
export { isRetryableError, retryMiddleware, type RetryAttempt, type RetryOptions } from './middleware/retry-middleware.js';
export { timeoutMiddleware, TimeoutError, type TimeoutOptions } from './middleware/timeout-middleware.js';
export { openai, type OpenAIChatModel, type OpenAIProviderOptions } from './providers/openai.js';
export { registerModelPrefix, resolveModel, type ModelEnv, type ModelFactory } from './providers/registry.js';
export type { Checkpoint, CheckpointCall } from './stores/run-store.js';
export { memoryStore, type MemoryStoreOptions } from './stores/memory.js';
export type { ClaimedRun, ClaimOutcome, ClaimRequest, CreateOutcome, Lease, NewRun, RetentionPolicy, RunFilter, RunStore, RunSummary, StoreStats } from './stores/run-store.js';
export { defineTool, type ToolDefinition, type ToolInput } from './tools/define.js';
export { jsonSchemaInput, type JsonSchemaCheck, type JsonSchemaIssue } from './tools/json-schema-input.js';
export { isToolset, type Toolset } from './tools/toolset.js';
export type { PermissionRule, PermissionsOption } from './tools/permissions.js';
