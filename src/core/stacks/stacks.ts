import { compose } from './compose.js';
import type { Layer, LayerFn, ReturnCheck } from '../vocabulary/layer.js';
import type { ProviderCall, Stacks } from '../run/agent-core.js';
import { checkModel, checkRun, checkTool } from '../run/layer-returns.js';
import { endWatched } from '../run/end-watch.js';
import type { ModelContext, RunContext, ToolContext } from '../vocabulary/contexts.js';
import type { NamedMiddleware } from '../vocabulary/middleware.js';
import type { GenerateResult } from '../vocabulary/model.js';
import type { ToolOutcome } from '../vocabulary/outcome.js';
import type { RunResult } from '../vocabulary/result.js';

type ToolLayer = Layer<ToolContext, ToolOutcome>;
type Terminal<C, T> = (ctx: C) => Promise<T>;
/** koagent's own steps of the tool pipeline, as the build step made them (one nobody configured is left out). */
export interface ToolSteps {
  /** `present`: outermost, when some tool says how the model reads its results; `resolve`: the call checked again after the user layers. */
  present?: ToolLayer;
  validate: ToolLayer;
  resolve: ToolLayer;
  /** Between the user layers and execution: permissions, guardrails, approval. */
  policy: readonly ToolLayer[];
  /** How the approval step settles a call a human denied, alone: no user layer sees that call. */
  denial: ToolLayer;
  execute: Terminal<ToolContext, ToolOutcome>;
}

/** What every mode's stacks of an agent are made of: its layers, koagent's steps, the terminals. */
export interface StackParts {
  layers: readonly NamedMiddleware[];
  tool: ToolSteps;
  run: Terminal<RunContext, RunResult>;
  model: Terminal<ModelContext, GenerateResult>;
  provider: Terminal<ProviderCall, GenerateResult>;
}

/** Features' own layers for one mode, outermost first; `runInside` sits between the user's run layers and the loop. */
export interface StackFeatures {
  run?: readonly Layer<RunContext, RunResult>[];
  runInside?: readonly Layer<RunContext, RunResult>[];
  model?: readonly Layer<ModelContext, GenerateResult>[];
  tool?: readonly ToolLayer[];
  provider?: readonly Layer<ProviderCall, GenerateResult>[];
}

/** One hook point's layers, read once (a getter there runs now), each with the point's return check. */
function layersOf<C, T>(middleware: readonly NamedMiddleware[], point: 'run' | 'model' | 'tool', check: ReturnCheck<C, T>): Layer<C, T>[] {
  return middleware.flatMap((mw) => {
    const fn = mw[point] as LayerFn<C, T> | undefined;
    return fn === undefined ? [] : [{ name: mw.name, fn, self: mw.self, check }];
  });
}

/**
 * The tool pipeline's order: user layers that see raw calls and come first (criogen Hooks), then
 * validation, just before the first layer that needs a well-formed call; the other user layers;
 * the call checked again when some layer may have changed it; permissions, guardrails, approval;
 * execution.
 */
export function toolPipeline(middleware: readonly NamedMiddleware[], steps: ToolSteps, features: readonly ToolLayer[] = []): Terminal<ToolContext, ToolOutcome> {
  const withTool = middleware.filter((mw) => mw.tool !== undefined);
  const user = layersOf(withTool, 'tool', checkTool);
  const first = withTool.findIndex((mw) => mw.rawCalls !== true);
  const split = first === -1 ? user.length : first;
  const present = steps.present === undefined ? [] : [steps.present];
  const resolve = split < user.length ? [steps.resolve] : [];
  return compose([...features, ...present, ...user.slice(0, split), steps.validate, ...user.slice(split), ...resolve, ...steps.policy], steps.execute);
}

/** Build the stacks of one mode: the agent's parts, with that mode's features. */
export function buildStacks(parts: StackParts, features: StackFeatures): Stacks {
  const { layers } = parts;
  return {
    run: compose([...(features.run ?? []), ...endWatched(layersOf(layers, 'run', checkRun)), ...(features.runInside ?? [])], parts.run),
    model: compose([...(features.model ?? []), ...layersOf(layers, 'model', checkModel)], parts.model),
    tool: toolPipeline(layers, parts.tool, features.tool),
    // The approval step never calls next() for a denied call: nothing is past it.
    denied: compose([...(features.tool ?? []), parts.tool.denial], (ctx) => Promise.reject(new Error(`koagent: the call ${ctx.toolCallId} a human denied went past the approval step`))),
    provider: compose(features.provider ?? [], parts.provider),
  };
}
