import { z } from 'zod';
import { argsObject } from '../core/run/arguments.js';
import { sameJson } from '../core/vocabulary/json.js';
import { segmentOf } from '../core/run/base-context.js';
import type { Layer } from '../core/stacks/compose.js';
import { argsCopiedFrom } from '../core/stacks/stacks.js';
import type { Tool, ToolContext } from '../core/vocabulary/contexts.js';
import { markOwnError } from '../core/vocabulary/errors.js';
import { toolError, type ToolOutcome } from '../core/vocabulary/outcome.js';
import { CallSlot, ToolCallContext } from '../core/run/tool-context.js';

type ToolStep = Layer<ToolContext, ToolOutcome>;

/** What validation last checked of a call: the tool it resolved, and the arguments it parsed. */
interface Checked {
  readonly tool: Tool;
  readonly args: Record<string, unknown>;
}

/** This step's own record of each call it passed (the resolve step reads it). */
const checks = new CallSlot<Checked>();

function unknownTool(name: string, tools: ReadonlyMap<string, Tool>, via = ''): ToolOutcome {
  const known = [...tools.keys()];
  return toolError('not_found', `There is no tool named "${name}"${via}. ${known.length ? `Available tools: ${known.join(', ')}.` : 'This agent has no tools.'}`);
}

function invalid(tool: Tool, error: z.ZodError, via = ''): ToolOutcome {
  return toolError('validation', `Invalid arguments for ${tool.name}${via}: ${z.prettifyError(error)}`);
}

/**
 * Why `args` do not fit `tool`'s schema, one `path: message` line an issue (empty when they fit):
 * how the studio and the CLI refuse arguments a person edited, before anything resumes.
 */
export function argumentIssues(tool: Pick<Tool, 'input'>, args: unknown): string[] {
  const checked = tool.input.safeParse(args);
  return checked.success ? [] : checked.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`);
}

/** The schema's verdict; a schema that throws (a transform's bug) is koagent's failure, not a layer's. */
function parse(tool: Tool, args: unknown): ReturnType<Tool['input']['safeParse']> {
  try {
    return tool.input.safeParse(args);
  } catch (error) {
    throw markOwnError(error);
  }
}

/**
 * Resolve the call's tool and check its arguments against the tool's schema: a call that names
 * no known tool, or whose arguments don't fit, settles here, so every layer inside sees only
 * well-formed calls. The message says so when a layer made the call what it is: after the user
 * layers (`changed`), or when one ahead of validation renamed it.
 */
function check(ctx: ToolContext, tools: ReadonlyMap<string, Tool>, afterLayers: boolean, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const changed = afterLayers || ctx.toolName !== ctx.toolCall.name;
  let tool = ctx.tool;
  if (tool === undefined || tool.name !== ctx.toolName) {
    tool = tools.get(ctx.toolName);
    if (tool === undefined) return Promise.resolve(unknownTool(ctx.toolName, tools, changed ? ' (a layer renamed the call)' : ''));
    ctx.tool = tool;
  }
  // Arguments no layer replaced were checked against the bounds when the call started.
  const args = ctx.args === ToolCallContext.startingArgs(ctx) ? ctx.args : argsObject(ctx.args, segmentOf(ctx).agent.argumentBounds);
  if (typeof args === 'string') return Promise.resolve(toolError('validation', `Invalid arguments for ${tool.name}${changed ? ' (set by a layer)' : ''}: ${args}`));
  const parsed = parse(tool, args);
  if (!parsed.success) return Promise.resolve(invalid(tool, parsed.error, changed ? ' (as changed by a layer)' : ''));
  ToolCallContext.setParsedArgs(ctx, parsed.data);
  checks.set(ctx, { tool, args });
  return next();
}

/**
 * Whether the user layers left the call as validation checked it: the same tool, and arguments
 * equal to the ones checked, which no layer could edit in place (they were given a copy).
 */
function unchanged(ctx: ToolContext): boolean {
  const checked = checks.get(ctx);
  if (checked === undefined) return false;
  const { tool, args } = checked;
  return args === argsCopiedFrom(ctx) && ctx.tool === tool && ctx.toolName === tool.name && sameJson(ctx.args, args);
}

/** Validation, where the pipeline puts it: just before the first layer that needs a well-formed call. */
export function validateStep(tools: ReadonlyMap<string, Tool>): ToolStep {
  return {
    name: 'koagent:validate',
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
    fn: (ctx, next) => (unchanged(ctx) ? next() : check(ctx, tools, true, next)),
  };
}
