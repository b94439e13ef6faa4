import { isApproved } from '../state/approved-call.js';
import { CallContext, segmentOf } from './base-context.js';
import type { SideRequest, Tool, ToolContext } from '../vocabulary/contexts.js';
import type { GenerateResult } from '../vocabulary/model.js';
import { sideCall } from './model-call.js';
import type { AssistantToolCall } from '../vocabulary/messages.js';
import { toolError, type ToolOutcome } from '../vocabulary/outcome.js';
import type { Segment } from './segment.js';
import type { ToolCall } from './tool-call.js';

/**
 * The context of one tool call: the layers, koagent's steps and the tool all share it. The call
 * itself — its name, arguments and what was decided of it — is its record (`call`); the
 * context adds where it runs.
 */
export class ToolCallContext extends CallContext implements ToolContext {
  readonly call: ToolCall;
  readonly resumedAfterApproval: boolean;
  readonly step: number;

  constructor(segment: Segment, call: ToolCall) {
    super(segment);
    this.call = call;
    call.context = this;
    // A call whose nested run paused runs again to continue it, after a human decided: a re-fire too.
    this.resumedAfterApproval = (call.decision !== undefined && isApproved(call.decision)) || segment.writer.nestedRun(call.id) !== undefined;
    this.step = segment.state.steps;
  }

  get toolCallId(): string {
    return this.call.id;
  }

  get toolName(): string {
    return this.call.name;
  }

  set toolName(name: string) {
    this.call.rename(name);
  }

  get args(): Record<string, unknown> {
    return this.call.args;
  }

  set args(args: Record<string, unknown>) {
    this.call.setArgs(args);
  }

  get toolCall(): AssistantToolCall {
    return this.call.written;
  }

  get tool(): Tool | undefined {
    return this.call.tool;
  }

  set tool(tool: Tool | undefined) {
    this.call.tool = tool;
  }

  get idempotencyKey(): string {
    return this.call.idempotencyKey;
  }

  /** Read live: a nested run that failed in an earlier attempt of this very call is there for its retry. */
  get nested(): { readonly state: unknown } | undefined {
    const nested = segmentOf(this).writer.nestedRun(this.call.id);
    return nested === undefined ? undefined : { state: nested.state };
  }

  deny(reason: string, by?: string): ToolOutcome {
    if (typeof reason !== 'string') throw new TypeError('ctx.deny(reason, by?): reason must be a string (the model reads it)');
    const message = reason === '' ? `Denied by ${by ?? 'a layer'}` : reason;
    if (by === undefined) return toolError('denied', message);
    // Recorded now under `by`; the stack's check would otherwise record it under the layer's name.
    this.call.decide({ decision: 'deny', source: 'hook', hook: by, reason: message });
    return toolError('denied', message, by);
  }

  generate(request: SideRequest, purpose: string): Promise<GenerateResult> {
    return sideCall(segmentOf(this), request, purpose);
  }
}
