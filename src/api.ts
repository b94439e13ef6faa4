// The public API that extensions are written against: contexts, outcomes, messages, models,
// results, events and errors. koagent's own hook dialects and built-in middleware import only
// this module (a dependency rule checks it), so "adapters over the one stack" holds literally:
// whatever they need, every user's middleware has too. The entry points choose from it: the
// package root the names everyday code uses, `koagent/types` the other types,
// `koagent/middleware` the options helpers and `koagent/store` the ledger's types. The media
// helpers and the token estimate are for the built-ins and providers only, on no entry point;
// so are these: `blame`, with which
// the dialects report the user's hook that threw rather than their own layer (a user's own
// layer is named by the run itself), `failing`, with which a dialect's run layer lets its hooks
// see the segment failing with what a hook threw before the layer rethrows it (a user's layer
// sees a failure in `ctx.state` once it comes out of `next()`), `jsonOf`, a faster
// `JSON.stringify` of a long transcript for the built-ins that serialise it on every call, and
// `ownValue` / `setOwn`, with which the dialects and built-ins read and write objects keyed by
// names others chose (a hook named `__proto__`, a tool named `constructor`).
export type {
  BaseContext,
  GuardrailVerdict,
  InputGuardrail,
  InterruptPolicy,
  Logger,
  ModelContext,
  OutputGuardrail,
  RunContext,
  SideRequest,
  SubagentInfo,
  Tool,
  ToolAnnotations,
  ToolCallRecord,
  ToolContext,
  RunVariables,
  CallVariables,
} from './core/vocabulary/contexts.js';
export { blame, KoagentError, RunFailedError, type ErrorCode, type ErrorCodes } from './core/vocabulary/errors.js';
export { approvalBreach } from './core/state/approved-call.js';
export type { AgentEvent, EmittedEvent, EventListener, MiddlewareEvents, PermissionDecision, PermissionListener, PermissionRecord } from './core/vocabulary/events.js';
export {
  estimateTokens,
  isUrl,
  mediaSource,
  mapText,
  MEDIA_TOKENS,
  parseDataUrl,
  sniffMediaType,
  textOf,
  type AssistantContentPart,
  type ContentPart,
  type FilePart,
  type ImagePart,
  type ProviderOptions,
  type ReasoningPart,
  type TextPart,
  type ToolContentPart,
  type UserContentPart,
} from './core/vocabulary/content.js';
export type { AssistantMessage, AssistantToolCall, Message, RunInput, SystemMessage, ToolMessage, UserMessage } from './core/vocabulary/messages.js';
export { jsonOf } from './core/state/transcript-view.js';
export { hookState, type HookState } from './core/vocabulary/hook-state.js';
export { failing } from './core/run/run-context.js';
export { ownValue, setOwn } from './core/vocabulary/json.js';
export { defineMiddleware, type Middleware } from './core/vocabulary/middleware.js';
export type { FinishReason, GenerateOptions, GenerateResult, ModelProvider, ResponseFormat, StreamPart, TokenUsage, ToolSpec } from './core/vocabulary/model.js';
export { functionSchema, optionsSchema, parseOptions, refuseMisspellings, wholeNumberSchema, type OptionsWording } from './core/vocabulary/options.js';
export { deny, toolError, type ToolFailure, type ToolOutcome } from './core/vocabulary/outcome.js';
export { isRetryableError, ProviderError, type ProviderErrorDetails, type ProviderErrorKind } from './core/vocabulary/provider-error.js';
export type { RunResult } from './core/vocabulary/result.js';
export type {
  ApprovalDecision,
  DecisionActor,
  DecisionRecord,
  DecisionSurface,
  LedgerCall,
  LedgerEntry,
  PendingApproval,
  ResumeClaim,
  RunState,
  RunStatus,
  StopCondition,
  EndReason,
  StopReason,
  Usage,
} from './core/vocabulary/state.js';
export { ToolError, type ToolErrorKind } from './core/vocabulary/tool-error.js';
export type { ToolExceptionPolicy } from './core/vocabulary/tool-exception.js';
