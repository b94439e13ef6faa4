// The tool pipeline's own steps: validation (where the pipeline puts it), the check again after
// the layers when one changed the call, and execution, innermost. Each reads and writes the
// call's record; the steps between them (permissions, guardrails, approval) are features.
import { z } from 'zod';
import type { Layer } from '../vocabulary/layer.js';
import type { Tool, ToolContext } from '../vocabulary/contexts.js';
import { describe, markOwnError } from '../vocabulary/errors.js';
import { toolError, type NestedRun, type ToolOutcome } from '../vocabulary/outcome.js';
import { ToolError } from '../vocabulary/tool-error.js';
import { segmentOf } from './base-context.js';
import type { ToolCallContext } from './tool-context.js';
import { argsObject, type Execution, type ToolCall } from './tool-call.js';

type ToolStep = Layer<ToolContext, ToolOutcome>;

/** Validation, where the pipeline puts it: just before the first layer that needs a well-formed call. */
export function validateStep(tools: ReadonlyMap<string, Tool>): ToolStep {
  // Not async: a call that passes costs no promise of its own (this step is on every call).
  return { name: 'koagent:validate', fn: (ctx, next) => check((ctx as ToolCallContext).call, tools, false, next) };
}

/** After the user layers: a call one of them renamed or changed is checked again; one they left alone is not. */
export function resolveStep(tools: ReadonlyMap<string, Tool>): ToolStep {
  return { name: 'koagent:resolve', fn: (ctx, next) => ((ctx as ToolCallContext).call.changed ? check((ctx as ToolCallContext).call, tools, true, next) : next()) };
}

/**
 * Resolve the call's tool and check its arguments against the tool's schema: a call that names
 * no known tool, or whose arguments don't fit, settles here, so every layer inside sees only
 * well-formed calls. The message says so when a layer made the call what it is.
 */
function check(call: ToolCall, tools: ReadonlyMap<string, Tool>, afterLayers: boolean, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const byLayer = afterLayers || call.name !== call.written.name;
  let tool = call.tool;
  // A tool a layer put in place for this name (an emulation) stays.
  if (tool === undefined || tool.name !== call.name) {
    tool = tools.get(call.name);
    if (tool === undefined) return Promise.resolve(unknownTool(call.name, tools, byLayer ? ' (a layer renamed the call)' : ''));
  }
  // Arguments a layer set are checked against the bounds now; the model's were, when its reply was kept.
  const args = call.changed ? argsObject(call.current, segmentOf(call.context!).agent.argumentBounds) : call.problem ?? call.current;
  if (typeof args === 'string') return Promise.resolve(toolError('validation', `Invalid arguments for ${tool.name}${byLayer ? ' (set by a layer)' : ''}: ${args}`));
  const parsed = parse(tool, args);
  if (!parsed.success) return Promise.resolve(toolError('validation', `Invalid arguments for ${tool.name}${byLayer ? ' (as changed by a layer)' : ''}: ${z.prettifyError(parsed.error)}`));
  call.checked(tool, parsed.data);
  return next();
}

/** The schema's verdict; a schema that throws (a transform's bug) is koagent's failure, not a layer's. */
function parse(tool: Tool, args: unknown): ReturnType<Tool['input']['safeParse']> {
  try {
    return tool.input.safeParse(args);
  } catch (error) {
    throw markOwnError(error);
  }
}

function unknownTool(name: string, tools: ReadonlyMap<string, Tool>, via: string): ToolOutcome {
  const known = [...tools.keys()];
  return toolError('not_found', `There is no tool named "${name}"${via}. ${known.length ? `Available tools: ${known.join(', ')}.` : 'This agent has no tools.'}`);
}

/**
 * The terminal step of the tool stack. The ledger marks the call `running` first, so no later
 * segment (a resume, a retried segment, a recovery) runs it again, unless its tool's
 * interruption policy says so (see `InterruptPolicy`). Within the call, a layer that calls
 * `next()` again after a successful execution gets that outcome (the effect happened once);
 * after a failed one it runs the tool again, with the same `idempotencyKey`, since retrying a
 * failed tool is what a retry layer is for.
 */
export function executeStep(ctx: ToolContext): Promise<ToolOutcome> {
  return executeCall(ctx, invokeTool);
}

/**
 * How the execute step enters a call's tool: its `execute`, unless a feature enters it its own
 * way (recording what it returns, or playing a recorded result back instead of running it).
 * What it returns or throws is the tool's.
 */
export type ToolInvoker = (tool: Tool, args: unknown, ctx: ToolContext) => unknown;

const invokeTool: ToolInvoker = (tool, args, ctx) => tool.execute(args, ctx);

/** The execute step, entering each tool through `invoke`: the same write-ahead ledger, events and checks as `executeStep`. */
export function executeStepWith(invoke: ToolInvoker): (ctx: ToolContext) => Promise<ToolOutcome> {
  return (ctx) => executeCall(ctx, invoke);
}

function executeCall(ctx: ToolContext, invoke: ToolInvoker): Promise<ToolOutcome> {
  const { call } = ctx as ToolCallContext;
  const last = call.execution;
  if (last?.outcome !== undefined && !last.failed) return last.outcome;
  const run: Execution = { failed: false };
  call.execution = run;
  const segment = segmentOf(ctx);
  // Write-ahead: the step ends with the call `running`, kept before the tool is entered. If
  // that fails (a store is down, another worker took the run), the tool does not run at all.
  const kept = segment.writer.callRunning(call.id);
  const execute = (): Promise<ToolOutcome> => {
    // Here, not as the call enters the pipeline: one `tool.start` per execution, none for a call
    // that only waits for a human (`approval.requested`) or that a layer settled.
    if (segment.bus.listening) segment.bus.publish({ type: 'tool.start', toolCallId: call.id, toolName: call.written.name, args: call.written.args });
    let value: unknown;
    try {
      value = invoke(call.tool!, call.parsedArgs, ctx);
    } catch (error) {
      return failed(ctx, run, error);
    }
    // A tool that answers at once (no promise) costs no extra turn of the event loop.
    if (typeof (value as PromiseLike<unknown> | undefined)?.then === 'function') {
      return Promise.resolve(value).then((result) => succeeded(call, result), (error) => failed(ctx, run, error));
    }
    return Promise.resolve(succeeded(call, value));
  };
  return (run.outcome = kept === undefined ? execute() : kept.then(execute));
}

function succeeded(call: ToolCall, result: unknown): ToolOutcome {
  if (isSuspension(result)) {
    return { result: undefined, requiresApproval: true, approval: { toolName: call.name, args: call.current }, nested: result[SUSPEND] };
  }
  const schema = call.tool!.output;
  if (schema === undefined) return { result };
  // The declared output is what every layer and the model see: checked here, innermost.
  const parsed = schema.safeParse(result);
  if (parsed.success) return { result: parsed.data };
  const issue = parsed.error.issues[0];
  const at = issue.path.length === 0 ? 'the result' : `"${issue.path.map(String).join('.')}"`;
  return toolError('execution', `${call.tool!.name} returned a result that does not fit its output schema: at ${at}: ${issue.message}`);
}

function failed(ctx: ToolContext, run: Execution, error: unknown): Promise<ToolOutcome> {
  // Only a success is final for this call: a retry after a failure runs the tool again.
  run.failed = true;
  const name = ctx.tool!.name;
  try {
    if (ctx.signal.aborted && !ToolError.is(error)) return Promise.resolve(toolError('aborted', `${name} was cancelled: ${describe(ctx.signal.reason)}`));
    return Promise.resolve(ctx.call.thrown(error, name));
  } catch (failure) {
    return Promise.reject(failure); // onToolException: 'fail'
  }
}

const SUSPEND = Symbol('koagent.suspend');
type Suspension = { [SUSPEND]: NestedRun };

/**
 * What a tool returns when a nested run behind it (a sub-agent's) waits for a human: the call
 * then waits too, with the nested run's pending approvals as the run's own.
 */
export function suspendWith(nested: NestedRun): Suspension {
  return { [SUSPEND]: nested };
}

/** Whether a tool returned `suspendWith(…)`: its call waits for a nested run (a sub-agent's) to be decided. */
export function isSuspension(value: unknown): value is Suspension {
  return typeof value === 'object' && value !== null && SUSPEND in value;
}
