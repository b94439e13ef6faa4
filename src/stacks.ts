import { compose, type Layer, type LayerFn } from './compose.js';
import type { ModelContext, RunContext, ToolContext } from './context.js';
import { attributeError } from './errors.js';
import { runLoop } from './loop.js';
import type { Middleware } from './middleware.js';
import type { GenerateResult } from './model.js';
import { providerStep } from './model-call.js';
import type { RunResult } from './result.js';
import { approvalStep } from './tools/approval.js';
import { callOf } from './tools/call.js';
import type { Tool } from './tools/define.js';
import { executeStep } from './tools/execute.js';
import { guardrailsStep } from './tools/guardrails.js';
import type { ToolOutcome } from './tools/outcome.js';
import { mayAsk, permissionsStep, type PermissionsOption } from './tools/permissions.js';
import { resolveStep, validateStep } from './tools/validate.js';

/** What the agent's options say about tool calls, for the built-in steps. */
export interface ToolPolicy {
  permissions?: PermissionsOption;
  /** Someone wants a record of every decision (`onPermissionDecision`), defaults included. */
  recordDecisions: boolean;
}

/** The three composed hook points of an agent. */
export interface Stacks {
  run(ctx: RunContext): Promise<RunResult>;
  model(ctx: ModelContext): Promise<GenerateResult>;
  tool(ctx: ToolContext): Promise<ToolOutcome>;
}

/**
 * A middleware with its name settled (its own, or its position), ready to be a layer: its
 * functions need no `this` (a user's methods are bound to their object when it is added).
 */
export type NamedMiddleware = Middleware & { name: string };

function layersOf<K extends 'run' | 'model' | 'tool', C, T>(middleware: readonly NamedMiddleware[], point: K): Layer<C, T>[] {
  const layers: Layer<C, T>[] = [];
  for (const mw of middleware) {
    const fn = mw[point] as LayerFn<C, T> | undefined;
    if (fn !== undefined) layers.push({ name: mw.name, fn });
  }
  return layers;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function rejectReturn(layer: string, point: string, value: unknown, expected: string): never {
  let shown: string;
  try {
    shown = JSON.stringify(value)?.slice(0, 80) ?? String(value);
  } catch {
    shown = String(value);
  }
  throw attributeError(new TypeError(`${layer} returned ${shown} from ${point}(); return what next() resolved to, or ${expected}`), layer);
}

/**
 * After each user layer of the tool stack: check what it returned, and when it settled the call
 * itself (without `next()`), say so: `replacedBy` on a result, a permission record on a denial.
 */
function settleTool(ctx: ToolContext, out: ToolOutcome, layer: string, nextCalled: boolean): ToolOutcome {
  if (!isObject(out) || !('result' in out || 'error' in out || 'requiresApproval' in out)) {
    rejectReturn(layer, 'tool', out, 'an outcome such as { result } or deny(reason)');
  }
  if (nextCalled) return out;
  if (out.error !== undefined) {
    if (out.error.by !== undefined) return out;
    if (out.error.kind === 'denied') {
      callOf(ctx).run.recordPermission({ toolName: ctx.toolName, toolCallId: ctx.toolCallId, args: ctx.args }, { decision: 'deny', source: 'hook', hook: layer, reason: out.error.message });
    }
    return { ...out, error: { ...out.error, by: layer } };
  }
  if (out.requiresApproval === true || out.replacedBy !== undefined) return out;
  return { ...out, replacedBy: layer };
}

function settleModel(_ctx: ModelContext, out: GenerateResult, layer: string): GenerateResult {
  if (!isObject(out) || !isObject(out.message) || out.message.role !== 'assistant') {
    rejectReturn(layer, 'model', out, 'a reply { message: { role: "assistant", content }, usage, finishReason }');
  }
  return out;
}

function settleRun(_ctx: RunContext, out: RunResult, layer: string): RunResult {
  if (!isObject(out) || typeof out.status !== 'string' || !Array.isArray(out.messages)) {
    rejectReturn(layer, 'run', out, 'a RunResult');
  }
  return out;
}

/**
 * Build the three stacks. The tool stack is the user's layers inside koagent's own steps:
 * validate outermost, then the layers, then (if there are layers) resolve, permissions,
 * guardrails, approval, and execution as the terminal.
 */
export function buildStacks(middleware: readonly NamedMiddleware[], tools: ReadonlyMap<string, Tool>, policy: ToolPolicy): Stacks {
  const userTool = layersOf<'tool', ToolContext, ToolOutcome>(middleware, 'tool');
  const all = [...tools.values()];
  // A step nobody configured is left out, so an agent pays only for what it uses.
  const toolLayers: Layer<ToolContext, ToolOutcome>[] = [
    validateStep(tools, userTool.length > 0),
    ...userTool,
    ...(userTool.length > 0 ? [resolveStep(tools)] : []),
    ...(policy.permissions !== undefined || policy.recordDecisions ? [permissionsStep(policy.permissions)] : []),
    ...(all.some((t) => t.guardrails.input.length + t.guardrails.output.length > 0) ? [guardrailsStep] : []),
    ...(all.some((t) => t.needsApproval !== undefined && t.needsApproval !== false) || mayAsk(policy.permissions) ? [approvalStep] : []),
  ];
  return {
    run: compose(layersOf<'run', RunContext, RunResult>(middleware, 'run'), runLoop, settleRun),
    model: compose(layersOf<'model', ModelContext, GenerateResult>(middleware, 'model'), providerStep, settleModel),
    tool: compose(toolLayers, executeStep, settleTool),
  };
}
