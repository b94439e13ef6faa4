// How the options of an agent's call become the request its segments run with: checked, the
// context made by the agent's contextSchema, the output schema settled for its provider.
import { z } from 'zod';
import type { ModelProvider } from '../core/vocabulary/model.js';
import type { RunState } from '../core/vocabulary/state.js';
import type { ChildRunOptions } from '../features/subagents/subagent-tool.js';
import { OUTPUT_STATE, outputPlan, type OutputPlan, type OutputSpec } from '../features/structured-output.js';
import { recordsLayers, streams } from './build.js';
import { checkCallOptions, type AgentOptions } from './options.js';
import type { SegmentRequest } from './run-segment.js';
import { hasEventLog } from '../stores/run-store.js';

/**
 * One agent's way from call options to a `SegmentRequest`: its own output schema, settled once,
 * and those its runs give of their own, settled once per schema given.
 */
export class CallRequests {
  /** The agent's own output schema, settled for its provider. */
  readonly output: OutputPlan | undefined;
  /** Output schemas runs gave of their own, settled, by the schema (or options object) given. */
  readonly #outputPlans = new WeakMap<object, OutputPlan>();
  readonly #provider: ModelProvider;
  /** The agent's options, whose `contextSchema` each call's context is made by (and whose store and `eventLog` a call's log goes by). */
  readonly #options: Pick<AgentOptions, 'output' | 'contextSchema' | 'store' | 'eventLog'>;
  /** The agent's name, for the error of a sub-agent whose context does not fit. */
  readonly #name: string;

  constructor(options: Pick<AgentOptions, 'output' | 'contextSchema' | 'store' | 'eventLog'>, provider: ModelProvider, name: string) {
    this.#options = options;
    this.#provider = provider;
    this.#name = name;
    this.output = options.output === undefined ? undefined : outputPlan(options.output, provider, 'createAgent: output');
  }

  /** The checked options of one call: its context fits `contextSchema`, its output schema is settled. */
  of(options: unknown, where: string, checkContext = true): SegmentRequest {
    const { output, stream: _stream, ...given } = checkCallOptions(options, where);
    const request: SegmentRequest = given;
    if (checkContext) request.context = this.context(request.context, `${where}: context does not fit the agent's contextSchema`);
    request.output = output === undefined ? this.output : this.#planFor(output as OutputSpec, where);
    this.#checkLog(request, where);
    return request;
  }

  /** A call whose events must be logged has a store that keeps a log: refused now, before anything is stored. */
  #checkLog(request: SegmentRequest, where: string): void {
    if ((request.eventLog ?? this.#options.eventLog) !== true) return;
    const store = request.store ?? this.#options.store;
    if (store === undefined) throw new TypeError(`${where}: eventLog needs a run store, where the log is kept: createAgent({ store }) or { store } in these options`);
    if (!hasEventLog(store)) throw new TypeError(`${where}: eventLog needs a store that keeps an event log, and this one (${store.kind}) does not; memoryStore(), sqliteStore() and postgresStore() do`);
  }

  #planFor(spec: OutputSpec, where: string): OutputPlan {
    let plan = this.#outputPlans.get(spec as object);
    if (plan === undefined) this.#outputPlans.set(spec as object, (plan = outputPlan(spec, this.#provider, `${where}: output`)));
    return plan;
  }

  /** The request of a run for a parent's tool call (see `asTool`): the parent's listeners, signal and layers, this agent's output schema. */
  child(options: ChildRunOptions): SegmentRequest {
    return {
      sessionId: options.sessionId,
      signal: options.signal,
      metadata: options.metadata,
      // The lead's context, or what its asTool made of it, checked against this agent's own contextSchema.
      context: this.context(options.context, `${this.#name}: the context it was given as a sub-agent does not fit its contextSchema (give asTool({ context }) to make one)`),
      output: this.output,
      listeners: options.listeners,
      permissionListeners: options.permissionListeners,
      streaming: streams(options.mode),
      // A traced lead's sub-agents record their calls into its trace; otherwise the sub-agent's own option decides.
      ...(recordsLayers(options.mode) ? { layerTrace: true } : {}),
      subagent: options.subagent,
      inherited: options.inherited,
      parentSpan: options.parentSpan,
    };
  }

  /** `context` as the agent's contextSchema makes it (as given, without one); `misfit` starts the error when it does not fit. */
  context(context: unknown, misfit: string): unknown {
    const schema = this.#options.contextSchema;
    if (schema === undefined) return context;
    const checked = schema.safeParse(context);
    if (!checked.success) throw new TypeError(`${misfit}:\n${z.prettifyError(checked.error)}`);
    return checked.data;
  }
}

/** A run started with an output schema of its own is continued only with it: why `request` cannot continue `state`, if it cannot. */
export function outputMissing(state: RunState, request: SegmentRequest): string | undefined {
  if (request.output !== undefined || state.hookState[OUTPUT_STATE] === undefined) return undefined;
  return `run ${state.runId} was started with an output schema; pass it again (agent.resume(state, decisions, { output }))`;
}
