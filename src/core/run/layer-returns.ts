// What a layer of each hook point must return, checked where it returns it (the compose wraps
// every user layer with its point's check): an outcome, a reply, a run's result.
import type { ModelContext, RunContext, ToolContext } from '../vocabulary/contexts.js';
import { blame } from '../vocabulary/errors.js';
import { preview } from '../vocabulary/json.js';
import type { GenerateResult } from '../vocabulary/model.js';
import type { ToolOutcome } from '../vocabulary/outcome.js';
import type { RunResult } from '../vocabulary/result.js';
import { replyProblem } from './model-call.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function rejectReturn(layer: string, point: string, value: unknown, expected: string): never {
  throw blame(new TypeError(`${layer} returned ${preview(value, 80)} from ${point}(); return what next() resolved to, or ${expected}`), layer);
}

/**
 * After each user layer of the tool stack: check what it returned, and when it settled the call
 * itself (without `next()`), say so: `replacedBy` on a result, a permission record on a denial.
 */
export function checkTool(ctx: ToolContext, out: ToolOutcome, layer: string, nextCalled: boolean): ToolOutcome {
  if (!isObject(out) || !('result' in out || 'error' in out || 'requiresApproval' in out)) {
    rejectReturn(layer, 'tool', out, 'an outcome such as { result } or deny(reason)');
  }
  if (nextCalled) return out;
  if (out.error !== undefined) {
    if (out.error.by !== undefined) return out;
    if (out.error.kind === 'denied') {
      ctx.call.decide({ decision: 'deny', source: 'hook', hook: layer, reason: out.error.message });
    }
    return { ...out, error: { ...out.error, by: layer } };
  }
  if (out.requiresApproval === true || out.replacedBy !== undefined) return out;
  return { ...out, replacedBy: layer };
}

/** After each user layer of the model stack: a reply the loop can keep, or an error naming the layer. */
export function checkModel(_ctx: ModelContext, out: GenerateResult, layer: string): GenerateResult {
  const problem = replyProblem(out);
  if (problem !== undefined) rejectReturn(layer, 'model', out, `a reply { message: { role: "assistant", content, toolCalls? }, usage, finishReason } (it returned ${problem})`);
  return out;
}

export function checkRun(_ctx: RunContext, out: RunResult, layer: string): RunResult {
  if (!isObject(out) || typeof out.status !== 'string' || !Array.isArray(out.messages)) {
    rejectReturn(layer, 'run', out, 'a RunResult');
  }
  return out;
}
