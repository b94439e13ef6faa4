import type { ToolContext } from './contexts.js';
import { blame, describe, KoagentError, markOwnError } from './errors.js';
import { toolError, type ToolOutcome } from './outcome.js';
import { ToolError } from './tool-error.js';

/**
 * What a tool's exception does, by the agent's `onToolException`: `'model'` (default) gives the
 * model the error as the call's result; `'fail'` fails the run with code `tool_exception`; a
 * function decides per error. A thrown `ToolError` always goes to the model.
 *
 * @example createAgent({ model, tools, onToolException: (error) => (error instanceof TypeError ? 'fail' : 'model') })
 *
 * @inline
 */
export type ToolExceptionPolicy = 'model' | 'fail' | ((error: unknown, ctx: ToolContext) => 'model' | 'fail');

/**
 * The outcome an exception of a tool becomes (a throw in the tool, or in a hook whose throws
 * count as the tool's): `tool_error` for a `ToolError`, else `execution`, or, when the policy
 * says `'fail'`, a thrown `tool_exception` that fails the run. `source` names who threw.
 */
export function exceptionOutcome(policy: ToolExceptionPolicy, ctx: ToolContext, error: unknown, source: string): ToolOutcome {
  const by = source === ctx.tool?.name ? undefined : source;
  if (ToolError.is(error)) return toolError('tool_error', error.message, by);
  const choice = typeof policy === 'function' ? policy(error, ctx) : policy;
  if (choice === 'fail') {
    const failure = new KoagentError('tool_exception', `${source} threw while calling ${ctx.toolName}: ${describe(error)}`, { cause: error });
    // A hook whose throws count as the tool's is named as the layer; the tool itself is not one.
    throw by === undefined ? markOwnError(failure) : blame(failure, by);
  }
  return toolError('execution', `${source} threw: ${describe(error)}`, by);
}
