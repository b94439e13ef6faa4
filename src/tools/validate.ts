import { z } from 'zod';
import type { TrustedLayer } from '../compose.js';
import type { ToolContext } from '../context.js';
import type { Tool } from './define.js';
import { toolError, type ToolOutcome } from './outcome.js';
import { callOf } from './call.js';
import { copyJson } from '../json.js';

type ToolStep = TrustedLayer<ToolContext, ToolOutcome>;

/** A model's arguments as an object: parsed from JSON text if need be, or why they are not one. */
export function argsObject(raw: unknown): Record<string, unknown> | string {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return {};
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return `the arguments are not valid JSON (${(error as Error).message})`;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `the arguments must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  }
  return value as Record<string, unknown>;
}

function unknownTool(name: string, tools: ReadonlyMap<string, Tool>, via = ''): ToolOutcome {
  const known = [...tools.keys()];
  return toolError('not_found', `There is no tool named "${name}"${via}. ${known.length ? `Available tools: ${known.join(', ')}.` : 'This agent has no tools.'}`);
}

function invalid(tool: Tool, error: z.ZodError, via = ''): ToolOutcome {
  return toolError('validation', `Invalid arguments for ${tool.name}${via}: ${z.prettifyError(error)}`);
}

/**
 * The outermost step: a call that names no known tool, or whose arguments don't fit the schema,
 * settles here, so every layer inside sees only well-formed calls. When user layers may edit the
 * arguments, they get their own copy, so the transcript keeps what the model wrote.
 */
export function validateStep(tools: ReadonlyMap<string, Tool>, layersMayEditArgs: boolean): ToolStep {
  return {
    name: 'koagent:validate',
    trusted: true,
    // Not async: the call that passes costs no promise of its own (this step is on every call).
    fn(ctx, next) {
      const tool = tools.get(ctx.toolName);
      if (tool === undefined) return Promise.resolve(unknownTool(ctx.toolName, tools));
      // A call resumed after approval goes on from the arguments the human approved (what the
      // layers made of the model's), so a layer that skips its re-fire does not undo its change.
      const approved = callOf(ctx).decision;
      const raw = approved?.approved === true && approved.args !== undefined && (approved.toolName ?? tool.name) === tool.name ? approved.args : ctx.toolCall.args;
      const args = argsObject(raw);
      if (typeof args === 'string') return Promise.resolve(toolError('validation', `Invalid arguments for ${tool.name}: ${args}`));
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) return Promise.resolve(invalid(tool, parsed.error));
      ctx.tool = tool;
      ctx.args = layersMayEditArgs && args === raw ? copyJson(args) : args;
      callOf(ctx).parsed = parsed.data;
      return next(ctx);
    },
  };
}

/**
 * After the user layers: if one renamed the call or changed its arguments, resolve the tool
 * again and check the arguments against its schema again.
 */
export function resolveStep(tools: ReadonlyMap<string, Tool>): ToolStep {
  return {
    name: 'koagent:resolve',
    trusted: true,
    // Not async, like validate: a call that passes costs no promise of its own.
    fn(ctx, next) {
      let tool = ctx.tool;
      if (tool === undefined || tool.name !== ctx.toolName) {
        tool = tools.get(ctx.toolName);
        if (tool === undefined) return Promise.resolve(unknownTool(ctx.toolName, tools, ' (a layer renamed the call)'));
        ctx.tool = tool;
      }
      const args = argsObject(ctx.args);
      if (typeof args === 'string') return Promise.resolve(toolError('validation', `Invalid arguments for ${tool.name} (set by a layer): ${args}`));
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) return Promise.resolve(invalid(tool, parsed.error, ' (as changed by a layer)'));
      callOf(ctx).parsed = parsed.data;
      return next(ctx);
    },
  };
}
