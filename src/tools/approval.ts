import { approvalBreach, humanDenial } from '../core/state/approved-call.js';
import type { Layer } from '../core/vocabulary/layer.js';
import type { ToolContext } from '../core/vocabulary/contexts.js';
import { copyJson } from '../core/vocabulary/json.js';
import { toolError, type ToolOutcome } from '../core/vocabulary/outcome.js';

/**
 * The approval step, innermost before execution: a call that needs a human (the tool's
 * `needsApproval`, or an `ask` rule) settles as `requiresApproval` with the arguments the
 * layers produced. On resume, an approved call goes on only if it is still the call the human
 * approved: the same tool with the same arguments.
 */
export const approvalStep: Layer<ToolContext, ToolOutcome> = {
  name: 'koagent:approval',
  async fn(ctx, next) {
    const { call } = ctx;
    const { decision } = call;
    if (decision?.approved) {
      // Resumed after a human said yes: it runs only as the call they approved.
      const breach = approvalBreach(decision, call.name, call.args);
      if (breach === undefined) return next();
      call.decide({ decision: 'deny', source: 'approval', reason: breach });
      return toolError('denied', breach, 'approval');
    }
    const tool = ctx.tool!;
    const ask = call.policy?.decision === 'ask' ? call.policy : undefined;
    let needed = ask !== undefined;
    let reason = ask?.reason;
    if (!needed && tool.needsApproval !== undefined) {
      try {
        needed = typeof tool.needsApproval === 'function' ? (await tool.needsApproval(call.parsedArgs, ctx)) === true : tool.needsApproval;
      } catch (error) {
        // It could not decide, so a human does (fail closed).
        needed = true;
        reason = `needsApproval threw: ${(error as Error)?.message ?? String(error)}`;
      }
    }
    if (!needed) return next();
    return {
      result: undefined,
      requiresApproval: true,
      approval: { toolName: call.name, args: copyJson(call.args), ...(reason !== undefined ? { reason } : {}) },
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
  fn: async (ctx) => humanDenial(ctx.call.decision) ?? toolError('denied', 'A human denied this call', 'approval'),
};
