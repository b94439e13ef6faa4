import { z } from 'zod';
import { argsObject } from '../core/run/arguments.js';
import { sameJson } from '../core/vocabulary/json.js';
import { segmentOf } from '../core/run/base-context.js';
import type { Layer } from '../core/stacks/compose.js';
import type { Tool, ToolContext } from '../core/vocabulary/contexts.js';
import { toolError, type ToolOutcome } from '../core/vocabulary/outcome.js';
import { ToolCallContext } from '../core/run/tool-context.js';

type ToolStep = Layer<ToolContext, ToolOutcome>;

function unknownTool(name: string, tools: ReadonlyMap<string, Tool>, via = ''): ToolOutcome {
  const known = [...tools.keys()];
  return toolError('not_found', `There is no tool named "${name}"${via}. ${known.length ? `Available tools: ${known.join(', ')}.` : 'This agent has no tools.'}`);
}

function invalid(tool: Tool, error: z.ZodError, via = ''): ToolOutcome {
  return toolError('validation', `Invalid arguments for ${tool.name}${via}: ${z.prettifyError(error)}`);
}

/**
 * Resolve the call's tool and check its arguments against the tool's schema: a call that names
 * no known tool, or whose arguments don't fit, settles here, so every layer inside sees only
 * well-formed calls. The message says so when a layer made the call what it is: after the user
 * layers (`changed`), or when one ahead of validation renamed it.
 */
function check(ctx: ToolContext, tools: ReadonlyMap<string, Tool>, afterLayers: boolean, next: (ctx: ToolContext) => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const changed = afterLayers || ctx.toolName !== ctx.toolCall.name;
  let tool = ctx.tool;
  if (tool === undefined || tool.name !== ctx.toolName) {
    tool = tools.get(ctx.toolName);
    if (tool === undefined) return Promise.resolve(unknownTool(ctx.toolName, tools, changed ? ' (a layer renamed the call)' : ''));
    ctx.tool = tool;
  }
  const state = ToolCallContext.callState(ctx);
  // Arguments no layer replaced were checked against the bounds when the call started.
  const args = ctx.args === state.bounded ? ctx.args : argsObject(ctx.args, segmentOf(ctx).agent.argumentBounds);
  if (typeof args === 'string') return Promise.resolve(toolError('validation', `Invalid arguments for ${tool.name}${changed ? ' (set by a layer)' : ''}: ${args}`));
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) return Promise.resolve(invalid(tool, parsed.error, changed ? ' (as changed by a layer)' : ''));
  state.parsed = parsed.data;
  state.checkedTool = tool;
  state.checkedArgs = args;
  return next(ctx);
}

/**
 * Whether the user layers left the call as validation checked it: the same tool, and arguments
 * equal to the ones checked, which no layer could edit in place (they were given a copy).
 */
function unchanged(ctx: ToolContext): boolean {
  const { checkedTool, checkedArgs, copiedFrom } = ToolCallContext.callState(ctx);
  return checkedTool !== undefined && checkedArgs === copiedFrom && ctx.tool === checkedTool && ctx.toolName === checkedTool.name && sameJson(ctx.args, checkedArgs);
}

/** Validation, where the pipeline puts it: just before the first layer that needs a well-formed call. */
export function validateStep(tools: ReadonlyMap<string, Tool>): ToolStep {
  return {
    name: 'koagent:validate',
    trusted: true,
    // Not async: a call that passes costs no promise of its own (this step is on every call).
    fn: (ctx, next) => check(ctx, tools, false, next),
  };
}

/**
 * After the user layers: if one renamed the call or changed its arguments, check it again. A
 * call they left as it was is not parsed a second time.
 */
export function resolveStep(tools: ReadonlyMap<string, Tool>): ToolStep {
  return {
    name: 'koagent:resolve',
    trusted: true,
    fn: (ctx, next) => (unchanged(ctx) ? next(ctx) : check(ctx, tools, true, next)),
  };
}
