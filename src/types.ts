/**
 * The other types of the public API's signatures, for code that names one: message and content
 * parts, model stream parts and tool specs, permission rules, guardrails, limits, output specs,
 * event listeners, stop reasons, usage. Types only.
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
// names one — a part of an option, of a message, of a result or of an event. Types only: nothing
// here runs. The types everyday code names are on the package root; a run store's interface is
// on `koagent/store`; the hook dialects' own types are on `koagent/hooks`.

// Messages and their content parts.
/** @category Messages */
export type {
  AssistantContentPart,
  ContentPart,
  FilePart,
  ImagePart,
  ProviderOptions,
  ReasoningPart,
  TextPart,
  ToolContentPart,
  UserContentPart,
} from './api.js';
/** @category Messages */
export type { AssistantMessage, AssistantToolCall, RunInput, SystemMessage, ToolMessage, UserMessage } from './api.js';

// Models and providers.
/** @category Providers */
export type { FinishReason, ResponseFormat, StreamPart, TokenUsage, ToolSpec } from './api.js';
/** @category Providers */
export type { ProviderErrorDetails, ProviderErrorKind } from './api.js';
/** @category Providers */
export type { OpenAIChatModel } from './providers/openai.js';
/** @category Providers */
export type { ModelEnv, ModelFactory } from './providers/registry.js';
/** @category Middleware */
export type { RetryAttempt } from './middleware/retry-middleware.js';

// Contexts and what they are given.
/** @category Middleware */
export type { BaseContext, CallVariables, Logger, RunVariables, SideRequest, SubagentInfo, ToolCallRecord } from './api.js';
/** @category Agent */
export type { EmittedEvent, EventListener, MiddlewareEvents, PermissionDecision, PermissionListener, PermissionRecord } from './api.js';

// Tools: definitions, toolsets, failures, permissions and guardrails.
/** @category Tools */
export type { GuardrailVerdict, InputGuardrail, InterruptPolicy, OutputGuardrail, ToolAnnotations } from './api.js';
/** @category Tools */
export type { ToolErrorKind, ToolExceptionPolicy, ToolFailure } from './api.js';
/** @category Tools */
export type { ToolInput } from './tools/define.js';
/** @category Tools */
export type { JsonSchemaCheck, JsonSchemaIssue } from './tools/json-schema-input.js';
/** @category Tools */
export type { Toolset } from './tools/toolset.js';
/** @category Tools */
export type { PermissionRule, PermissionsOption } from './tools/permissions.js';

// Runs: their state, how they stop, what they cost, structured output, sub-agents.
/** @category Errors */
export type { ErrorCode, ErrorCodes } from './api.js';
/** @category Agent */
export type { DecisionActor, DecisionRecord, DecisionSurface, ResumeClaim, RunStatus, StopCondition, StopReason, EndReason, Usage } from './api.js';
/** @category Agent */
export type { Limits } from './features/limits.js';
/** @category Agent */
export type { OutputOptions, OutputOptionsOf, OutputSpec } from './features/structured-output.js';
/** @category Tools */
export type { SubagentToolOptions } from './features/subagents/subagent-tool.js';

// Durable runs, as the agent's methods see them (a store's own interface is `koagent/store`).
/** @category Stores */
export type { AdoptedRun, AdoptFilter, AdoptRunsOptions, PendingApprovalsOptions, RecoverableRun, RecoveredRun, RecoverOptions, SendOptions } from './agent/durable-options.js';
/** @category Stores */
export type { RunSummary } from './stores/run-store.js';
