// The `koagent/types` entry: the rest of the types the public API's signatures use, for code that
// names one — a part of an option, of a message, of a result or of an event. Types only: nothing
// here runs. The types everyday code names are on the package root; a run store's interface is
// on `koagent/store`; the hook dialects' own types are on `koagent/hooks`.

// Messages and their content parts.
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
export type { AssistantMessage, AssistantToolCall, RunInput, SystemMessage, ToolMessage, UserMessage } from './api.js';

// Models and providers.
export type { FinishReason, ResponseFormat, StreamPart, TokenUsage, ToolSpec } from './api.js';
export type { ProviderErrorDetails, ProviderErrorKind } from './api.js';
export type { OpenAIChatModel } from './providers/openai.js';
export type { ModelEnv, ModelFactory } from './providers/registry.js';
export type { RetryAttempt } from './middleware/retry-middleware.js';

// Contexts and what they are given.
export type { BaseContext, Logger, SideRequest, SubagentInfo } from './api.js';
export type { EmittedEvent, EventListener, PermissionDecision, PermissionListener, PermissionRecord } from './api.js';

// Tools: definitions, toolsets, failures, permissions and guardrails.
export type { GuardrailVerdict, InputGuardrail, InterruptPolicy, OutputGuardrail, ToolAnnotations } from './api.js';
export type { ToolErrorKind, ToolExceptionPolicy, ToolFailure } from './api.js';
export type { ToolInput } from './tools/define.js';
export type { JsonSchemaCheck, JsonSchemaIssue } from './tools/json-schema-input.js';
export type { Toolset } from './tools/toolset.js';
export type { PermissionRule, PermissionsOption } from './tools/permissions.js';

// Runs: their state, how they stop, what they cost, structured output, sub-agents.
export type { ErrorCode, ErrorCodes } from './api.js';
export type { ResumeClaim, RunStatus, StopCondition, StopReason, Usage } from './api.js';
export type { Limits } from './features/limits.js';
export type { OutputOptions, OutputOptionsOf, OutputSpec } from './features/structured-output.js';
export type { SubagentToolOptions } from './features/subagents/subagent-tool.js';

// Durable runs, as the agent's methods see them (a store's own interface is `koagent/store`).
export type { AdoptedRun, AdoptFilter, AdoptRunsOptions, PendingApprovalsOptions, RecoverableRun, RecoveredRun, RecoverOptions, SendOptions } from './agent/durable-options.js';
export type { RunSummary } from './stores/run-store.js';
