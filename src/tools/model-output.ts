import type { Layer } from '../core/vocabulary/layer.js';
import { contentProblem } from '../core/vocabulary/content.js';
import type { ToolContext } from '../core/vocabulary/contexts.js';
import { describe } from '../core/vocabulary/errors.js';
import { toolError, type ToolOutcome } from '../core/vocabulary/outcome.js';

/**
 * Outermost in the tool stack, for agents with a tool that has `toModelOutput`: once every
 * layer has settled the call, what the model reads is made from the result they settled on —
 * so a layer that redacts or replaces a result changes what the model sees too.
 */
export const modelOutputStep: Layer<ToolContext, ToolOutcome> = {
  name: 'koagent:model-output',
  async fn(ctx, next) {
    const outcome = await next();
    const tool = ctx.tool;
    if (tool?.toModelOutput === undefined || outcome.error !== undefined || outcome.requiresApproval === true) return outcome;
    let content: unknown;
    try {
      content = tool.toModelOutput(outcome.result);
    } catch (error) {
      return toolError('execution', `${tool.name}'s toModelOutput threw: ${describe(error)}`);
    }
    const problem = contentProblem(content, 'tool', `${tool.name}'s toModelOutput result`);
    if (problem !== undefined) return toolError('execution', problem);
    return { ...outcome, content: content as ToolOutcome['content'] };
  },
};
