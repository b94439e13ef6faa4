import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Tool } from '../core/vocabulary/contexts.js';
import { KoagentError } from '../core/vocabulary/errors.js';
import { inputMessages, type Message, type RunInput } from '../core/vocabulary/messages.js';
import type { Middleware, NamedMiddleware } from '../core/vocabulary/middleware.js';
import { isModelProvider, type ModelProvider } from '../core/vocabulary/model.js';
import type { RunResult } from '../core/vocabulary/result.js';
import { nextSegment } from '../core/state/resume.js';
import type { AgentCore } from '../core/run/agent-core.js';
import { newRunId, newState, type AgentIdentity, type ApprovalDecision, type RunState } from '../core/vocabulary/state.js';
import { startingTranscript } from '../core/state/transcript-writer.js';
import type { RunStore } from '../stores/run-store.js';
import type { AgentHook } from '../dialects/agent-hook/agent-hook.js';
import type { Hook } from '../dialects/criogen/types.js';
import type { AgentStream } from '../features/streaming/agent-stream.js';
import { inheritable, subagentTool, type ChildRunOptions, type SubagentToolOptions } from '../features/subagents/subagent-tool.js';
import type { OutputOptionsOf, OutputPlan, OutputSpec } from '../features/structured-output.js';
import { compactionMiddleware } from '../middleware/compaction-middleware.js';
import { closeToolsets, ToolIndex, type Toolset } from '../tools/toolset.js';
import { buildAgent } from './build.js';
import { AgentCores } from './cores.js';
import { AgentStore } from '../durable/agent-store.js';
import { runSegment, type SegmentRequest } from './run-segment.js';
import { CallRequests, outputMissing } from './call-requests.js';
import { extension, toMiddleware, type Extension, type ExtensionShape } from './extensions.js';
import { claimSegment } from '../durable/resume-claim.js';
import { OwnSession } from './own-session.js';
import { ADMIN, type AgentAdmin } from './admin.js';
import { prepareInput, preparesInput } from './input-layers.js';
import { later, streamedCall, wantsStream } from './streamed-call.js';
import { AgentRuns } from './agent-runs.js';
import { sessionWithoutStore, type SendOptions } from './durable-options.js';
import { checkOptions, hookList, modelFromString, toolMap, toolsFingerprint, type AgentOptions, type RunCallOptions } from './options.js';

/**
 * An agent: its options and its composed stacks. It starts run segments, keeps its own session
 * for `send`, and offers itself as another agent's tool. The loop lives in the core.
 *
 * @example const agent = new Agent({ model, tools }).use(logTools);
 *          const { text } = await agent.send('Hello');
 */
export class Agent<C = unknown, O = unknown> {
  readonly id: string;
  readonly name: string;
  readonly #options: AgentOptions<C, O>;
  /** How this agent's calls become segment requests, with its own output schema, settled. */
  readonly #requests: CallRequests;
  readonly #provider: ModelProvider;
  readonly #tools: ToolIndex;
  readonly #toolsets: readonly Toolset[];
  /** The toolsets' own layers, outermost in every run of this agent. */
  readonly #toolsetLayers: Extension[];
  /** Who this agent's runs belong to: a state is resumed only by an agent with the same identity. */
  readonly #identity: AgentIdentity;
  readonly #extensions: Extension[] = [];
  readonly #cores: AgentCores;
  readonly #session: OwnSession;
  /** Segments this agent object resumed, so it never resumes one twice (unless `claimResume` or a store decides). */
  readonly #resumed = new Set<string>();
  /** Which store each call uses, and this agent object as a worker holding leases in it. */
  readonly #stored: AgentStore;
  /**
   * The administration of this agent's stored runs: `recover`, `recoverable`,
   * `pendingApprovals`, `adopt` and `adoptState` (see `AgentRuns`).
   *
   * @example const recovered = await agent.runs.recover();
   */
  readonly runs: AgentRuns<C>;

  constructor(options: AgentOptions<C, O>) {
    checkOptions(options);
    this.#options = options;
    this.name = options.name ?? 'agent';
    this.id = options.id ?? this.name;
    const given = options.model ?? options.provider;
    const provider = typeof given === 'string' ? modelFromString(given) : given;
    if (!isModelProvider(provider)) {
      throw new TypeError("createAgent: `model` must be a model provider (an object with generate(request)), e.g. mockModel([...]) from koagent/testing, or a model string such as 'openai:gpt-5-mini'");
    }
    this.#provider = provider;
    this.#requests = new CallRequests(options, provider, this.name);
    const { own, toolsets } = toolMap(options.tools ?? []);
    this.#tools = new ToolIndex(own, toolsets, options.logger ?? console);
    this.#toolsets = toolsets;
    this.#toolsetLayers = toolsets.flatMap((set) => (set.middleware === undefined ? [] : [extension(set.middleware, `createAgent({ tools }): toolset "${set.name}"`)]));
    // A toolset's tools are known only at run time, so the fingerprint is of the agent's own.
    this.#identity = { name: this.name, id: this.id, toolsFingerprint: toolsFingerprint(own) };
    this.#stored = new AgentStore(options.store, this.#identity, options.logger ?? console);
    this.runs = new AgentRuns<C>({ identity: this.#identity, stored: this.#stored, requests: this.#requests, continue: (state, request) => this.#segment(state, [], request, true) });
    this.#cores = new AgentCores((inherited, output) => this.#build(inherited, output), this.#requests.output);
    for (const ext of options.middleware ?? []) this.#add(ext, 'createAgent({ middleware })');
    for (const hook of hookList(options.hooks)) this.#add(hook, 'createAgent({ hooks })');
    this.#session = new OwnSession(this.#opening());
    this.#cores.for(undefined); // builds the stacks' parts now, so a bad option fails here rather than at the first run
  }

  /**
   * Add a middleware, or a hook of either dialect (innermost so far). Returns the agent, so calls
   * chain. A middleware is an object (`{ name, tool(ctx, next) { … } }`), never a bare function.
   */
  use<M extends Middleware<C> | AgentHook | Hook>(middleware: M & ExtensionShape<M, C>): this {
    this.#add(middleware, 'agent.use()');
    return this;
  }

  #add(value: unknown, where: string): void {
    this.#extensions.push(extension(value, where));
    this.#cores.clear();
  }

  /** The tools this agent offers now, by name: its own, and its toolsets' of the moment. */
  get tools(): ReadonlyMap<string, Tool> {
    return this.#tools;
  }

  /**
   * Let go of what the agent's toolsets hold: their connections and the processes they started
   * (an MCP server's). A later run opens them again.
   *
   * @example try { await agent.run('Tidy the folder'); } finally { await agent.close(); }
   */
  close(): Promise<void> {
    return closeToolsets(this.#toolsets, 'agent.close()');
  }

  /**
   * This agent as a tool of another (a sub-agent). Inside it, the lead agent's middleware and
   * hooks run too (outermost; `scope: 'lead-only'` ones do not), with `ctx.subagent` set.
   *
   * @example const lead = createAgent({ model, tools: [researcher.asTool({ description: 'Researches a topic' })] });
   */
  asTool(options: SubagentToolOptions<C>): Tool {
    return subagentTool({ name: this.name, structured: this.#requests.output !== undefined, runChild: (input, resume, child) => this.#child(input, resume, child) }, options);
  }

  /**
   * Start a new run with a fresh transcript. With `{ output }`, this run's final answer must fit
   * that schema (in place of the agent's `output`), and `result.output` is its value. With
   * `{ stream: true }`, it returns an `AgentStream` of the run (as `agent.stream`).
   */
  run<S extends z.ZodType>(input: RunInput, options: RunCallOptions<C> & { stream: true; output: S | OutputOptionsOf<S> }): AgentStream<RunResult<z.output<S>>>;
  run(input: RunInput, options: RunCallOptions<C> & { stream: true }): AgentStream<RunResult<O>>;
  run<S extends z.ZodType>(input: RunInput, options: RunCallOptions<C> & { stream?: false; output: S | OutputOptionsOf<S> }): Promise<RunResult<z.output<S>>>;
  run(input: RunInput, options?: RunCallOptions<C> & { stream?: false }): Promise<RunResult<O>>;
  run(input: RunInput, options: RunCallOptions<C> & { output?: OutputSpec } = {}): Promise<RunResult<any>> | AgentStream<RunResult<any>> {
    return this.#run(input, options, 'agent.run(input, options)');
  }

  #run(input: RunInput, options: unknown, where: string): Promise<RunResult<any>> | AgentStream<RunResult<any>> {
    if (wantsStream(options)) return streamedCall(this.#requests.of(options, where), (request) => this.#fresh(input, request));
    // Later, so bad input rejects the returned promise like every other failure of a run.
    return later(() => this.#fresh(input, this.#requests.of(options, where)));
  }

  #fresh(input: RunInput, request: SegmentRequest): Promise<RunResult<any>> {
    const added = this.#prepared(inputMessages(input), request);
    return Array.isArray(added) ? this.#freshWith(added, request) : added.then((prepared) => this.#freshWith(prepared, request));
  }

  /** A new run's input as the layers that prepare input (redaction) make it, before the state or a store records it; at once when none does. */
  #prepared(input: Message[], request: SegmentRequest): Message[] | Promise<Message[]> {
    const { layers } = this.#cores.for(request.inherited, request.output);
    return preparesInput(layers) ? prepareInput(layers, input) : input;
  }

  #freshWith(added: Message[], request: SegmentRequest): Promise<RunResult<any>> {
    const state = newState(request.runId ?? newRunId(), request.sessionId ?? `session_${randomUUID()}`, this.#identity, startingTranscript(this.#opening(), added));
    const store = this.#stored.for(request);
    if (store === undefined) return this.#segment(state, added, request, false);
    return this.#stored.start(store, state).then((durable) => this.#segment(state, added, { ...request, durable }, false));
  }

  /**
   * Start a new run and watch it as it happens: text deltas and every event. Breaking out of
   * the iteration cancels the run. With `sessionId`, the run is that session's next turn, as
   * `send(input, { sessionId, stream: true })`: the model gets the session's history.
   *
   * @example for await (const e of agent.stream('Hi')) if (e.type === 'text.delta') process.stdout.write(e.delta);
   */
  stream<S extends z.ZodType>(input: RunInput, options: Omit<RunCallOptions<C>, 'stream'> & { output: S | OutputOptionsOf<S> }): AgentStream<RunResult<z.output<S>>>;
  stream(input: RunInput, options?: Omit<RunCallOptions<C>, 'stream'>): AgentStream<RunResult<O>>;
  stream(input: RunInput, options: Omit<RunCallOptions<C>, 'stream'> & { output?: OutputSpec } = {}): AgentStream<RunResult<any>> {
    const where = 'agent.stream(input, options)';
    if ((options as RunCallOptions | undefined)?.stream === false) throw new TypeError(`${where}: stream: false is for run, send, resume and runs.recover; agent.stream() always streams (use agent.run() for a promise of the result)`);
    const streaming = { ...options, stream: true };
    if (typeof options === 'object' && options !== null && options.sessionId !== undefined) return this.#send(input, streaming, where) as AgentStream<RunResult<any>>;
    return this.#run(input, streaming, where) as AgentStream<RunResult<any>>;
  }

  /**
   * Continue a session: its history plus `input`. Without a store, the agent's own session (in
   * this object's memory). With a store, the session `sessionId` (default: the agent's own) as
   * the store holds it: its latest run's transcript, so a conversation survives restarts.
   * With `{ stream: true }`, it returns an `AgentStream` of the turn.
   */
  send(input: RunInput, options: SendOptions<C> & { stream: true; output?: OutputSpec }): AgentStream<RunResult<O>>;
  send(input: RunInput, options?: SendOptions<C> & { stream?: false; output?: OutputSpec }): Promise<RunResult<O>>;
  send(input: RunInput, options: SendOptions<C> & { output?: OutputSpec } = {}): Promise<RunResult<O>> | AgentStream<RunResult<O>> {
    return this.#send(input, options, 'agent.send(input, options)');
  }

  #send(input: RunInput, options: unknown, where: string): Promise<RunResult<any>> | AgentStream<RunResult<any>> {
    if (!wantsStream(options)) return later(() => this.#sendWith(inputMessages(input), this.#requests.of(options, where), where));
    const request = this.#requests.of(options, where);
    this.#sessionStore(request, where); // a misuse throws now, as every refused option or input of a stream does
    const added = inputMessages(input);
    return streamedCall(request, (streaming) => this.#sendWith(added, streaming, where));
  }

  /** The store a `send` continues its session in; a `sessionId` without one is refused, naming what to use. */
  #sessionStore(request: SegmentRequest, where: string): RunStore | undefined {
    const store = this.#stored.for(request);
    if (store === undefined && request.sessionId !== undefined) throw sessionWithoutStore(where);
    return store;
  }

  async #sendWith(input: Message[], request: SegmentRequest, where: string): Promise<RunResult<any>> {
    const store = this.#sessionStore(request, where);
    const added = await this.#prepared(input, request);
    if (store === undefined) return this.#session.turn(added, (messages) => this.#segment(newState(request.runId ?? newRunId(), this.#session.id, this.#identity, messages), added, request, false));
    const sessionId = request.sessionId ?? this.#session.id;
    const { state, durable } = await this.#stored.startSession(store, sessionId, () => this.#opening(), added, request.runId);
    return this.#segment(state, added, { ...request, sessionId, durable }, false);
  }

  /**
   * Continue a run: a suspended one with a decision for each pending approval, or a failed one
   * (a retry, no decisions). Starts a new segment; no completed tool call runs again. With a
   * store, pass the run's id (or its state): the store's copy continues, and the claim goes
   * through the store, so exactly one resume of a segment goes ahead in any process. With
   * `{ stream: true }`, it returns an `AgentStream` of the segment.
   */
  resume(state: RunState | string, decisions: Record<string, ApprovalDecision>, options: RunCallOptions<C> & { stream: true; output?: OutputSpec }): AgentStream<RunResult<O>>;
  resume(state: RunState | string, decisions?: Record<string, ApprovalDecision>, options?: RunCallOptions<C> & { stream?: false; output?: OutputSpec }): Promise<RunResult<O>>;
  resume(state: RunState | string, decisions: Record<string, ApprovalDecision> = {}, options: RunCallOptions<C> & { output?: OutputSpec } = {}): Promise<RunResult<O>> | AgentStream<RunResult<O>> {
    const where = 'agent.resume(state, decisions, options)';
    if (wantsStream(options)) return streamedCall(this.#requests.of(options, where), (request) => this.#resume(state, decisions, request));
    return later(() => this.#resume(state, decisions, this.#requests.of(options, where)));
  }

  // async, so every misuse rejects; all checks run before anything else.
  async #resume(state: RunState | string, decisions: Record<string, ApprovalDecision>, request: SegmentRequest): Promise<RunResult<any>> {
    if (request.runId !== undefined) throw new TypeError('agent.resume(state, decisions, options): runId names the run a run() or send() starts; the run to resume is the first argument');
    const store = this.#stored.for(request);
    if (store !== undefined) {
      const claimed = await this.#stored.claim(store, state, decisions, (next) => outputMissing(next, request));
      return this.#segment(claimed.state, [], { ...request, durable: claimed.durable }, true);
    }
    if (typeof state === 'string') {
      throw new KoagentError('invalid_resume', `resume(state): state is not an object but the string ${JSON.stringify(state)}; pass the \`state\` of a RunResult or of a RunFailedError, or, to resume a run by its id, give the agent a run store (createAgent({ store }))`);
    }
    const next = nextSegment(state, decisions, this.#identity);
    const missing = outputMissing(next, request);
    if (missing !== undefined) throw new KoagentError('invalid_resume', `agent.resume(): ${missing}`);
    await claimSegment(next, this.#options.claimResume, this.#resumed);
    return this.#segment(next, [], request, true);
  }

  /** Run this agent for a parent's tool call (see `asTool`): a new run, or the one the call suspended with. */
  #child(input: string, resume: { state: RunState; decisions: Record<string, ApprovalDecision> } | undefined, options: ChildRunOptions): Promise<RunResult> {
    const request = this.#requests.child(options);
    return resume === undefined ? this.#fresh(input, request) : this.#resume(resume.state, resume.decisions, request);
  }

  #opening(): Message[] {
    const { instructions } = this.#options;
    return instructions === undefined ? [] : [{ role: 'system', content: instructions }];
  }

  #build(inherited: readonly NamedMiddleware[], output: OutputPlan | undefined): AgentCore {
    const own = toMiddleware([...this.#toolsetLayers, ...this.#extensions]);
    // Compaction is the innermost layer, so it sees what the user's hooks and middleware added.
    if (this.#options.compaction !== undefined) own.push(compactionMiddleware(this.#options.compaction));
    return buildAgent({ id: this.id, name: this.name, options: this.#options as AgentOptions, provider: this.#provider, tools: this.#tools, layers: [...inheritable(inherited), ...own], output });
  }

  /** @internal How `koagent/replay` forks and replays this agent's runs (see `AgentAdmin`); applications call `fork` and `replay`. */
  [ADMIN](): AgentAdmin {
    const start = async (state: RunState, request: SegmentRequest, store: RunStore | undefined, resumed: boolean) => this.#segment(state, [], store === undefined ? request : { ...request, durable: await this.#stored.start(store, state) }, resumed);
    const withLayers = (layers: readonly unknown[], where: string) => {
      const twin = new Agent(this.#options);
      twin.#extensions.splice(0, twin.#extensions.length, ...this.#extensions, ...layers.map((layer) => extension(layer, where)));
      twin.#cores.clear();
      return twin[ADMIN]();
    };
    return { identity: this.#identity, start, continue: (state, request) => this.#segment(state, [], request, true), adopt: (state) => this.runs.adoptState(state), store: ((given: RunStore | undefined, what?: string) => (what === undefined ? this.#stored.for({ store: given }) : this.#stored.require({ store: given }, what))) as AgentAdmin['store'], request: (options, where) => this.#requests.of(options, where), withLayers };
  }

  async #segment(state: RunState, input: Message[], request: SegmentRequest, resumed: boolean): Promise<RunResult<any>> {
    try {
      return await runSegment(this.#cores.for(request.inherited, request.output), state, input, request, resumed, this.#options as AgentOptions);
    } finally {
      this.#session.remember(state);
    }
  }
}

/**
 * `new Agent(options)`, as a function.
 *
 * @example const agent = createAgent({ instructions: 'You help.', model: mockModel(['Hi!']) });
 */
export function createAgent<C = unknown, O = unknown>(options: AgentOptions<C, O>): Agent<C, O> {
  return new Agent(options);
}
