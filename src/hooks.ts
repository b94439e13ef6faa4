// The `koagent/hooks` entry: the AgentHook dialect on its own, for code that imports its hook
// types and HookRegistry from a hooks subpath (as it did from the framework it comes from).
export type { AgentHook, GenerateHookContext, PostToolCallOutcome, PreToolCallOutcome, ToolCallHookContext, ToolCallHookResult } from './dialects/agent-hook/agent-hook.js';
export { HookRegistry, type HookRegistryOptions } from './dialects/agent-hook/hook-registry.js';
export type { SubagentInfo, ToolErrorKind, ToolFailure } from './api.js';
