import type { ToolContext } from '../context.js';
import type { ToolCallPart } from '../messages.js';
import type { Run } from '../run.js';
import type { Span } from '../tracing.js';
import type { ToolOutcome } from './outcome.js';

const CALL = Symbol('koagent.call');

/** What the built-in steps keep about one call; not part of the public context. */
export interface CallInternals {
  run: Run;
  /** The schema's output for the current args, as the tool receives it. */
  parsed: unknown;
  /** A human's decision, when this call is being resumed. */
  decision?: { approved: boolean; reason?: string; toolName?: string; args?: unknown };
  /** Set by an `ask` permission rule. */
  ask?: { reason?: string };
  /** The execution in flight, or one that succeeded: a retry reaching the tool gets its outcome. */
  executed?: Promise<ToolOutcome>;
  /** The last execution failed, so a retry may run the tool again. */
  failed?: boolean;
  /** This call's span (a sub-agent's run span is its child). */
  span?: Span;
}

export type ToolCallContext = ToolContext & { [CALL]: CallInternals };

export function callOf(ctx: ToolContext): CallInternals {
  return (ctx as ToolCallContext)[CALL];
}

/** One context per tool call: the layers, the built-in steps and the tool all share it. */
export function toolContext(run: Run, call: ToolCallPart, decision: CallInternals['decision']): ToolContext {
  const base = run.base;
  const ctx = {
    agentId: base.agentId,
    agentName: base.agentName,
    runId: base.runId,
    sessionId: base.sessionId,
    messages: run.state.messages,
    metadata: base.metadata,
    signal: base.signal,
    state: run.state,
    toolCallId: call.id,
    toolName: call.name,
    args: undefined as unknown as Record<string, unknown>,
    toolCall: call,
    tool: undefined,
    idempotencyKey: `${base.runId}:${call.id}`,
    // A call whose sub-agent paused runs again to resume it, after a human decided: a re-fire too.
    resumedAfterApproval: decision?.approved === true || run.state.children[call.id] !== undefined,
    step: run.state.steps,
    [CALL]: { run, parsed: undefined, decision },
  } as ToolCallContext;
  if (base.subagent !== undefined) (ctx as { subagent?: unknown }).subagent = base.subagent;
  if (base.emit !== undefined) (ctx as { emit?: unknown }).emit = base.emit;
  return ctx;
}
