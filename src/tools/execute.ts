import { segmentOf } from '../core/run/base-context.js';
import type { ToolContext } from '../core/vocabulary/contexts.js';
import { describe } from '../core/vocabulary/errors.js';
import { toolError, type NestedRun, type ToolOutcome } from '../core/vocabulary/outcome.js';
import { ToolCallContext, type CallState } from '../core/run/tool-context.js';
import { ToolError } from '../core/vocabulary/tool-error.js';

/**
 * The terminal step of the tool stack. The ledger marks the call `running` first, so no later
 * segment (a resume, a retried segment, a recovery) runs it again, unless its tool's
 * interruption policy says so (see `InterruptPolicy`). Within the call, a layer that calls
 * `next()` again after a successful execution gets that outcome (the effect happened once);
 * after a failed one it runs the tool again, with the same `idempotencyKey`, since retrying a
 * failed tool is what a retry layer is for.
 */
export function executeStep(ctx: ToolContext): Promise<ToolOutcome> {
  const call = ToolCallContext.callState(ctx);
  if (call.executed === undefined || call.failed) {
    call.failed = false;
    const segment = segmentOf(ctx);
    // Write-ahead: the step ends with the call `running`, kept before the tool is entered. If
    // that fails (a store is down, another worker took the run), the tool does not run at all.
    const kept = segment.writer.callRunning(ctx.toolCallId);
    call.executed = kept === undefined ? execute(ctx, call) : kept.then(() => execute(ctx, call));
  }
  return call.executed;
}

function execute(ctx: ToolContext, call: CallState): Promise<ToolOutcome> {
  let value: unknown;
  try {
    value = ctx.tool!.execute(call.parsed, ctx);
  } catch (error) {
    return failed(ctx, call, error);
  }
  // A tool that answers at once (no promise) costs no extra turn of the event loop.
  if (typeof (value as PromiseLike<unknown> | undefined)?.then === 'function') {
    return Promise.resolve(value).then((result) => succeeded(ctx, result), (error) => failed(ctx, call, error));
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

function failed(ctx: ToolContext, call: CallState, error: unknown): Promise<ToolOutcome> {
  // Only a success is final for this call: a retry after a failure runs the tool again.
  call.failed = true;
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
