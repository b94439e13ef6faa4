import type { Layer } from '../core/vocabulary/layer.js';
import type { GuardrailVerdict, ToolContext } from '../core/vocabulary/contexts.js';
import { toolError, type ToolOutcome } from '../core/vocabulary/outcome.js';

function blocked(verdict: GuardrailVerdict): string | undefined {
  return typeof verdict === 'object' && verdict !== null && typeof verdict.block === 'string' ? verdict.block : undefined;
}

// A guardrail that throws could not decide: the call is blocked (fail closed), not the run.
async function check(run: () => GuardrailVerdict | Promise<GuardrailVerdict>, name: string): Promise<ToolOutcome | undefined> {
  let verdict: GuardrailVerdict;
  try {
    verdict = await run();
  } catch (error) {
    return toolError('guardrail', `guardrail ${name} failed, so the call was blocked: ${(error as Error)?.message ?? String(error)}`, name);
  }
  const reason = blocked(verdict);
  return reason === undefined ? undefined : toolError('guardrail', reason, name);
}

function guardName(fn: Function, which: string, i: number): string {
  return fn.name || `${which} guardrail #${i}`;
}

/**
 * The tool's own guardrails: input guardrails after permissions and before approval, output
 * guardrails over the tool's result before any layer or the model sees it.
 */
export const guardrailsStep: Layer<ToolContext, ToolOutcome> = {
  name: 'koagent:guardrails',
  async fn(ctx, next) {
    const { input, output } = ctx.tool!.guardrails;
    if (input.length === 0 && output.length === 0) return next();
    const args = ctx.call.parsedArgs;
    for (let i = 0; i < input.length; i++) {
      const stop = await check(() => input[i](args, ctx), guardName(input[i], 'input', i));
      if (stop !== undefined) return stop;
    }
    const outcome = await next();
    if (outcome.error !== undefined || outcome.requiresApproval) return outcome;
    for (let i = 0; i < output.length; i++) {
      const stop = await check(() => output[i](outcome.result, args, ctx), guardName(output[i], 'output', i));
      if (stop !== undefined) return stop;
    }
    return outcome;
  },
};
