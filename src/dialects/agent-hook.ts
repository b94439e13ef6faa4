// PLACEHOLDER — being written by the AgentHook helper (issue 4). Types below are the contract.
import type { ModelContext, ToolContext } from '../context.js';
import type { GenerateResult } from '../model.js';
import type { NamedMiddleware } from '../stacks.js';

/** The context of `preToolCall` / `postToolCall`: koagent's own tool context. */
export type ToolCallHookContext = ToolContext;
/** The context of `preGenerate` / `postGenerate`: koagent's own model context. */
export type GenerateHookContext = ModelContext;

export type PreToolCallOutcome = { deny: string } | { result: unknown } | { input: Record<string, unknown> } | void | undefined;
export interface ToolCallHookResult { result: unknown; error?: unknown; requiresApproval?: boolean }
export type PostToolCallOutcome = { result: unknown } | void | undefined;

export interface AgentHook {
  name: string;
  preToolCall?(ctx: ToolCallHookContext): PreToolCallOutcome | Promise<PreToolCallOutcome>;
  postToolCall?(ctx: ToolCallHookContext, result: ToolCallHookResult): PostToolCallOutcome | Promise<PostToolCallOutcome>;
  preGenerate?(ctx: GenerateHookContext): void | Promise<void>;
  postGenerate?(ctx: GenerateHookContext, result: GenerateResult): void | Promise<void>;
}

export function agentHookMiddleware(_hooks: () => readonly AgentHook[]): NamedMiddleware {
  throw new TypeError('AgentHook support is being implemented');
}
