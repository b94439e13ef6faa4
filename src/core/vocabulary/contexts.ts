// The public context API: what every layer, every hook dialect and every built-in middleware is
// written against. Nothing else of koagent is reachable from a context.
import type { z } from 'zod';
import type { ToolContentPart } from './content.js';
import type { EmittedEvent, PermissionRecord } from './events.js';
import type { AssistantMessage, AssistantToolCall, Message } from './messages.js';
import type { GenerateOptions, GenerateResult, ModelProvider, ToolSpec } from './model.js';
import type { ToolOutcome } from './outcome.js';
import type { RunResult } from './result.js';
import type { EndReason, RunState } from './state.js';

/**
 * Where a context runs when it is inside a sub-agent (unset in the lead agent).
 *
 * @example if (ctx.subagent) return next(); // only the lead agent's calls
 */
export interface SubagentInfo {
  name: string;
  depth: number;
  parentRunId: string;
  /** Agent names from the lead agent down to this one. */
  path: string[];
}

/**
 * Where koagent reports what it does not raise (a listener that threw, a replaced hook).
 *
 * @example createAgent({ model, logger: { warn: (message) => log.warn(message) } })
 */
export interface Logger {
  /** Report something koagent does not raise. */
  warn(message: string, ...details: unknown[]): void;
}

/**
 * What layers keep for the rest of one run segment, in memory, shared by every context of it:
 * `ctx.runVar`. Augment it to type your own (a value that must survive the segment belongs in
 * `ctx.setHookState`).
 *
 * @example declare module 'koagent/types' { interface RunVariables { startedAt?: number } }
 */
export interface RunVariables {
  /**
   * The output the run state keeps for this segment's end, when a run layer chose another than
   * the end's own after `next()` (structured output keeps the answer as the model wrote it,
   * while the result carries the schema's output). Forgotten when the loop runs again.
   *
   * @internal
   */
  [STATE_OUTPUT]?: { output: unknown };
}

/** The key of `RunVariables` for the output the run state keeps (see there). */
export const STATE_OUTPUT: unique symbol = Symbol('koagent.stateOutput');

/**
 * What layers keep for one call — a model call, a tool call, a segment's pass through the run
 * stack — in memory: `ctx.var`. Augment it to type your own.
 *
 * @example declare module 'koagent/types' { interface CallVariables { t0?: number } }
 */
export interface CallVariables {}

/**
 * Fields and methods every context has, at every hook point.
 *
 * @example run: (ctx, next) => { ctx.metadata.startedAt = Date.now(); return next(); }
 */
export interface BaseContext<C = unknown> {
  /**
   * The run's own context object (`run(input, { context })`): a database handle, the current
   * user. Typed by the agent's `contextSchema`; never written into the run state, so it may
   * hold functions and connections, and `resume` takes it again.
   *
   * @example execute: async ({ id }, ctx: ToolContext<{ db: Db }>) => ctx.context.db.find(id)
   */
  readonly context: C;
  readonly agentId: string;
  readonly agentName: string;
  readonly runId: string;
  readonly sessionId: string;
  /**
   * The live transcript, read through with no copy. Every change made through it — a push, a
   * splice, an edit inside a message — changes the run and is stored with it; a change that
   * would break the transcript is refused with a `TypeError`.
   */
  readonly messages: Message[];
  /** A free-form bag for this run: the agent's `metadata` merged with the run's. */
  readonly metadata: Record<string, unknown>;
  /** Aborted when the run is cancelled; pass it on to anything slow. */
  readonly signal: AbortSignal;
  /**
   * The run state, live and read-only: plain JSON (see `RunState`). Its `status` is `running`
   * while the segment runs; in a run layer after `next()` it says how the segment ended (status,
   * stop reason, output, pending approvals, or the failure), as the state will once it is over.
   */
  readonly state: Readonly<RunState>;
  /** Set inside a sub-agent. */
  readonly subagent?: SubagentInfo;
  /** Present exactly when someone listens (an `onEvent` option, or a stream). */
  readonly emit?: <T extends string>(event: EmittedEvent<T>) => void;
  /** The agent's logger: for what a layer reports but does not raise. */
  readonly logger: Logger;
  /**
   * This run segment's variables, shared by every context of it (see `RunVariables`).
   *
   * @example run: async (ctx, next) => { ctx.runVar.startedAt = Date.now(); return next(); }
   */
  readonly runVar: RunVariables;
  /**
   * This context's own variables: one model call's, one tool call's, or (in a run context) the
   * run stack's pass of this segment (see `CallVariables`).
   *
   * @example tool: async (ctx, next) => { ctx.var.t0 = performance.now(); return next(); }
   */
  readonly var: CallVariables;
  /**
   * Keep `value` (plain JSON) in the run state under `name` (`state.hookState[name]`): it
   * survives suspend, resume and other processes. A criogen Hook's `{ state }` is this.
   *
   * @example ctx.setHookState('loop-guard', { calls: Number((ctx.state.hookState['loop-guard'] as any)?.calls ?? 0) + 1 });
   */
  setHookState(name: string, value: unknown): void;
  /**
   * Add `amount` to the run's usage counter `name` (`state.usage[name]`, created at 0): what a
   * layer measures beyond koagent's own counts — a cost, cache hits. A sub-agent's counters add
   * up into its parent's. koagent's own counts (`inputTokens` … `toolCalls`) are not a layer's.
   *
   * @example ctx.countUsage('cost', 0.0042);
   */
  countUsage(name: string, amount: number): void;
}

/**
 * Context of the `run` hook point: once per run segment. `next()` resolves to its `RunResult`.
 *
 * @example run: async (ctx, next) => (ctx.resumed ? next() : (await quotaLeft(ctx.sessionId)) ? next() : ctx.end('quota used up'))
 */
export interface RunContext<C = unknown> extends BaseContext<C> {
  /** Messages this segment added as input (empty when resuming). */
  readonly input: Message[];
  /** 1 for a run's first segment, then 2, 3 … for each resume or retry. */
  readonly segment: number;
  readonly resumed: boolean;
  /**
   * End the segment now, without the loop, with stop reason `reason` (default `hook_end`; a
   * `limit:<what>` or `stop:<what>` of your own) and `output` (plain JSON, kept in the state).
   * Returns the result to return from the layer. After `next()` it replaces the loop's end.
   *
   * @example run: async (ctx, next) => { const result = await next(); return tooLong(result) ? ctx.end({ verdict: 'too long' }, 'stop:guardrail') : result; }
   */
  end(output?: unknown, reason?: EndReason): RunResult;
}

/**
 * Context of the `model` hook point: once per model call. `next()` resolves to the reply.
 *
 * @example model: (ctx, next) => { ctx.request.temperature = 0; return next(); }
 */
export interface ModelContext<C = unknown> extends BaseContext<C> {
  /** The live request about to be sent; change it before `next()`. */
  request: GenerateOptions;
  /** Which model turn of the run this is (1-based). */
  readonly step: number;
  /** `'turn'` for the loop's own calls; the purpose given to `generate` for side calls. */
  readonly purpose: string;
  /** This call's reply as the transcript holds it now (undefined until there is one). */
  readonly reply: AssistantMessage | undefined;
  /** True once a layer called `end()`: the run ends after this call. */
  readonly ended: boolean;
  /**
   * End the run after this model call with stop reason `reason` (default `hook_end`; a
   * `limit:<what>` or `stop:<what>` of your own). Returns a reply to return from the layer when
   * the model should not be called at all.
   *
   * @example model: async (ctx, next) => (budgetLeft() ? next() : ctx.end({ spent }, 'limit:cost'))
   */
  end(output?: unknown, reason?: EndReason): GenerateResult;
  /**
   * The model this call asks: the agent's, unless a layer set another before `next()` (a
   * fallback to a second provider). Inner layers and the provider see the one set last.
   *
   * @example model: async (ctx, next) => { try { return await next(); } catch { ctx.provider = backup; return next(); } }
   */
  provider: ModelProvider;
  /**
   * A side model call (summaries, classifiers) that counts in the run's usage and limits and has
   * its own span. The provider defaults to the agent's model.
   *
   * @example const { message } = await ctx.generate({ messages: [{ role: 'user', content: 'Classify: …' }] }, 'classify');
   */
  generate(request: SideRequest, purpose: string): Promise<GenerateResult>;
  /**
   * Make `message` this call's reply in the transcript now, in place of the one there, so the
   * code after your `next()` sees the transcript end with it. (The loop keeps the reply the
   * outermost layer returns; return it too.)
   */
  setReply(message: AssistantMessage): void;
  /**
   * Replace the whole transcript's contents (every holder of `ctx.messages` sees it), e.g. with
   * a summary in place of older messages.
   */
  setMessages(messages: readonly Message[]): void;
}

/**
 * The request of a side call (`ctx.generate`): messages at least; the rest defaults to no tools,
 * the run's signal and the agent's model (`provider` asks another).
 *
 * @example await ctx.generate({ messages: [{ role: 'user', content: 'Summarise: …' }], maxTokens: 200 }, 'summarise');
 */
export type SideRequest = Partial<GenerateOptions> & Pick<GenerateOptions, 'messages'> & { provider?: ModelProvider };

/**
 * One tool call, from the reply that asked for it to its result (`ctx.call`): what the model
 * wrote, the arguments as the layers leave them, and what was decided of it. Layers change the
 * call through it — `ctx.args` and `ctx.toolName` are its arguments and name — so whether it
 * may have changed is a fact it knows, not a comparison: such a call is checked against its
 * tool's schema again.
 *
 * @example tool: (ctx, next) => { if (ctx.call.args.limit === undefined) ctx.call.setArgs({ ...ctx.call.args, limit: 10 }); return next(); }
 */
export interface ToolCallRecord {
  readonly id: string;
  /** The call exactly as the model wrote it (as the transcript keeps it). */
  readonly written: Readonly<AssistantToolCall>;
  /** The tool it calls now. */
  readonly name: string;
  /** Its arguments now, as JSON (the schema's input form): the call's own copy, which a layer may edit in place. */
  readonly args: Record<string, unknown>;
  /** The arguments as the tool's schema parsed them, once validation checked the call: what the tool, its guardrails and `needsApproval` get. */
  readonly parsedArgs: unknown;
  /**
   * A layer renamed the call, set its arguments, or was handed them (and so may have edited them
   * in place) since validation last checked it: then it is checked again before it runs.
   */
  readonly changed: boolean;
  /** The human's decision, when the call runs again after one (see `ApprovalDecision`). */
  readonly decision: { readonly approved: boolean; readonly toolName?: string; readonly args?: unknown; readonly reason?: string } | undefined;
  /** The last permission decision on the call (a rule's, or a layer's denial), once one was made. */
  readonly policy: PermissionRecord | undefined;
  /** Replace the arguments (checked against the tool's schema again before the tool runs). */
  setArgs(args: Record<string, unknown>): void;
  /** Call another tool with these arguments (checked again before it runs). */
  rename(name: string): void;
  /**
   * Record a permission decision on this call: told to `onPermissionDecision` listeners and as
   * a `permission.decision` event, and kept as `policy` (an `ask` makes the approval step pause).
   */
  decide(decision: Pick<PermissionRecord, 'decision' | 'source' | 'rule' | 'hook' | 'reason'>): void;
  /**
   * The outcome an exception becomes when code that counts as this call's tool (a hook of
   * yours) threw it, by the agent's `onToolException`: a `ToolError` reaches the model as is,
   * anything else is an `execution` error — or fails the run when the policy says `'fail'`.
   *
   * @example try { audit(ctx); } catch (error) { return ctx.call.thrown(error, 'audit'); }
   */
  thrown(error: unknown, by: string): ToolOutcome;
}

/**
 * Context of the `tool` hook point: once per tool call. `next()` resolves to its outcome.
 *
 * @example tool: (ctx, next) => (ctx.toolName === 'shell' && !ctx.metadata.admin ? ctx.deny('Admins only', 'admin-only') : next())
 */
export interface ToolContext<C = unknown> extends BaseContext<C> {
  readonly toolCallId: string;
  /** The call itself: what the model wrote, the arguments and name now, what was decided (see `ToolCallRecord`). */
  readonly call: ToolCallRecord;
  /** The tool to run (`call.name`); a layer may change it before `next()` (the args are revalidated). */
  toolName: string;
  /** The arguments as JSON (`call.args`); a layer may replace or edit them (they are revalidated). */
  args: Record<string, unknown>;
  /** The call exactly as the model wrote it. */
  readonly toolCall: Readonly<AssistantToolCall>;
  /** The resolved tool (set once validation passed; unset in layers that see raw calls). A layer may run another in its place. */
  tool: Tool | undefined;
  /** Same for every attempt at this call: across retries, resume and retried segments. */
  readonly idempotencyKey: string;
  /** Aborted when the run is cancelled; a layer may narrow it for the calls inside (a timeout). */
  signal: AbortSignal;
  /** True only when this call is running again after a human approved it. */
  readonly resumedAfterApproval: boolean;
  readonly step: number;
  /**
   * The nested run kept behind this call, when there is one to continue: a sub-agent's run that
   * waited for a human, or one that failed in an earlier attempt of this call (a retry
   * continues it). Its state is opaque but to the tool that ran it.
   */
  readonly nested?: { readonly state: unknown };
  /**
   * Settle the call as `denied` (the model reads `reason`), recorded as a permission decision
   * of source `hook` under `by` (default: the layer that returns the outcome).
   *
   * @example return ctx.deny('Use the workspace tools instead', 'no-shell');
   */
  deny(reason: string, by?: string): ToolOutcome;
  /**
   * A side model call from a tool or a tool layer (a summary, an emulated result), as
   * `ModelContext.generate`: counted in the run's usage and limits, with its own span.
   *
   * @example const { message } = await ctx.generate({ messages: [{ role: 'user', content: `Summarise: ${page}` }] }, 'summarise-page');
   */
  generate(request: SideRequest, purpose: string): Promise<GenerateResult>;
}

/**
 * A guardrail's verdict: `{ block: reason }` stops the call; anything else lets it through.
 *
 * @example const verdict: GuardrailVerdict = { block: 'The amount is over the limit' };
 *
 * @inline
 */
export type GuardrailVerdict = { block: string } | void | undefined | null | boolean;

/**
 * Checks a call's arguments after permissions, before approval.
 *
 * @example defineTool({ name: 'rm', description: 'Remove a file', input, execute, guardrails: { input: [({ path }) => (path === '/' ? { block: 'Not the root' } : undefined)] } });
 */
export type InputGuardrail<I = any> = (args: I, ctx: ToolContext) => GuardrailVerdict | Promise<GuardrailVerdict>;

/**
 * Checks a tool's result before any layer or the model sees it.
 *
 * @example defineTool({ name: 'cat', description: 'Read a file', input, execute, guardrails: { output: [(result) => (JSON.stringify(result).includes('BEGIN PRIVATE KEY') ? { block: 'Result held a key' } : undefined)] } });
 */
export type OutputGuardrail<I = any, R = unknown> = (result: R, args: I, ctx: ToolContext) => GuardrailVerdict | Promise<GuardrailVerdict>;

/**
 * Hints about what a tool does, in the Model Context Protocol's vocabulary. They are hints, not
 * guarantees: permission rules can match on them (`{ annotations: { destructiveHint: true }, decision: 'ask' }`).
 *
 * @example defineTool({ name: 'rm', description: 'Delete a file', annotations: { destructiveHint: true }, input, execute })
 *
 * @inline
 */
export interface ToolAnnotations {
  /** A human-readable title. */
  title?: string;
  /** The tool does not change its environment. */
  readOnlyHint?: boolean;
  /** The tool may destroy or overwrite (meaningful when it is not read-only). */
  destructiveHint?: boolean;
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint?: boolean;
  /** The tool reaches an open world (the web), not a closed one (a local database). */
  openWorldHint?: boolean;
}

/**
 * A tool the agent can call, as `defineTool` returns it.
 *
 * @example const tool: Tool = defineTool({ name: 'now', description: 'The time', execute: () => new Date().toISOString() });
 */
export interface Tool<S extends z.ZodType = z.ZodType, R = unknown, C = any> {
  readonly name: string;
  readonly description: string;
  /** The zod schema of the arguments. */
  readonly input: S;
  /** What the model is told about the tool (its JSON schema derived from `input`). */
  readonly spec: ToolSpec;
  /** Runs the tool with checked arguments; its result is what the model reads. */
  execute(args: z.output<S>, ctx: ToolContext<C>): R | Promise<R>;
  /** The schema every result is checked against, when the tool declares one. */
  readonly output?: z.ZodType;
  /** What the model reads of a result (text or parts), when not the result as JSON. */
  toModelOutput?(result: R): string | ToolContentPart[];
  /** Pause for a human before running: always, or when the function says so. */
  readonly needsApproval?: boolean | ((args: z.output<S>, ctx: ToolContext) => boolean | Promise<boolean>);
  readonly guardrails: { readonly input: InputGuardrail[]; readonly output: OutputGuardrail[] };
  /** What the tool does, as hints (read-only, destructive …) that permission rules can match. */
  readonly annotations?: Readonly<ToolAnnotations>;
  /** Running it again with the same `idempotencyKey` does no harm (the effect is deduplicated by the key). */
  readonly idempotent?: boolean;
  /** What a call interrupted while running does when its run continues: default `'rerun'` for an idempotent tool, else `'report'`. */
  readonly onInterrupted?: InterruptPolicy;
}

/**
 * What happens to a call found `running` when its run continues after an interruption (the
 * process died, or the segment failed after the tool was entered) — the tool ran zero or one
 * times, nobody knows which. `'rerun'`: run it again with the same idempotency key (a tool
 * declared `idempotent`); `'report'`: do not run it, tell the model its outcome is unknown;
 * `'ask'`: suspend the run and let a human decide whether it runs again.
 *
 * @example defineTool({ name: 'wire', description: 'Send money', onInterrupted: 'ask', execute: wire })
 *
 * @inline
 */
export type InterruptPolicy = 'rerun' | 'report' | 'ask';
