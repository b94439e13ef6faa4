import type { ToolContentPart } from './content.js';
import type { AssistantMessage } from './messages.js';
import type { FinishReason, TokenUsage } from './model.js';
import type { ToolFailure } from './outcome.js';
import type { RunStatus, StopReason } from './state.js';

/**
 * What a permission rule, a hook or a human decided about one call.
 *
 * @example const decision: PermissionDecision = 'ask';
 *
 * @inline
 */
export type PermissionDecision = 'allow' | 'deny' | 'ask';

/**
 * One decision about one call, as `onPermissionDecision` and `permission.decision` events get it.
 *
 * @example onPermissionDecision: (r) => audit.write(`${r.toolName}: ${r.decision} (${r.source}${r.rule ? ` ${r.rule}` : ''})`)
 */
export interface PermissionRecord {
  toolName: string;
  toolCallId: string;
  args: unknown;
  decision: PermissionDecision;
  source: 'rule' | 'hook' | 'approval' | 'default';
  /** The rule's name, when `source` is `rule`. */
  rule?: string;
  /** The layer's or hook's name, when `source` is `hook`. */
  hook?: string;
  reason?: string;
  /** Agent names from the lead agent down, when the decision was made inside a sub-agent. */
  agentPath?: string[];
}

/**
 * Told about every permission decision of a run, its sub-agents' included (the agent's `onPermissionDecision`).
 *
 * @example const audit: PermissionListener = (r) => console.log(r.agentPath?.join('/') ?? 'lead', r.toolName, r.decision);
 */
export type PermissionListener = (record: PermissionRecord) => void;

interface EventBase {
  runId: string;
  /** Milliseconds since the epoch. */
  at: number;
  /** Agent names from the lead agent down, when the event comes from a sub-agent. */
  agentPath?: string[];
}

// An interface, not a type, so that modules can merge their entries into it.
/**
 * The events middleware emit, by type: each entry is one event's fields besides `type` (the run
 * adds `runId` and `at`). Empty here; a module that emits events adds them by declaration merging
 * (the built-ins do, in their own files), and `AgentEvent` and `ctx.emit` then know them.
 *
 * @example declare module 'koagent/types' { interface MiddlewareEvents { 'audit.logged': { toolName: string } } }
 */
export interface MiddlewareEvents {}

type MiddlewareEventType = keyof MiddlewareEvents & string;
// `never` while the map is empty: then `AgentEvent` is the core events alone.
type MiddlewareEvent = { [T in MiddlewareEventType]: { type: T } & MiddlewareEvents[T] }[MiddlewareEventType];

/**
 * What `onEvent` listeners and `agent.stream()` consumers receive: the run's own events and those
 * declared in `MiddlewareEvents`. Events watch a run; they cannot change it. They carry what the
 * model sees, never a value a layer replaced.
 *
 * @example onEvent: (e) => { if (e.type === 'tool.error') console.warn(e.toolName, e.error.kind, e.error.message); }
 */
export type AgentEvent = EventBase &
  (
    | { type: 'run.start'; sessionId: string; segment: number; resumed: boolean }
    | { type: 'run.end'; status: RunStatus; stopReason?: StopReason; error?: { code: string; message: string; layer?: string } }
    | { type: 'model.start'; step: number; purpose: string }
    | { type: 'model.done'; step: number; purpose: string; message: AssistantMessage; usage: TokenUsage; finishReason: FinishReason }
    | { type: 'tool.start'; toolCallId: string; toolName: string; args: unknown }
    | { type: 'tool.done'; toolCallId: string; toolName: string; /** What the model reads: text, or parts. */ result: string | ToolContentPart[]; replacedBy?: string; replacedByHook?: string }
    | { type: 'tool.error'; toolCallId: string; toolName: string; /** As the call's outcome carries it: `by`, the layer, rule, guardrail or `approval` that settled it, when known. */ error: ToolFailure }
    | { type: 'approval.requested'; toolCallId: string; toolName: string; args: unknown; reason?: string; path?: string[] }
    | { type: 'model.retry'; step: number; attempt: number; delayMs: number; fromRetryAfter: boolean; message: string }
    | ({ type: 'permission.decision' } & PermissionRecord)
    | { type: 'text.delta'; delta: string; step: number }
    | { type: 'text.retract'; step: number; text: string }
    | { type: 'reasoning.delta'; delta: string; step: number }
    | { type: 'reasoning.retract'; step: number; text: string }
    | { type: 'output'; output: unknown }
    | { type: 'compaction.start'; messages: number; tokens: number }
    | { type: 'compaction.done'; before: number; after: number; tokensBefore: number; tokensAfter: number }
    // A middleware's own events: the module that emits them declares them in `MiddlewareEvents`.
    | MiddlewareEvent
  );

// A known type's fields, as declared; any fields for a type no one declared.
type EmittedFields<T extends string> = T extends AgentEvent['type'] ? Omit<Extract<AgentEvent, { type: T }>, 'runId' | 'at'> : { [field: string]: unknown };

/**
 * What `ctx.emit` takes: an event with a `type`; the run adds `runId` and `at`. An event of a
 * type `AgentEvent` knows must carry that type's fields; any other type carries what it likes.
 *
 * @example ctx.emit?.({ type: 'cache.hit', step: ctx.step, key, savedTokens: 120 });
 */
export type EmittedEvent<T extends string = string> = { type: T } & EmittedFields<T>;

/**
 * Watches a run's events (`onEvent`). One that throws or rejects is logged, and the run goes on.
 *
 * @example const log: EventListener = (e) => console.log(e.at, e.type);
 *
 * @inline
 */
export type EventListener = (event: AgentEvent) => void;
