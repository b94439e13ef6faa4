import type { ToolContext } from '../context.js';
import { describe, KoagentError } from '../errors.js';
import { callOf } from './call.js';
import { toolError, type ToolOutcome } from './outcome.js';
import { ToolError } from './tool-error.js';

/**
 * The terminal step of the tool stack: run the tool once. The ledger in the run state marks the
 * call `running` first, so no later path (a retry layer, a resumed or retried segment) can run
 * it again; a layer that calls `next()` twice gets the first execution's outcome.
 */
export function executeStep(ctx: ToolContext): Promise<ToolOutcome> {
  const call = callOf(ctx);
  if (call.executed === undefined) {
    call.run.state.ledger[ctx.toolCallId] = 'running';
    call.executed = execute(ctx, call.parsed);
  }
  return call.executed;
}

async function execute(ctx: ToolContext, args: unknown): Promise<ToolOutcome> {
  const tool = ctx.tool!;
  try {
    return { result: await tool.execute(args, ctx) };
  } catch (error) {
    if (ctx.signal.aborted && !ToolError.is(error)) return toolError('aborted', `${tool.name} was cancelled: ${describe(ctx.signal.reason)}`);
    return toolException(ctx, error, tool.name);
  }
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
