import { randomUUID } from 'node:crypto';
import type { RunContext } from './context.js';
import { describe, KoagentError, runFailure } from './errors.js';
import type { EventListener } from './events.js';
import { inputMessages, type Message, type RunInput } from './messages.js';
import type { AgentHook } from './dialects/agent-hook.js';
import type { Hook } from './dialects/criogen.js';
import { extension, toMiddleware, type Extension } from './extensions.js';
import type { Middleware } from './middleware.js';
import { isModelProvider, type ModelProvider } from './model.js';
import { checkOptions, hookList, toolMap, type AgentOptions, type RunCallOptions } from './options.js';
import { resolveModel } from './providers/registry.js';
import type { RunResult } from './result.js';
import { linkSignal, Run, type AgentSetup } from './run.js';
import { buildStacks, type NamedMiddleware } from './stacks.js';
import { AgentStream } from './stream.js';
import { endRunSpan, type Span } from './tracing.js';
import { subagentTool, type SubagentToolOptions } from './subagent.js';
import { compactionMiddleware } from './middleware/compaction-middleware.js';
import type { SubagentInfo } from './context.js';
import { nextSegment, segmentKey } from './resume.js';
import { newState, type ApprovalDecision, type RunState } from './state.js';
import type { Tool } from './tools/define.js';
import { toolError } from './tools/outcome.js';
import { toolMessage } from './tools/turn.js';

/** Key of the method a parent's sub-agent tool calls to run this agent. */
export const SUBAGENT = Symbol('koagent.subagent');

/**
 * An agent: options and composed stacks. The loop lives apart (`loop.ts`); the agent starts run
 * segments and keeps its own session for `send`.
 *
 * @example const agent = new Agent({ model, tools }).use(logTools);
 *          const { text } = await agent.send('Hello');
 */
export class Agent {
  readonly id: string;
  readonly name: string;
  readonly #options: AgentOptions;
  readonly #provider: ModelProvider;
  readonly #tools: ReadonlyMap<string, Tool>;
  readonly #extensions: Extension[] = [];
  #setup?: AgentSetup;
  /** Setups with a parent agent's layers outermost, one per parent setup (for sub-agent runs). */
  #inheritedSetups = new WeakMap<readonly NamedMiddleware[], AgentSetup>();
  readonly #session: { id: string; messages: Message[]; busy: boolean; state?: RunState };
  /** Segments this agent object resumed, so it never resumes one twice (unless `claimResume` decides). */
  readonly #resumed = new Set<string>();

  constructor(options: AgentOptions) {
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
    this.#tools = toolMap(options.tools ?? []);
    for (const ext of options.middleware ?? []) this.#add(ext, 'createAgent({ middleware })');
    for (const hook of hookList(options.hooks)) this.#add(hook, 'createAgent({ hooks })');
    this.#session = { id: `session_${randomUUID()}`, messages: this.#opening(), busy: false };
    this.#getSetup(); // builds the stacks now, so a bad option fails here rather than at the first run
  }

  /** Add a middleware, or a hook of either dialect (innermost so far). Returns the agent, so calls chain. */
  use(middleware: Middleware | AgentHook | Hook): this {
    this.#add(middleware, 'agent.use()');
    return this;
  }

  #add(value: unknown, where: string): void {
    this.#extensions.push(extension(value, where));
    this.#setup = undefined;
    this.#inheritedSetups = new WeakMap();
  }

  /** The tools this agent offers, by name. */
  get tools(): ReadonlyMap<string, Tool> {
    return this.#tools;
  }

  /**
   * This agent as a tool of another (a sub-agent). Inside it, the lead agent's middleware and
   * hooks run too (outermost; `scope: 'lead-only'` ones do not), with `ctx.subagent` set.
   *
   * @example const lead = createAgent({ model, tools: [researcher.asTool({ description: 'Researches a topic' })] });
   */
  asTool(options: SubagentToolOptions): Tool {
    return subagentTool(this, options);
  }

  /** Start a new run with a fresh transcript. */
  async run(input: RunInput, options: RunCallOptions = {}): Promise<RunResult> {
    // async, so bad input rejects the returned promise like every other failure of a run
    return this.#fresh(input, options);
  }

  #fresh(input: RunInput, options: SegmentOptions): Promise<RunResult> {
    const added = inputMessages(input);
    const state = newState(`run_${randomUUID()}`, options.sessionId ?? `session_${randomUUID()}`, this.name, [...this.#opening(), ...added]);
    return this.#segment(state, added, options, false);
  }

  /**
   * Start a new run and watch it as it happens: text deltas and every event. Breaking out of
   * the iteration cancels the run.
   *
   * @example for await (const e of agent.stream('Hi')) if (e.type === 'text.delta') process.stdout.write(e.delta);
   */
  stream(input: RunInput, options: RunCallOptions = {}): AgentStream {
    const controller = new AbortController();
    const outer = options.signal;
    const unlink = linkSignal(outer, controller);
    return new AgentStream(
      (listener) => {
        let done: Promise<RunResult>;
        try {
          done = this.#fresh(input, { ...options, signal: controller.signal, streaming: true, listeners: [listener] });
        } catch (error) {
          unlink(); // refused input: no run will ever stop listening to the caller's signal
          throw error;
        }
        done.finally(unlink).catch(() => undefined);
        return done;
      },
      (reason) => controller.abort(reason),
    );
  }

  /** @internal Run this agent for a parent's tool call (see `asTool`). */
  [SUBAGENT](input: RunInput | undefined, resume: { state: RunState; decisions: Record<string, ApprovalDecision> } | undefined, options: SegmentOptions): Promise<RunResult> {
    if (resume !== undefined) return this.#resume(resume.state, resume.decisions, options);
    return this.#fresh(input ?? [], options);
  }

  /** Continue the agent's own session: its history plus `input`. */
  async send(input: RunInput, options: Omit<RunCallOptions, 'sessionId'> = {}): Promise<RunResult> {
    const session = this.#session;
    if (session.busy) throw new KoagentError('session_busy', 'agent.send(): the previous send() has not finished; await it first (or use agent.run() for independent runs)');
    if (session.state?.status === 'suspended') {
      throw new KoagentError('session_busy', 'agent.send(): the last run is waiting for approval; finish it with agent.resume(result.state, decisions) first');
    }
    const added = inputMessages(input);
    // One copy per send, so an earlier result's transcript is not changed by this one.
    const messages = session.messages.slice();
    closeUnsettledCalls(messages);
    messages.push(...added);
    session.busy = true;
    try {
      const state = newState(`run_${randomUUID()}`, session.id, this.name, messages);
      return await this.#segment(state, added, options, false);
    } finally {
      session.busy = false;
    }
  }

  /**
   * Continue a run: a suspended one with a decision for each pending approval, or a failed one
   * (a retry, no decisions). Starts a new segment; no completed tool call runs again.
   */
  resume(state: RunState, decisions: Record<string, ApprovalDecision> = {}, options: RunCallOptions = {}): Promise<RunResult> {
    return this.#resume(state, decisions, options);
  }

  // async, so every misuse rejects; all checks run before anything else.
  async #resume(state: RunState, decisions: Record<string, ApprovalDecision>, options: SegmentOptions): Promise<RunResult> {
    const next = nextSegment(state, decisions, this.name);
    await this.#claim(next);
    return this.#segment(next, [], options, true);
  }

  /** Make sure no other resume of this segment went ahead: `claimResume` decides, else this object's memory. */
  async #claim(state: RunState): Promise<void> {
    const { runId, segment, agentName, sessionId } = state;
    const claim = this.#options.claimResume;
    const refused = (how: string) => new KoagentError('invalid_resume', `agent.resume(): ${how}; continue from the state that resume returned`);
    if (claim === undefined) {
      const key = segmentKey(state);
      if (this.#resumed.has(key)) throw refused(`this state (run ${runId}, segment ${segment}) was already resumed`);
      this.#resumed.add(key);
      return;
    }
    let claimed: unknown;
    try {
      claimed = await claim({ runId, segment, agentName, sessionId });
    } catch (error) {
      throw new KoagentError('invalid_resume', `agent.resume(): claimResume threw (${describe(error)}), so run ${runId} was not resumed; try again when the claim store answers`, { cause: error });
    }
    if (claimed !== true) throw refused(`claimResume answered ${JSON.stringify(claimed)} for run ${runId}, segment ${segment}: it was already resumed (return true to go ahead)`);
  }

  #opening(): Message[] {
    const { instructions } = this.#options;
    return instructions === undefined ? [] : [{ role: 'system', content: instructions }];
  }

  #getSetup(): AgentSetup {
    return (this.#setup ??= this.#build([]));
  }

  /** The setup for a run: its own, or, inside a parent agent's run, with the parent's layers outermost. */
  #setupFor(inherited: readonly NamedMiddleware[] | undefined): AgentSetup {
    if (inherited === undefined || inherited.length === 0) return this.#getSetup();
    let setup = this.#inheritedSetups.get(inherited);
    if (setup === undefined) this.#inheritedSetups.set(inherited, (setup = this.#build(inherited)));
    return setup;
  }

  #build(inherited: readonly NamedMiddleware[]): AgentSetup {
    const o = this.#options;
    const own = toMiddleware(this.#extensions);
    // Compaction is the innermost layer, so it sees what the user's hooks and middleware added.
    if (o.compaction !== undefined) own.push(compactionMiddleware(o.compaction));
    const layers = [...inherited, ...own];
    return {
      agentId: this.id,
      agentName: this.name,
      provider: this.#provider,
      tools: this.#tools,
      toolSpecs: [...this.#tools.values()].map((t) => t.spec),
      maxSteps: o.maxSteps ?? 20,
      toolConcurrency: o.toolConcurrency ?? Infinity,
      modelSettings: o.modelSettings ?? {},
      limits: o.limits ?? {},
      stacks: buildStacks(layers, this.#tools, { permissions: o.permissions, recordDecisions: o.onPermissionDecision !== undefined }),
      holdsStream: layers.some((mw) => mw.holdStream === true && mw.model !== undefined),
      inheritable: [...inherited, ...own.filter((mw) => mw.scope !== 'lead-only')],
      onPermissionDecision: o.onPermissionDecision,
      onToolException: o.onToolException ?? 'model',
      logger: o.logger ?? console,
    };
  }

  async #segment(state: RunState, input: Message[], options: SegmentOptions, resumed: boolean): Promise<RunResult> {
    const setup = this.#setupFor(options.inherited);
    const listeners: EventListener[] = [...(options.listeners ?? [])];
    if (this.#options.onEvent) listeners.push(this.#options.onEvent);
    if (options.onEvent) listeners.push(options.onEvent);
    state.segment++;
    state.status = 'running';
    delete state.error;
    const metadata = Object.assign({}, this.#options.metadata, options.metadata);
    const run = new Run(setup, state, { metadata, signal: options.signal, listeners, streaming: options.streaming, subagent: options.subagent, parentSpan: options.parentSpan });
    // Object.assign, not a spread: V8 spreads objects of changing shapes very slowly.
    const ctx: RunContext = run.bind(Object.assign({}, run.base, { messages: state.messages, state, input, segment: state.segment, resumed }));
    run.publish({ type: 'run.start', sessionId: state.sessionId, segment: state.segment, resumed });
    try {
      const result = await setup.stacks.run(ctx);
      // A run layer that settled the segment without the loop: the state says how it ended.
      if (state.status === 'running') {
        state.status = result.status;
        state.stopReason = result.stopReason;
      }
      run.publish({ type: 'run.end', status: result.status, stopReason: result.stopReason });
      endRunSpan(run.span, result.status, result.stopReason);
      this.#remember(state);
      return result;
    } catch (error) {
      // Whatever still runs in the failed segment (an orphaned next()) is cancelled and may not write to its state.
      run.over = true;
      run.controller.abort(error);
      const failure = runFailure(error, state);
      state.status = 'failed';
      state.error = { code: failure.code, message: failure.message, ...(failure.layer !== undefined ? { layer: failure.layer } : {}) };
      run.publish({ type: 'run.end', status: 'failed', error: state.error });
      endRunSpan(run.span, 'failed', undefined, state.error);
      this.#remember(state);
      throw failure;
    } finally {
      run.dispose();
    }
  }

  /** Keep the agent's session up to date when a segment of its run ends. */
  #remember(state: RunState): void {
    if (state.sessionId !== this.#session.id) return;
    this.#session.messages = state.messages;
    this.#session.state = state;
  }
}

/** Options of one segment: the public ones, plus what koagent itself passes (streams, sub-agents). */
interface SegmentOptions extends RunCallOptions {
  streaming?: boolean;
  listeners?: EventListener[];
  subagent?: SubagentInfo;
  /** A parent agent's layers, run outermost in this (sub-agent) run. */
  inherited?: readonly NamedMiddleware[];
  parentSpan?: Span;
}

/** A model string (`openai:gpt-5-mini`), resolved now so a missing key fails at construction. */
function modelFromString(spec: string): ModelProvider {
  try {
    return resolveModel(spec);
  } catch (error) {
    throw new TypeError(`createAgent: ${(error as Error).message}`, { cause: error });
  }
}

/** `new Agent(options)`, as a function. */
export function createAgent(options: AgentOptions): Agent {
  return new Agent(options);
}

/**
 * A transcript that ends with tool calls that never ran (a layer ended the run after the reply)
 * cannot be sent to a model as is: settle those calls as not run before the next turn.
 */
function closeUnsettledCalls(messages: Message[]): void {
  const last = messages[messages.length - 1];
  if (last?.role !== 'assistant' || !last.toolCalls?.length) return;
  for (const call of last.toolCalls) messages.push(toolMessage(call, toolError('aborted', 'Not run: the run ended before this call')));
}
