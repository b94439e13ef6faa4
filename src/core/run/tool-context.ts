import { z } from 'zod';
import { approvalBreach, isApproved, type Decision } from '../state/approved-call.js';
import { isArgsObject } from './arguments.js';
import { CallContext, segmentOf } from './base-context.js';
import type { Tool, ToolContext } from '../vocabulary/contexts.js';
import { preview } from '../vocabulary/json.js';
import type { AssistantToolCall } from '../vocabulary/messages.js';
import { toolError, type ToolOutcome } from '../vocabulary/outcome.js';
import type { Segment } from './segment.js';
import { exceptionOutcome } from '../vocabulary/tool-exception.js';

/** What koagent's own tool steps keep about one call; not part of the public context. */
export interface CallState {
  /** The schema's output for the current args, as the tool receives it. */
  parsed: unknown;
  /** A human's decision, when this call is being resumed. */
  decision: Decision | undefined;
  /** Set by an `ask` permission rule: a human must decide. */
  ask: { reason?: string } | undefined;
  /** The execution in flight, or one that succeeded: a retry reaching the tool gets its outcome. */
  executed: Promise<ToolOutcome> | undefined;
  /** The last execution failed, so a retry may run the tool again. */
  failed: boolean;
  /** The arguments the call started with, already checked against the bounds (validation need not walk them again). */
  bounded: Record<string, unknown>;
  /** The tool validation last resolved, and the arguments it parsed into `parsed`. */
  checkedTool: Tool | undefined;
  checkedArgs: Record<string, unknown> | undefined;
  /** The arguments the user layers were given a copy of (no layer holds these). */
  copiedFrom: Record<string, unknown> | undefined;
}

/** The context of one tool call: the layers, koagent's steps and the tool all share it. */
export class ToolCallContext extends CallContext implements ToolContext {
  readonly toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  readonly toolCall: AssistantToolCall;
  tool: Tool | undefined = undefined;
  readonly resumedAfterApproval: boolean;
  readonly step: number;
  readonly #call: CallState;
  #key: string | undefined;

  constructor(segment: Segment, call: AssistantToolCall, args: Record<string, unknown>, decision: Decision | undefined) {
    super(segment);
    const { state } = segment;
    this.toolCallId = call.id;
    this.toolName = call.name;
    this.args = args;
    this.toolCall = call;
    // A call whose nested run paused runs again to continue it, after a human decided: a re-fire too.
    this.resumedAfterApproval = isApproved(decision) || segment.writer.nestedRun(call.id) !== undefined;
    this.step = state.steps;
    this.#call = { parsed: undefined, decision, ask: undefined, executed: undefined, failed: false, bounded: args, checkedTool: undefined, checkedArgs: undefined, copiedFrom: undefined };
  }

  /** `${runId}:${toolCallId}`, made when first read: most tools never read it. */
  get idempotencyKey(): string {
    return (this.#key ??= `${this.state.runId}:${this.toolCallId}`);
  }

  /** Read live: a nested run that failed in an earlier attempt of this very call is there for its retry. */
  get nested(): { readonly state: unknown } | undefined {
    const nested = segmentOf(this).writer.nestedRun(this.toolCallId);
    return nested === undefined ? undefined : { state: nested.state };
  }

  deny(reason: string, by?: string): ToolOutcome {
    if (typeof reason !== 'string') throw new TypeError('ctx.deny(reason, by?): reason must be a string (the model reads it)');
    const message = reason === '' ? `Denied by ${by ?? 'a layer'}` : reason;
    if (by === undefined) return toolError('denied', message);
    // Recorded now under `by`; the stack's check would otherwise record it under the layer's name.
    segmentOf(this).recordPermission(this, { decision: 'deny', source: 'hook', hook: by, reason: message });
    return toolError('denied', message, by);
  }

  replaceArgs(args: Record<string, unknown>, by: string): ToolOutcome | undefined {
    const tool = this.tool;
    if (!isArgsObject(args)) {
      return toolError('validation', `Invalid arguments for ${this.toolName} from hook ${by}: { input } must be an object of arguments, got ${preview(args)}; the tool did not run`, by);
    }
    const breach = approvalBreach(this.#call.decision, this.toolName, args, by);
    if (breach !== undefined) return toolError('denied', breach, by);
    if (tool !== undefined) {
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) return toolError('validation', `Invalid arguments for ${tool.name} from hook ${by} ({ input }): ${z.prettifyError(parsed.error)}; the tool did not run`, by);
      this.#call.parsed = parsed.data;
    }
    this.args = args;
    return undefined;
  }

  errorOutcome(error: unknown, by: string): ToolOutcome {
    return exceptionOutcome(segmentOf(this).agent.onToolException, this, error, by);
  }

  /** What koagent's own steps keep about the call. */
  static callState(ctx: ToolContext): CallState {
    return (ctx as ToolCallContext).#call;
  }
}
