import { segmentOf } from '../core/run/base-context.js';
import type { Segment } from '../core/run/segment.js';
import type { ToolContext } from '../core/vocabulary/contexts.js';
import { describe } from '../core/vocabulary/errors.js';
import { toolError, type NestedRun, type ToolOutcome } from '../core/vocabulary/outcome.js';
import { CallSlot, ToolCallContext } from '../core/run/tool-context.js';
import { ToolError } from '../core/vocabulary/tool-error.js';

/** This step's own record of a call: its last execution, and whether that one failed. */
interface Execution {
  /** The execution in flight, or one that succeeded: a retry reaching the tool gets its outcome. */
  outcome?: Promise<ToolOutcome>;
  /** It failed, so a retry may run the tool again. */
  failed: boolean;
}

const executions = new CallSlot<Execution>();

/**
 * The terminal step of the tool stack. The ledger marks the call `running` first, so no later
 * segment (a resume, a retried segment, a recovery) runs it again, unless its tool's
 * interruption policy says so (see `InterruptPolicy`). Within the call, a layer that calls
 * `next()` again after a successful execution gets that outcome (the effect happened once);
 * after a failed one it runs the tool again, with the same `idempotencyKey`, since retrying a
 * failed tool is what a retry layer is for.
 */
export function executeStep(ctx: ToolContext): Promise<ToolOutcome> {
  const last = executions.get(ctx);
  if (last?.outcome !== undefined && !last.failed) return last.outcome;
  const run: Execution = { failed: false };
  executions.set(ctx, run);
  const segment = segmentOf(ctx);
  // Write-ahead: the step ends with the call `running`, kept before the tool is entered. If
  // that fails (a store is down, another worker took the run), the tool does not run at all.
  const kept = segment.writer.callRunning(ctx.toolCallId);
  return (run.outcome = kept === undefined ? execute(ctx, run, segment) : kept.then(() => execute(ctx, run, segment)));
}

function execute(ctx: ToolContext, run: Execution, segment: Segment): Promise<ToolOutcome> {
  // Here, not as the call enters the pipeline: one `tool.start` per execution, none for a call
  // that only waits for a human (`approval.requested`) or that a layer settled.
  if (segment.listening) segment.publish({ type: 'tool.start', toolCallId: ctx.toolCallId, toolName: ctx.toolCall.name, args: ctx.toolCall.args });
  let value: unknown;
  try {
    value = ctx.tool!.execute(ToolCallContext.parsedArgs(ctx), ctx);
  } catch (error) {
    return failed(ctx, run, error);
  }
  // A tool that answers at once (no promise) costs no extra turn of the event loop.
  if (typeof (value as PromiseLike<unknown> | undefined)?.then === 'function') {
    return Promise.resolve(value).then((result) => succeeded(ctx, result), (error) => failed(ctx, run, error));
  }
  return Promise.resolve(succeeded(ctx, value));
}

function succeeded(ctx: ToolContext, result: unknown): ToolOutcome {
  if (isSuspension(result)) {
    return { result: undefined, requiresApproval: true, approval: { toolName: ctx.toolName, args: ctx.args }, nested: result[SUSPEND] };
  }
  const schema = ctx.tool!.output;
  if (schema === undefined) return { result };
  // The declared output is what every layer and the model see: checked here, innermost.
  const parsed = schema.safeParse(result);
  if (parsed.success) return { result: parsed.data };
  const issue = parsed.error.issues[0];
  const at = issue.path.length === 0 ? 'the result' : `"${issue.path.map(String).join('.')}"`;
  return toolError('execution', `${ctx.tool!.name} returned a result that does not fit its output schema: at ${at}: ${issue.message}`);
}

function failed(ctx: ToolContext, run: Execution, error: unknown): Promise<ToolOutcome> {
  // Only a success is final for this call: a retry after a failure runs the tool again.
  run.failed = true;
  const name = ctx.tool!.name;
  try {
    if (ctx.signal.aborted && !ToolError.is(error)) return Promise.resolve(toolError('aborted', `${name} was cancelled: ${describe(ctx.signal.reason)}`));
    return Promise.resolve(ctx.errorOutcome(error, name));
  } catch (failure) {
    return Promise.reject(failure); // onToolException: 'fail'
  }
}

const SUSPEND = Symbol('koagent.suspend');
type Suspension = { [SUSPEND]: NestedRun };

/**
 * What a tool returns when a nested run behind it (a sub-agent's) waits for a human: the call
 * then waits too, with the nested run's pending approvals as the run's own.
 */
export function suspendWith(nested: NestedRun): Suspension {
  return { [SUSPEND]: nested };
}

function isSuspension(value: unknown): value is Suspension {
  return typeof value === 'object' && value !== null && SUSPEND in value;
}
