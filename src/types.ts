/**
 * The other types of the public API's signatures, for code that names one: messages and content
 * parts, a provider's stream parts and tool specs, the interfaces to augment (`MiddlewareEvents`,
 * `RunVariables`, `CallVariables`), permission rules, stop reasons and usage, and `agent.runs`'s
 * own type. What `agent.runs`' methods give is read from it (`Awaited<ReturnType<AgentRuns['recover']>>`).
 * Types only.
 *
 * @example
 * ```ts
 * import type { ToolMessage, PermissionRule } from 'koagent/types';
 * ```
 *
 * @packageDocumentation
 * @module koagent/types
 */
// The `koagent/types` entry: the rest of the types the public API's signatures use, for code that
// names one. Types only: nothing here runs. An options object's type is read from its
// function's signature (`Parameters<typeof retryMiddleware>[0]`), except the agent's own
// (`AgentOptions`, `RunCallOptions`, on the root); docs/design.md, "Entry points", says why.

// Messages and their content parts.
/** @category Messages */
export type { AssistantContentPart, ContentPart, FilePart, ImagePart, ReasoningPart, TextPart, ToolContentPart } from './api.js';
/** @category Messages */
export type { AssistantMessage, AssistantToolCall, RunInput, SystemMessage, ToolMessage, UserMessage } from './api.js';

// Models and providers.
/** @category Providers */
export type { StreamPart, TokenUsage, ToolSpec } from './api.js';
/** @category Providers */
export type { OpenAIChatModel } from './providers/openai.js';

// Contexts, what layers keep, and the interfaces a module augments.
/** @category Middleware */
export type { BaseContext, CallVariables, HookState, Logger, MiddlewareEvents, RunVariables, ToolCallRecord } from './api.js';

// Tools: toolsets, failures, permissions and guardrails.
/** @category Tools */
export type { PermissionRecord, ToolErrorKind } from './api.js';
/** @category Tools */
export type { JsonSchemaCheck } from './tools/json-schema-input.js';
/** @category Tools */
export type { Toolset } from './tools/toolset.js';
/** @category Tools */
export type { PermissionRule } from './tools/permissions.js';

// Runs: their state, how they stop, what they cost, decisions, structured output.
/** @category Agent */
export type { DecisionRecord, ResumeClaim, RunStatus, StopCondition, StopReason, Usage } from './api.js';

// Durable runs, as `agent.runs` gives them (a store's own interface is `koagent/store`).
/** @category Stores */
export type { AgentRuns } from './agent/agent-runs.js';
/** @category Stores */
export type { RunSummary } from './stores/run-store.js';
