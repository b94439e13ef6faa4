import { segmentOf } from '../run/base-context.js';
import { compose, type Layer, type LayerFn, type TrustedLayer } from './compose.js';
import type { ModelContext, RunContext, ToolContext } from '../vocabulary/contexts.js';
import { blame } from '../vocabulary/errors.js';
import { copyJson, preview } from '../vocabulary/json.js';
import type { NamedMiddleware } from '../vocabulary/middleware.js';
import type { GenerateResult } from '../vocabulary/model.js';
import { replyProblem } from '../run/model-call.js';
import type { ToolOutcome } from '../vocabulary/outcome.js';
import type { RunResult } from '../vocabulary/result.js';
import type { ProviderCall, Stacks } from '../run/segment.js';
import { CallSlot } from '../run/tool-context.js';

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
   * what they return. Each calls the next directly, and may call it again once it settled
   * (to send the model back for another turn).
   */
  runInside?: readonly TrustedLayer<RunContext, RunResult>[];
  model?: readonly Layer<ModelContext, GenerateResult>[];
  tool?: readonly ToolLayer[];
  provider?: readonly Layer<ProviderCall, GenerateResult>[];
}

/** The names under which a middleware object holds its layer functions. */
type HookPoint = 'run' | 'model' | 'tool';

/** The layers of one hook point, read once: a getter there runs now, not on every call. */
function layersOf<C, T>(middleware: readonly NamedMiddleware[], point: HookPoint): Layer<C, T>[] {
  const layers: Layer<C, T>[] = [];
  for (const mw of middleware) {
    const fn = mw[point] as LayerFn<C, T> | undefined;
    if (fn !== undefined) layers.push({ name: mw.name, fn, self: mw.self });
  }
  return layers;
}

/**
 * The tool pipeline's order. User layers that see raw calls and come first (criogen Hooks) run
 * ahead of validation; validation runs just before the first layer that needs a well-formed
 * call; after the user layers, the call is resolved again, then permissions, guardrails,
 * approval, and execution. Layers that may edit the arguments get their own copy of them.
 */
export function toolPipeline(middleware: readonly NamedMiddleware[], steps: ToolSteps, features: readonly ToolLayer[] = []): Terminal<ToolContext, ToolOutcome> {
  const withTool = middleware.filter((mw) => mw.tool !== undefined);
  const user = layersOf<ToolContext, ToolOutcome>(withTool, 'tool');
  const firstValidated = withTool.findIndex((mw) => mw.rawCalls !== true);
  const split = firstValidated === -1 ? user.length : firstValidated;
  const layers: ToolLayer[] = [...features];
  if (steps.present !== undefined) layers.push(steps.present);
  // Without layers ahead of validation, it checks the call as the model wrote it, before the copy.
  if (split === 0) layers.push(steps.validate);
  if (user.length > 0) layers.push(copyArgs);
  if (split > 0) layers.push(...user.slice(0, split), steps.validate);
  layers.push(...user.slice(split));
  // With a layer after validation, a rename or an edit of the arguments is checked again.
  if (split < user.length) layers.push(steps.resolve);
  layers.push(...steps.policy);
  return compose(layers, steps.execute, checkTool);
}

/** Of each call whose arguments the user layers were given a copy of: the arguments copied (no layer holds them). */
const copied = new CallSlot<Record<string, unknown>>();

/** The user layers get their own copy of the arguments, so the transcript keeps what the model wrote. */
const copyArgs: ToolLayer = {
  name: 'koagent:copy-args',
  trusted: true,
  fn(ctx, next) {
    if (ctx.args === ctx.toolCall.args || ctx.args === segmentOf(ctx).writer.decisionOn(ctx.toolCallId)?.args) {
      copied.set(ctx, ctx.args);
      ctx.args = copyJson(ctx.args);
    }
    return next(ctx);
  },
};

/**
 * The arguments the user layers of this call were given a copy of, if they were: an object no
 * layer could have changed in place (validation, having checked it, need not check it again).
 */
export function argsCopiedFrom(ctx: ToolContext): Record<string, unknown> | undefined {
  return copied.get(ctx);
}

/** Build the stacks of one mode: the agent's parts, with that mode's features. */
export function buildStacks(parts: StackParts, features: StackFeatures): Stacks {
  const { layers } = parts;
  return {
    run: compose([...(features.run ?? []), ...watchingEnds(layersOf<RunContext, RunResult>(layers, 'run'))], around(features.runInside ?? [], parts.run), checkRun),
    model: compose([...(features.model ?? []), ...layersOf<ModelContext, GenerateResult>(layers, 'model')], parts.model, checkModel),
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
function endWatch(inner: string | undefined): TrustedLayer<RunContext, RunResult> {
  return {
    name: 'koagent:end',
    trusted: true,
    fn(ctx, next) {
      const segment = segmentOf(ctx);
      segment.goOn();
      return next(ctx).then(
        (result) => (segment.answered(result), result),
        (error: unknown) => {
          segment.failing(error, inner);
          throw error;
        },
      );
    },
  };
}

/** Past the step that settles a denied call: nothing (that step never calls its next). */
const settledAlready: Terminal<ToolContext, ToolOutcome> = (ctx) => Promise.reject(new Error(`koagent: the call ${ctx.toolCallId} a human denied went past the approval step`));

/** `layers` around `terminal`, outermost first, each calling the next directly (as often as it likes). */
function around<C, T>(layers: readonly TrustedLayer<C, T>[], terminal: Terminal<C, T>): Terminal<C, T> {
  let inner = terminal;
  for (let i = layers.length - 1; i >= 0; i--) {
    const { fn } = layers[i];
    const next = inner;
    inner = (ctx) => fn(ctx, next);
  }
  return inner;
}

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
      segmentOf(ctx).recordPermission(ctx, { decision: 'deny', source: 'hook', hook: layer, reason: out.error.message });
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
