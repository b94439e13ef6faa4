// The `koagent/hooks` entry: the AgentHook dialect on its own, for code that imports its hook
// types and HookRegistry from a hooks subpath (as it did from the framework it comes from).
export {
  type AgentHook,
  type ToolCallHookContext,
  type GenerateHookContext,
  type ToolCallHookResult,
  type PreToolCallOutcome,
  type PostToolCallOutcome,
} from './dialects/agent-hook.js';
export { HookRegistry, isHookRegistry, type HookRegistryOptions } from './dialects/hook-registry.js';
export type { SubagentInfo } from './context.js';
export type { ToolFailure, ToolErrorKind } from './tools/outcome.js';
