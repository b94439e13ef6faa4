import type { ToolContext } from '../context.js';
import { describe, KoagentError } from '../errors.js';
import type { RunState } from '../state.js';
import { callOf, type CallInternals } from './call.js';
import { toolError, type ToolOutcome } from './outcome.js';
import { ToolError } from './tool-error.js';

/**
 * The terminal step of the tool stack. The ledger in the run state marks the call `running`
 * first, so no later segment (a resume, a retried segment) runs it again. Within the call, a
 * layer that calls `next()` again after a successful execution gets that outcome (the effect
 * happened once); after a failed one it runs the tool again, with the same `idempotencyKey`,
 * since retrying a failed tool is what a retry layer is for.
 */
export function executeStep(ctx: ToolContext): Promise<ToolOutcome> {
  const call = callOf(ctx);
  if (call.executed === undefined || call.failed === true) {
    call.failed = false;
    call.run.state.ledger[ctx.toolCallId] = 'running';
    call.executed = execute(ctx, call);
  }
  return call.executed;
}

function execute(ctx: ToolContext, call: CallInternals): Promise<ToolOutcome> {
  let value: unknown;
  try {
    value = ctx.tool!.execute(call.parsed, ctx);
  } catch (error) {
    return settleFailure(ctx, call, error);
  }
  // A tool that answers at once (no promise) costs no extra turn of the event loop.
  if (typeof (value as PromiseLike<unknown> | undefined)?.then === 'function') {
    return Promise.resolve(value).then((result) => succeeded(ctx, result), (error) => settleFailure(ctx, call, error));
  }
  return Promise.resolve(succeeded(ctx, value));
}

function succeeded(ctx: ToolContext, result: unknown): ToolOutcome {
  if (isSuspension(result)) {
    return { result: undefined, requiresApproval: true, approval: { toolName: ctx.toolName, args: ctx.args }, child: result[SUSPEND] };
  }
  return { result };
}

function settleFailure(ctx: ToolContext, call: CallInternals, error: unknown): Promise<ToolOutcome> {
  // Only a success is final for this call: a retry after a failure runs the tool again.
  call.failed = true;
  const name = ctx.tool!.name;
  try {
    if (ctx.signal.aborted && !ToolError.is(error)) return Promise.resolve(toolError('aborted', `${name} was cancelled: ${describe(ctx.signal.reason)}`));
    return Promise.resolve(toolException(ctx, error, name));
  } catch (failure) {
    return Promise.reject(failure); // onToolException: 'fail'
  }
}

const SUSPEND = Symbol('koagent.suspend');
type Suspension = { [SUSPEND]: RunState };

/**
 * What a sub-agent tool returns when the sub-agent's run suspended for approval: the parent's
 * call then suspends too, with the sub-agent's pending calls as its own.
 */
export function suspend(child: RunState): Suspension {
  return { [SUSPEND]: child };
}

function isSuspension(value: unknown): value is Suspension {
  return typeof value === 'object' && value !== null && SUSPEND in value;
}

/** `'model'`: the model gets the error as the call's result; `'fail'`: the run fails. */
export type ToolExceptionPolicy = 'model' | 'fail' | ((error: unknown, ctx: ToolContext) => 'model' | 'fail');

/**
 * What an exception of a tool becomes, by the agent's `onToolException`: an `execution` outcome
 * the model sees, or a run failure (`tool_exception`). A `ToolError` always reaches the model.
 * `source` names who threw (the tool, or a hook whose throws count as the tool's).
 */
export function toolException(ctx: ToolContext, error: unknown, source: string): ToolOutcome {
  if (ToolError.is(error)) return toolError('tool_error', error.message, source === ctx.tool?.name ? undefined : source);
  const policy = callOf(ctx).run.setup.onToolException;
  const choice = typeof policy === 'function' ? policy(error, ctx) : policy;
  if (choice === 'fail') {
    throw new KoagentError('tool_exception', `${source} threw while calling ${ctx.toolName}: ${describe(error)}`, { cause: error });
  }
  return toolError('execution', `${source} threw: ${describe(error)}`, source === ctx.tool?.name ? undefined : source);
}
