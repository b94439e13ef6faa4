import { compose, type Layer, type LayerFn, type ReturnCheck } from './compose.js';
import { segmentOf } from '../run/base-context.js';
import type { ModelContext, RunContext, ToolContext } from '../vocabulary/contexts.js';
import { blame } from '../vocabulary/errors.js';
import { preview } from '../vocabulary/json.js';
import type { NamedMiddleware } from '../vocabulary/middleware.js';
import type { GenerateResult } from '../vocabulary/model.js';
import { replyProblem } from '../run/model-call.js';
import type { ToolOutcome } from '../vocabulary/outcome.js';
import type { RunResult } from '../vocabulary/result.js';
import type { ProviderCall, Stacks } from '../run/agent-core.js';

type ToolLayer = Layer<ToolContext, ToolOutcome>;
type Terminal<C, T> = (ctx: C) => Promise<T>;

/**
 * koagent's own steps of the tool pipeline, in the order they run, as the build step made them
 * (a step nobody configured is left out, so an agent pays only for what it uses).
 */
export interface ToolSteps {
  /** Outermost, when some tool says how the model reads its results: makes that content from the settled result. */
  present?: ToolLayer;
  /** Resolves the tool and checks the arguments against its schema. */
  validate: ToolLayer;
  /** After the user layers: resolve and check again, as a layer may have renamed or edited the call. */
  resolve: ToolLayer;
  /** Between the user layers and execution: permissions, guardrails, approval. */
  policy: readonly ToolLayer[];
  /** How the approval step settles a call a human denied, alone: no user layer sees that call. */
  denial: ToolLayer;
  execute: Terminal<ToolContext, ToolOutcome>;
}

/** What every mode's stacks of an agent are made of: its layers and koagent's steps. */
export interface StackParts {
  layers: readonly NamedMiddleware[];
  tool: ToolSteps;
  run: Terminal<RunContext, RunResult>;
  model: Terminal<ModelContext, GenerateResult>;
  provider: Terminal<ProviderCall, GenerateResult>;
}

/** Features' own layers for one mode, outermost first (the build step decides which a mode has). */
export interface StackFeatures {
  run?: readonly Layer<RunContext, RunResult>[];
  /**
   * Innermost in the run stack, between the user layers and the loop, so every user layer sees
   * what they return (they may call `next()` again once it settled, to send the model back).
   */
  runInside?: readonly Layer<RunContext, RunResult>[];
  model?: readonly Layer<ModelContext, GenerateResult>[];
  tool?: readonly ToolLayer[];
  provider?: readonly Layer<ProviderCall, GenerateResult>[];
}

/** The names under which a middleware object holds its layer functions. */
type HookPoint = 'run' | 'model' | 'tool';

/** The layers of one hook point, read once (a getter there runs now, not on every call), each with the point's check. */
function layersOf<C, T>(middleware: readonly NamedMiddleware[], point: HookPoint, check: ReturnCheck<C, T>): Layer<C, T>[] {
  const layers: Layer<C, T>[] = [];
  for (const mw of middleware) {
    const fn = mw[point] as LayerFn<C, T> | undefined;
    if (fn !== undefined) layers.push({ name: mw.name, fn, self: mw.self, check });
  }
  return layers;
}

/**
 * The tool pipeline's order. User layers that see raw calls and come first (criogen Hooks) run
 * ahead of validation; validation runs just before the first layer that needs a well-formed
 * call; after the user layers, the call is resolved again, then permissions, guardrails,
 * approval, and execution.
 */
export function toolPipeline(middleware: readonly NamedMiddleware[], steps: ToolSteps, features: readonly ToolLayer[] = []): Terminal<ToolContext, ToolOutcome> {
  const withTool = middleware.filter((mw) => mw.tool !== undefined);
  const user = layersOf<ToolContext, ToolOutcome>(withTool, 'tool', checkTool);
  const firstValidated = withTool.findIndex((mw) => mw.rawCalls !== true);
  const split = firstValidated === -1 ? user.length : firstValidated;
  const layers: ToolLayer[] = [...features];
  if (steps.present !== undefined) layers.push(steps.present);
  // Without layers ahead of validation, it checks the call as the model wrote it, before the copy.
  if (split === 0) layers.push(steps.validate);
  if (split > 0) layers.push(...user.slice(0, split), steps.validate);
  layers.push(...user.slice(split));
  // With a layer after validation, a rename or an edit of the arguments is checked again.
  if (split < user.length) layers.push(steps.resolve);
  layers.push(...steps.policy);
  return compose(layers, steps.execute);
}

/** Build the stacks of one mode: the agent's parts, with that mode's features. */
export function buildStacks(parts: StackParts, features: StackFeatures): Stacks {
  const { layers } = parts;
  return {
    run: compose([...(features.run ?? []), ...watchingEnds(layersOf(layers, 'run', checkRun)), ...(features.runInside ?? [])], parts.run),
    model: compose([...(features.model ?? []), ...layersOf(layers, 'model', checkModel)], parts.model),
    tool: toolPipeline(layers, parts.tool, features.tool),
    denied: compose([...(features.tool ?? []), parts.tool.denial], settledAlready),
    provider: compose(features.provider ?? [], parts.provider),
  };
}

/**
 * The run stack's user layers, each with a step of koagent's outside it, and one inside the
 * last: as a layer (or the terminal) settles, its step tells the segment how the segment ends
 * so far — before the layer outside resumes, so what it reads in `ctx.state` after `next()`
 * says how the segment ended (see `Segment.answered`, `Segment.failing`).
 */
function watchingEnds(user: Layer<RunContext, RunResult>[]): Layer<RunContext, RunResult>[] {
  if (user.length === 0) return user;
  return [...user.flatMap((layer) => [endWatch(layer.name), layer]), endWatch(undefined)];
}

/** The step outside a run layer named `inner` (undefined: the terminal). */
function endWatch(inner: string | undefined): Layer<RunContext, RunResult> {
  return {
    name: 'koagent:end',
    fn(ctx, next) {
      const segment = segmentOf(ctx);
      segment.end.reopen();
      return next().then(
        (result) => (segment.end.answered(result), result),
        (error: unknown) => {
          segment.end.failing(error, inner);
          throw error;
        },
      );
    },
  };
}

/** Past the step that settles a denied call: nothing (that step never calls its next). */
const settledAlready: Terminal<ToolContext, ToolOutcome> = (ctx) => Promise.reject(new Error(`koagent: the call ${ctx.toolCallId} a human denied went past the approval step`));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function rejectReturn(layer: string, point: string, value: unknown, expected: string): never {
  throw blame(new TypeError(`${layer} returned ${preview(value, 80)} from ${point}(); return what next() resolved to, or ${expected}`), layer);
}

/**
 * After each user layer of the tool stack: check what it returned, and when it settled the call
 * itself (without `next()`), say so: `replacedBy` on a result, a permission record on a denial.
 */
function checkTool(ctx: ToolContext, out: ToolOutcome, layer: string, nextCalled: boolean): ToolOutcome {
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
function checkModel(_ctx: ModelContext, out: GenerateResult, layer: string): GenerateResult {
  const problem = replyProblem(out);
  if (problem !== undefined) rejectReturn(layer, 'model', out, `a reply { message: { role: "assistant", content, toolCalls? }, usage, finishReason } (it returned ${problem})`);
  return out;
}

function checkRun(_ctx: RunContext, out: RunResult, layer: string): RunResult {
  if (!isObject(out) || typeof out.status !== 'string' || !Array.isArray(out.messages)) {
    rejectReturn(layer, 'run', out, 'a RunResult');
  }
  return out;
}
