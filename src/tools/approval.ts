import { approvalBreach, humanDenial } from '../core/state/approved-call.js';
import { segmentOf } from '../core/run/base-context.js';
import type { Layer } from '../core/stacks/compose.js';
import type { ToolContext } from '../core/vocabulary/contexts.js';
import { copyJson } from '../core/vocabulary/json.js';
import { toolError, type ToolOutcome } from '../core/vocabulary/outcome.js';
import { ToolCallContext } from '../core/run/tool-context.js';
import { askedFor } from './permissions.js';

/**
 * The approval step, innermost before execution: a call that needs a human (the tool's
 * `needsApproval`, or an `ask` rule) settles as `requiresApproval` with the arguments the
 * layers produced. On resume, an approved call goes on only if it is still the call the human
 * approved: the same tool with the same arguments.
 */
export const approvalStep: Layer<ToolContext, ToolOutcome> = {
  name: 'koagent:approval',
  trusted: true,
  async fn(ctx, next) {
    const decision = ToolCallContext.decision(ctx);
    if (decision?.approved) {
      // Resumed after a human said yes: it runs only as the call they approved.
      const breach = approvalBreach(decision, ctx.toolName, ctx.args);
      if (breach === undefined) return next(ctx);
      segmentOf(ctx).recordPermission(ctx, { decision: 'deny', source: 'approval', reason: breach });
      return toolError('denied', breach, 'approval');
    }
    const tool = ctx.tool!;
    const ask = askedFor(ctx);
    let needed = ask !== undefined;
    let reason = ask?.reason;
    if (!needed && tool.needsApproval !== undefined) {
      try {
        needed = typeof tool.needsApproval === 'function' ? (await tool.needsApproval(ToolCallContext.parsedArgs(ctx), ctx)) === true : tool.needsApproval;
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
      approval: { toolName: ctx.toolName, args: copyJson(ctx.args), ...(reason !== undefined ? { reason } : {}) },
    };
  },
};

/**
 * The approval step's part in a call a human denied: it settles at once, with their reason, and
 * no user layer sees it. Only the features' layers around it (spans, the layer trace) observe
 * it, so the trace shows the approval step denying the call on the human's decision.
 */
export const humanDenialStep: Layer<ToolContext, ToolOutcome> = {
  name: approvalStep.name,
  trusted: true,
  fn: async (ctx) => humanDenial(ToolCallContext.decision(ctx)) ?? toolError('denied', 'A human denied this call', 'approval'),
};
