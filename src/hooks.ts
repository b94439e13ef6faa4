// The `koagent/hooks` entry: both hook dialects in full, for code that imports its hook types
// from a hooks subpath (as AgentHook code did from the framework it comes from). The package
// root has the names the dialects' own guides import from their roots.

// The AgentHook dialect.
export type { AgentHook, GenerateHookContext, PostToolCallOutcome, PreToolCallOutcome, ToolCallHookContext, ToolCallHookResult } from './dialects/agent-hook/agent-hook.js';
export { HookRegistry, type HookRegistryOptions } from './dialects/agent-hook/hook-registry.js';
export type { SubagentInfo, ToolErrorKind, ToolFailure } from './api.js';

// The criogen Hook dialect.
export { ToolResult } from './dialects/criogen/tool-result.js';
export type { Hook, HookAction, HookContext, HookMessage, HookRunState, Maybe, SegmentOutcome, ToolCall } from './dialects/criogen/types.js';
