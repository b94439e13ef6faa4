/**
 * Both hook dialects in full: `AgentHook` and `HookRegistry` with their types, and the criogen
 * `Hook` with `ToolResult` and theirs.
 *
 * @example
 * ```ts
 * import { HookRegistry, type AgentHook } from 'koagent/hooks';
 * ```
 *
 * @packageDocumentation
 * @module koagent/hooks
 */
// The `koagent/hooks` entry: both hook dialects in full, for code that imports its hook types
// from a hooks subpath (as AgentHook code did from the framework it comes from). The package
// root has the names the dialects' own guides import from their roots.

// The AgentHook dialect.
/** @category Hooks */
export type { AgentHook, GenerateHookContext, PostToolCallOutcome, PreToolCallOutcome, ToolCallHookContext, ToolCallHookResult } from './dialects/agent-hook/agent-hook.js';
/** @category Hooks */
export { HookRegistry, type HookRegistryOptions } from './dialects/agent-hook/hook-registry.js';
/** @category Hooks */
export type { SubagentInfo, ToolErrorKind, ToolFailure } from './api.js';

// The criogen Hook dialect.
/** @category Hooks */
export { ToolResult } from './dialects/criogen/tool-result.js';
/** @category Hooks */
export type { Hook, HookAction, HookContext, HookMessage, HookRunState, Maybe, SegmentOutcome, ToolCall } from './dialects/criogen/types.js';
