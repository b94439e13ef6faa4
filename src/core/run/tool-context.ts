import { z } from 'zod';
import { approvalBreach, isApproved, type Decision } from '../state/approved-call.js';
import { isArgsObject } from './arguments.js';
import { CallContext, segmentOf } from './base-context.js';
import type { SideRequest, Tool, ToolContext } from '../vocabulary/contexts.js';
import type { GenerateResult, ModelProvider } from '../vocabulary/model.js';
import { sideCall } from './model-call.js';
import { preview } from '../vocabulary/json.js';
import type { AssistantToolCall } from '../vocabulary/messages.js';
import { toolError, type ToolOutcome } from '../vocabulary/outcome.js';
import type { Segment } from './segment.js';
import { exceptionOutcome } from '../vocabulary/tool-exception.js';

/** A call's values, by slot (reached only through `CallSlot`): made on the first write, when `create`. */
let slotsOf: (ctx: ToolContext, create: boolean) => unknown[] | undefined;
/** How many slots the steps have made: the length of each call's list of values. */
let slots = 0;

/**
 * Where one of koagent's tool steps keeps its own data about each call: made once by the step,
 * private to its module, typed by it. Only the holder of a slot reads or writes its value, so
 * no step sees another's data (the context's own facts are its static accessors).
 *
 * @example const executions = new CallSlot<Execution>(); executions.set(ctx, run); executions.get(ctx);
 */
export class CallSlot<T> {
  readonly #at = slots++;

  /** The value the step kept for this call, if it kept one. */
  get(ctx: ToolContext): T | undefined {
    return slotsOf(ctx, false)?.[this.#at] as T | undefined;
  }

  set(ctx: ToolContext, value: T): void {
    slotsOf(ctx, true)![this.#at] = value;
  }
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
  // Facts of the call itself, for koagent's own steps (no property of the context shows them):
  // what each step keeps about the call besides these is that step's own.
  /** The schema's output for the current arguments, as the tool receives it. */
  #parsed: unknown = undefined;
  /** A human's decision, when this call is being resumed. */
  readonly #decision: Decision | undefined;
  /** The arguments the call started with, already checked against the bounds. */
  readonly #starting: Record<string, unknown>;
  /** The steps' own data (see `CallSlot`), made when a step first keeps some. */
  #slots: unknown[] | undefined = undefined;
  #key: string | undefined;

  static {
    slotsOf = (ctx, create) => (create ? ((ctx as ToolCallContext).#slots ??= new Array<unknown>(slots)) : (ctx as ToolCallContext).#slots);
  }

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
    this.#decision = decision;
    this.#starting = args;
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
    const breach = approvalBreach(this.#decision, this.toolName, args, by);
    if (breach !== undefined) return toolError('denied', breach, by);
    if (tool !== undefined) {
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) return toolError('validation', `Invalid arguments for ${tool.name} from hook ${by} ({ input }): ${z.prettifyError(parsed.error)}; the tool did not run`, by);
      this.#parsed = parsed.data;
    }
    this.args = args;
    return undefined;
  }

  errorOutcome(error: unknown, by: string): ToolOutcome {
    return exceptionOutcome(segmentOf(this).agent.onToolException, this, error, by);
  }

  generate(first: ModelProvider | SideRequest | undefined, second?: SideRequest | string, third?: string): Promise<GenerateResult> {
    if (typeof second === 'string' || second === undefined) return sideCall(segmentOf(this), undefined, first as SideRequest, second as string);
    return sideCall(segmentOf(this), first as ModelProvider | undefined, second, third as string);
  }

  /** The call's arguments as its tool's schema parsed them (what the tool, its guardrails and `needsApproval` receive). */
  static parsedArgs(ctx: ToolContext): unknown {
    return (ctx as ToolCallContext).#parsed;
  }

  /** Validation parsed the call's current arguments into `parsed`. */
  static setParsedArgs(ctx: ToolContext, parsed: unknown): void {
    (ctx as ToolCallContext).#parsed = parsed;
  }

  /** The human's decision on the call, when it is being resumed after one. */
  static decision(ctx: ToolContext): Decision | undefined {
    return (ctx as ToolCallContext).#decision;
  }

  /**
   * The arguments the call started with (the model's, or the ones a human approved), already
   * checked against the bounds: while `ctx.args` is this object, no layer replaced them.
   */
  static startingArgs(ctx: ToolContext): Record<string, unknown> {
    return (ctx as ToolCallContext).#starting;
  }
}
