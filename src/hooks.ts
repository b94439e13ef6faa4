/**
 * Both hook dialects, their one home: `AgentHook` and `HookRegistry` with their types, and the
 * criogen `Hook` with `ToolResult` and theirs. The agent they are given to is the root's.
 *
 * @example
 * ```ts
 * import { HookRegistry, type AgentHook } from 'koagent/hooks';
 * ```
 *
 * @packageDocumentation
 * @module koagent/hooks
 */
// The `koagent/hooks` entry: both hook dialects, for hook code. A guide of either dialect runs
// with its import lines pointed here for the hook names, and at the root for the agent.

// The AgentHook dialect.
/** @category Hooks */
export type { AgentHook, GenerateHookContext, ToolCallHookContext, ToolCallHookResult } from './dialects/agent-hook/agent-hook.js';
/** @category Hooks */
export { HookRegistry } from './dialects/agent-hook/hook-registry.js';

// The criogen Hook dialect.
/** @category Hooks */
export { ToolResult } from './dialects/criogen/tool-result.js';
/** @category Hooks */
export type { Hook, HookAction, HookContext, Maybe, ToolCall } from './dialects/criogen/types.js';
