// The `tool` layer of one criogen Hook: beforeTool on the way in, afterTool on the way out.
import { toolError, ToolError, type Middleware, type ToolContext, type ToolOutcome } from '../../api.js';
import { hookMistake, show } from './hook-context.js';
import { ToolResult } from './tool-result.js';
import type { Hook, ToolCall } from './types.js';

/**
 * One tool call through one Hook's layer:
 * - `beforeTool(call)` may return a changed ToolCall (the resolve step inside revalidates it
 *   against the named tool), a ToolResult (the call settles here: inner layers never see it), or
 *   nothing. A throw counts as the tool's exception (the agent's `onToolException`).
 * - `afterTool(call, result)` runs for every call that settled with a result or a tool error,
 *   including one this hook's own beforeTool settled. It is not called while a call waits for
 *   approval: there is no result yet, and a replacement would skip the human. It runs in the
 *   segment where the approved call settles.
 */
export function criogenToolLayer(hook: Hook, name: string): NonNullable<Middleware['tool']> {
  const hasBefore = typeof hook.beforeTool === 'function';
  const hasAfter = typeof hook.afterTool === 'function';
  return async (ctx, next) => {
    const settled = hasBefore ? await beforeTool(hook, name, ctx) : undefined;
    const outcome = settled ?? (await next());
    if (!hasAfter || outcome.requiresApproval === true) return outcome;
    return afterTool(hook, name, ctx, outcome);
  };
}

/** Run beforeTool: an outcome when it settled the call, undefined to go on (maybe renamed). */
async function beforeTool(hook: Hook, name: string, ctx: ToolContext): Promise<ToolOutcome | undefined> {
  // The hook gets its own copy of the args (they are JSON): only a call it returns changes what runs.
  const given: ToolCall = { callId: ctx.toolCallId, name: ctx.toolName, args: JSON.parse(JSON.stringify(ctx.args)) as Record<string, unknown> };
  let returned: unknown;
  try {
    returned = await hook.beforeTool!(given);
  } catch (error) {
    return ctx.call.thrown(error, name);
  }
  if (returned === undefined || returned === null) return undefined;
  if (ToolResult.is(returned)) return { result: returned.value, replacedBy: name };
  const call = returned as Partial<ToolCall>;
  const where = `${name}.beforeTool()`;
  if (typeof call !== 'object' || typeof call.name !== 'string' || call.name === '') {
    throw hookMistake(name, `${where} returned ${show(returned)}; return the call (changed) as { callId, name, args }, a new ToolResult(value) to skip the tool, or nothing`);
  }
  if (typeof call.args !== 'object' || call.args === null || Array.isArray(call.args)) {
    throw hookMistake(name, `${where} returned a call whose args are ${show(call.args)}; args must be an object of the arguments for ${call.name}`);
  }
  if (call.callId !== undefined && call.callId !== ctx.toolCallId) {
    throw hookMistake(name, `${where} returned callId "${String(call.callId)}" for call "${ctx.toolCallId}"; the callId identifies the call in the transcript and cannot change`);
  }
  ctx.toolName = call.name;
  ctx.args = call.args;
  return undefined;
}

/**
 * Run afterTool. It receives the call as it ran (after every beforeTool's changes) and the
 * result: the value the tool (or a ToolResult) gave, or, for a tool error, a ToolError whose
 * `message` is the error's and whose `kind` says which (`denied`, `execution`, ...).
 * Its return value: undefined keeps the outcome; a ToolError makes it that error (the same
 * instance it got keeps the original error); a ToolResult's value or any other value replaces
 * the result the model sees.
 */
async function afterTool(hook: Hook, name: string, ctx: ToolContext, outcome: ToolOutcome): Promise<ToolOutcome> {
  const call: ToolCall = { callId: ctx.toolCallId, name: ctx.toolName, args: ctx.args };
  const given = outcome.error === undefined ? outcome.result : Object.assign(new ToolError(outcome.error.message), { kind: outcome.error.kind });
  let returned: unknown;
  try {
    returned = await hook.afterTool!(call, given);
  } catch (error) {
    return ctx.call.thrown(error, name);
  }
  if (returned === undefined || returned === given) return outcome;
  if (ToolError.is(returned)) return toolError('tool_error', returned.message, name);
  return { result: ToolResult.is(returned) ? returned.value : returned, replacedBy: name };
}
