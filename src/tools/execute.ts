import type { ToolContext } from '../context.js';
import { describe, KoagentError } from '../errors.js';
import type { RunState } from '../state.js';
import { callOf } from './call.js';
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
  if (call.executed === undefined) {
    call.run.state.ledger[ctx.toolCallId] = 'running';
    call.executed = execute(ctx, call.parsed).then(
      (outcome) => {
        if (outcome.error !== undefined) call.executed = undefined;
        return outcome;
      },
      (error: unknown) => {
        call.executed = undefined;
        throw error;
      },
    );
  }
  return call.executed;
}

async function execute(ctx: ToolContext, args: unknown): Promise<ToolOutcome> {
  const tool = ctx.tool!;
  try {
    const result = await tool.execute(args, ctx);
    if (isSuspension(result)) {
      return { result: undefined, requiresApproval: true, approval: { toolName: ctx.toolName, args: ctx.args }, child: result[SUSPEND] };
    }
    return { result };
  } catch (error) {
    if (ctx.signal.aborted && !ToolError.is(error)) return toolError('aborted', `${tool.name} was cancelled: ${describe(ctx.signal.reason)}`);
    return toolException(ctx, error, tool.name);
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
