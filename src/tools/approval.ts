import type { TrustedLayer } from '../compose.js';
import type { ToolContext } from '../context.js';
import { toolError, type ToolOutcome } from './outcome.js';
import { callOf } from './call.js';
import { sameJson } from '../json.js';

/**
 * The approval step, innermost before execution: a call that needs a human (the tool's
 * `needsApproval`, or an `ask` rule) settles as `requiresApproval` with the arguments the
 * layers produced. On resume, an approved call goes on only if it is still the call the human
 * approved: the same tool with the same arguments.
 */
export const approvalStep: TrustedLayer<ToolContext, ToolOutcome> = {
  name: 'koagent:approval',
  trusted: true,
  async fn(ctx, next) {
    const call = callOf(ctx);
    const decision = call.decision;
    if (decision?.approved) {
      // Resumed after a human said yes: it runs only as the call they approved.
      if (decision.toolName !== undefined && (decision.toolName !== ctx.toolName || !sameJson(decision.args, ctx.args))) {
        const reason = `The call changed after a human approved it (approved ${decision.toolName} with ${JSON.stringify(decision.args)}, now ${ctx.toolName} with ${JSON.stringify(ctx.args)}); it was not run`;
        call.run.recordPermission(ctx, { decision: 'deny', source: 'approval', reason });
        return toolError('denied', reason, 'approval');
      }
      return next(ctx);
    }
    const tool = ctx.tool!;
    let needed = call.ask !== undefined;
    let reason = call.ask?.reason;
    if (!needed && tool.needsApproval !== undefined) {
      try {
        needed = typeof tool.needsApproval === 'function' ? (await tool.needsApproval(call.parsed, ctx)) === true : tool.needsApproval;
      } catch (error) {
        // It could not decide, so a human does (fail closed).
        needed = true;
        reason = `needsApproval threw: ${(error as Error)?.message ?? String(error)}`;
      }
    }
    if (!needed) return next(ctx);
    return {
      result: undefined,
      requiresApproval: true,
      approval: { toolName: ctx.toolName, args: JSON.parse(JSON.stringify(ctx.args)), ...(reason !== undefined ? { reason } : {}) },
    };
  },
};
