// The agent's build step: the one place that turns options into the core's parts and wires each
// feature in as layers of the stacks (or stop conditions), so the core itself knows none of them.
import { DEFAULT_ARGUMENT_BOUNDS } from '../core/run/tool-call.js';
import type { Layer } from '../core/vocabulary/layer.js';
import type { InterruptPolicy, ModelContext, RunContext, Tool, ToolContext } from '../core/vocabulary/contexts.js';
import type { NamedMiddleware } from '../core/vocabulary/middleware.js';
import type { GenerateResult, ModelProvider } from '../core/vocabulary/model.js';
import { generateReply, ModelCallContext } from '../core/run/model-call.js';
import type { ToolOutcome } from '../core/vocabulary/outcome.js';
import type { RunResult } from '../core/vocabulary/result.js';
import { loopStep } from '../core/run/loop.js';
import { executeStep, executeStepWith, resolveStep, validateStep } from '../core/run/tool-steps.js';
import type { AgentCore, ProviderCall, Stacks } from '../core/run/agent-core.js';
import { buildStacks, type StackParts } from '../core/stacks/stacks.js';
import type { StopCondition } from '../core/vocabulary/state.js';
import { limitsReached, stepCountIs } from '../features/limits.js';
import { holdsStream, streamingProviderLayer, streamReleaseLayer } from '../features/streaming/stream-reply.js';
import { answeredCondition, endedOutputLayer, finalAnswerTool, outputLayer, responseFormatLayer, type OutputPlan } from '../features/structured-output.js';
import { providerSpanLayer, runSpanLayer, toolSpanLayer } from '../features/tracing.js';
import { traceCallLayers, tracedParts } from '../features/layer-trace/install.js';
import { recordingInvoke, recordModelLayer, recordProviderLayer, recordRunLayer } from '../features/recording/recording.js';
import { playbackExecute, playbackProviderLayer } from '../features/recording/playback.js';
import { approvalStep, humanDenialStep } from '../tools/approval.js';
import { guardrailsStep } from '../tools/guardrails.js';
import { modelOutputStep } from '../tools/model-output.js';
import { mayAsk, permissionsStep } from '../tools/permissions.js';
import type { ToolIndex } from '../tools/toolset.js';
import type { AgentOptions } from './options.js';

/** What the build step starts from: the agent's options, its model and tools, its layers. */
export interface BuildInput {
  id: string;
  name: string;
  options: AgentOptions;
  provider: ModelProvider;
  tools: ToolIndex;
  /** The user layers, outermost first: a parent agent's inherited ones, then the agent's own. */
  layers: readonly NamedMiddleware[];
  /** The run's final answer must fit this (the agent's `output`, or one run's). */
  output?: OutputPlan;
}

/**
 * A segment's mode, as the build step gives it meaning: each bit a feature whose layers the
 * stacks of that mode have. The core only passes a mode on, and picks the stacks by it.
 */
const STREAMING = 1;
const TRACING = 2;
const LAYER_TRACE = 4;
const REPLAY = 8;

/**
 * The mode of a segment that streams (`agent.stream`), is traced (its run span records), records
 * its layer trace (and, with it, the world: replies and results), replays a stored run, or any of these.
 */
export function segmentMode(streaming: boolean, tracing: boolean, layerTrace = false, replaying = false): number {
  return (streaming ? STREAMING : 0) | (tracing ? TRACING : 0) | (layerTrace || replaying ? LAYER_TRACE : 0) | (replaying ? REPLAY : 0);
}

/** Whether a segment of `mode` records its layer trace (a traced run's sub-agents do too). */
export function recordsLayers(mode: number): boolean {
  return (mode & LAYER_TRACE) !== 0;
}

/** Whether a segment of `mode` streams (a streamed run's sub-agents stream too). */
export function streams(mode: number): boolean {
  return (mode & STREAMING) !== 0;
}

/** Build what the core runs an agent with. Stacks are composed per mode, on first use. */
export function buildAgent(input: BuildInput): AgentCore {
  const { options: o, layers, output } = input;
  const tools = output?.mode === 'tool' ? withFinalAnswer(input.tools, output) : input.tools;
  const all: Tool[] = [...tools.own.values()];
  // A step nobody configured is left out, so an agent pays only for what it uses. A toolset's
  // tools are known only at run time, so with one the steps its tools may need are all there.
  const dynamic = tools.hasToolsets;
  // Without a toolset the tools never change: a plain map and a fixed list cost nothing per call.
  const lookup: ReadonlyMap<string, Tool> = dynamic ? tools : tools.own;
  const policy: Layer<ToolContext, ToolOutcome>[] = [];
  if (o.permissions !== undefined || o.onPermissionDecision !== undefined) policy.push(permissionsStep(o.permissions));
  if (dynamic || all.some((t) => t.guardrails.input.length + t.guardrails.output.length > 0)) policy.push(guardrailsStep);
  if (dynamic || all.some((t) => t.needsApproval !== undefined && t.needsApproval !== false) || mayAsk(o.permissions)) policy.push(approvalStep);
  const held = holdsStream(layers);
  // A layer that keeps values out of the trace keeps them out of the record of the world too.
  const withholds = layers.some((mw) => mw.traceValues === false);
  const base: StackParts = {
    layers,
    tool: { validate: validateStep(lookup), resolve: resolveStep(lookup), policy, denial: humanDenialStep, execute: executeStep, ...(dynamic || all.some((t) => t.toModelOutput !== undefined) ? { present: modelOutputStep } : {}) },
    run: loopStep,
    model: ModelCallContext.terminal,
    provider: generateReply,
  };
  // With an output schema: the answer checked innermost, so every run layer sees the checked
  // one, and an output a run layer ended the run with checked outermost.
  const outputLayers = output === undefined ? {} : { run: [endedOutputLayer(output)], runInside: [outputLayer(output)] };
  const built = new Map<number, Stacks>();
  const core: AgentCore = {
    id: input.id,
    name: input.name,
    provider: input.provider,
    toolSpecs: [...lookup.values()].map((t) => t.spec),
    modelSettings: o.modelSettings ?? {},
    toolConcurrency: o.toolConcurrency ?? Infinity,
    argumentBounds: { ...DEFAULT_ARGUMENT_BOUNDS, ...o.toolArguments },
    stopWhen: [...(output?.mode === 'tool' ? [answeredCondition(output)] : []), ...stopConditions(o)],
    onToolException: o.onToolException ?? 'model',
    interruptPolicy: (name) => interruptPolicy(lookup.get(name)),
    logger: o.logger ?? console,
    layers,
    stacks(mode) {
      let stacks = built.get(mode);
      if (stacks === undefined) {
        const tracing = (mode & TRACING) !== 0;
        const streaming = streams(mode);
        const layerTrace = recordsLayers(mode);
        // A replay answers from a record and records none; a traced segment records the world.
        const replaying = (mode & REPLAY) !== 0;
        const recording = layerTrace && !replaying;
        // Pushed, not spread: spreading these small arrays cost more than composing the stacks.
        const model: Layer<ModelContext, GenerateResult>[] = [];
        if (layerTrace) model.push(traceCallLayers.model);
        if (recording) model.push(recordModelLayer);
        if (output?.mode === 'native') model.push(responseFormatLayer(output));
        if (streaming) model.push(streamReleaseLayer);
        const provider: Layer<ProviderCall, GenerateResult>[] = [];
        if (recording) provider.push(recordProviderLayer);
        if (replaying) provider.push(playbackProviderLayer);
        if (tracing) provider.push(providerSpanLayer);
        if (streaming) provider.push(streamingProviderLayer(held));
        const tool: Layer<ToolContext, ToolOutcome>[] = [];
        if (tracing) tool.push(toolSpanLayer);
        if (layerTrace) tool.push(traceCallLayers.tool);
        // The run span outermost (it sees how the segment ended), then the trace's record.
        const run: Layer<RunContext, RunResult>[] = [];
        if (tracing) run.push(runSpanLayer);
        if (layerTrace) run.push(traceCallLayers.run);
        if (recording) run.push(recordRunLayer(withholds));
        run.push(...(outputLayers.run ?? []));
        const parts = recording || replaying ? { ...base, tool: { ...base.tool, execute: replaying ? playbackExecute : executeStepWith(recordingInvoke) } } : base;
        stacks = buildStacks(layerTrace ? tracedParts(parts) : parts, { ...outputLayers, run, model, tool, provider });
        built.set(mode, stacks);
      }
      return stacks;
    },
  };
  // Read at each model turn: a toolset's tools of the moment.
  if (dynamic) Object.defineProperty(core, 'toolSpecs', { get: () => tools.specs, enumerable: true });
  return core;
}

/** `maxSteps`, `limits` and `stopWhen`, as the stop conditions the loop checks in that order. */
function stopConditions(o: AgentOptions): StopCondition[] {
  const conditions = [stepCountIs(o.maxSteps ?? 20)];
  if (o.limits !== undefined) conditions.push(limitsReached(o.limits));
  if (o.stopWhen !== undefined) conditions.push(...(Array.isArray(o.stopWhen) ? o.stopWhen : [o.stopWhen]));
  return conditions;
}

/** A tool's interruption policy, as declared: `rerun` for an idempotent tool, else `report` (an unknown tool: `report`). */
function interruptPolicy(tool: Tool | undefined): InterruptPolicy {
  return tool?.onInterrupted ?? (tool?.idempotent === true ? 'rerun' : 'report');
}

/** The agent's tools and the final-answer tool of tool-mode structured output. */
function withFinalAnswer(tools: ToolIndex, output: OutputPlan): ToolIndex {
  if (tools.own.has(output.name)) throw new TypeError(`createAgent: a tool is named "${output.name}", the name of the final-answer tool of the output schema; give the output another name ({ schema, name })`);
  return tools.withOwn(finalAnswerTool(output));
}
