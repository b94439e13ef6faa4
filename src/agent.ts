import { randomUUID } from 'node:crypto';
import type { RunContext } from './context.js';
import { describe, errorOrigin, KoagentError, RunFailedError } from './errors.js';
import type { EventListener } from './events.js';
import { inputMessages, type Message, type RunInput } from './messages.js';
import { isHookRegistry } from './dialects/hook-registry.js';
import { extension, toMiddleware, type Extension } from './extensions.js';
import type { Middleware } from './middleware.js';
import { isModelProvider, type ModelProvider } from './model.js';
import { checkOptions, type AgentOptions, type RunCallOptions } from './options.js';
import type { RunResult } from './result.js';
import { Run, type AgentSetup } from './run.js';
import { buildStacks } from './stacks.js';
import { checkState, newState, type ApprovalDecision, type RunState } from './state.js';
import { isTool, type Tool } from './tools/define.js';
import { toolError } from './tools/outcome.js';
import { toolMessage } from './tools/turn.js';

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
  readonly #session: { id: string; messages: Message[]; busy: boolean; state?: RunState };
  /** Segments already resumed, so the same state cannot be resumed twice in this process. */
  readonly #resumed = new Set<string>();

  constructor(options: AgentOptions) {
    checkOptions(options);
    this.#options = options;
    this.name = options.name ?? 'agent';
    this.id = options.id ?? this.name;
    const provider = options.model ?? options.provider;
    if (!isModelProvider(provider)) {
      throw new TypeError('createAgent: `model` must be a model provider (an object with generate(request)), e.g. mockModel([...]) from koagent/testing');
    }
    this.#provider = provider;
    this.#tools = toolMap(options.tools ?? []);
    for (const ext of options.middleware ?? []) this.#add(ext, 'createAgent({ middleware })');
    for (const hook of hookList(options.hooks)) this.#add(hook, 'createAgent({ hooks })');
    this.#session = { id: `session_${randomUUID()}`, messages: this.#opening(), busy: false };
    this.#getSetup(); // builds the stacks now, so a bad option fails here rather than at the first run
  }

  /** Add a middleware (innermost so far). Returns the agent, so calls chain. */
  use(middleware: Middleware): this {
    this.#add(middleware, 'agent.use()');
    return this;
  }

  #add(value: unknown, where: string): void {
    this.#extensions.push(extension(value, where));
    this.#setup = undefined;
  }

  /** The tools this agent offers, by name. */
  get tools(): ReadonlyMap<string, Tool> {
    return this.#tools;
  }

  /** Start a new run with a fresh transcript. */
  run(input: RunInput, options: RunCallOptions = {}): Promise<RunResult> {
    const messages = [...this.#opening(), ...inputMessages(input)];
    const state = newState(`run_${randomUUID()}`, options.sessionId ?? `session_${randomUUID()}`, this.name, messages);
    return this.#segment(state, messages.slice(-1), options, false);
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
    const checked = checkState(state);
    const bad = (what: string) => new KoagentError('invalid_resume', `agent.resume(): ${what}`);
    if (checked.agentName !== this.name) throw bad(`this state belongs to agent "${checked.agentName}", not "${this.name}"; resume it with that agent`);
    if (checked.status === 'completed') throw bad(`run ${checked.runId} has completed (${checked.stopReason}); start a new one with agent.run() or agent.send()`);
    if (checked.status === 'running') throw bad(`run ${checked.runId} is still running; resume the state of its result or of its RunFailedError`);
    if (typeof decisions !== 'object' || decisions === null) throw bad('decisions must be an object mapping each pending toolCallId to true, false or { approved, reason }');
    const pending = new Map(checked.pendingApprovals.map((p) => [p.toolCallId, p]));
    for (const id of Object.keys(decisions)) {
      if (!pending.has(id)) throw bad(`there is no pending approval with toolCallId "${id}" (pending: ${[...pending.keys()].join(', ') || 'none'})`);
    }
    const parsed: RunState['decisions'] = {};
    for (const [id, call] of pending) {
      const decision = decisions[id];
      if (decision === undefined) throw bad(`no decision for pending call "${id}" (${call.toolName}); give true, false or { approved, reason } for each of: ${[...pending.keys()].join(', ')}`);
      const approved = typeof decision === 'boolean' ? decision : decision?.approved;
      if (typeof approved !== 'boolean') throw bad(`the decision for "${id}" must be true, false or { approved: boolean, reason?: string }`);
      const reason = typeof decision === 'object' ? decision.reason : undefined;
      parsed[id] = { approved, toolName: call.toolName, args: call.args, ...(reason !== undefined ? { reason: String(reason) } : {}) };
    }
    const key = `${checked.runId}#${checked.segment}`;
    if (this.#resumed.has(key)) throw bad(`this state (run ${checked.runId}, segment ${checked.segment}) was already resumed; continue from the state that resume returned`);
    this.#resumed.add(key);
    const next = structuredClone(checked);
    next.pendingApprovals = [];
    next.decisions = parsed;
    return this.#segment(next, [], options, true);
  }

  #opening(): Message[] {
    const { instructions } = this.#options;
    return instructions === undefined ? [] : [{ role: 'system', content: instructions }];
  }

  #getSetup(): AgentSetup {
    if (this.#setup !== undefined) return this.#setup;
    const o = this.#options;
    this.#setup = {
      agentId: this.id,
      agentName: this.name,
      provider: this.#provider,
      tools: this.#tools,
      toolSpecs: [...this.#tools.values()].map((t) => t.spec),
      maxSteps: o.maxSteps ?? 20,
      toolConcurrency: o.toolConcurrency ?? Infinity,
      modelSettings: o.modelSettings ?? {},
      stacks: buildStacks(toMiddleware(this.#extensions), this.#tools, { permissions: o.permissions, recordDecisions: o.onPermissionDecision !== undefined }),
      onPermissionDecision: o.onPermissionDecision,
      onToolException: o.onToolException ?? 'model',
      logger: o.logger ?? console,
    };
    return this.#setup;
  }

  async #segment(state: RunState, input: Message[], options: RunCallOptions, resumed: boolean): Promise<RunResult> {
    const setup = this.#getSetup();
    const listeners: EventListener[] = [];
    if (this.#options.onEvent) listeners.push(this.#options.onEvent);
    if (options.onEvent) listeners.push(options.onEvent);
    state.segment++;
    state.status = 'running';
    delete state.error;
    const metadata = { ...this.#options.metadata, ...options.metadata };
    const run = new Run(setup, state, { metadata, signal: options.signal, listeners });
    const ctx: RunContext = run.bind({ ...run.base, messages: state.messages, state, input, segment: state.segment, resumed });
    run.publish({ type: 'run.start', sessionId: state.sessionId, segment: state.segment, resumed });
    try {
      const result = await setup.stacks.run(ctx);
      run.publish({ type: 'run.end', status: result.status, stopReason: result.stopReason });
      this.#remember(state);
      return result;
    } catch (error) {
      const failure = runFailure(error, state);
      state.status = 'failed';
      state.error = { code: failure.code, message: failure.message, ...(failure.layer !== undefined ? { layer: failure.layer } : {}) };
      run.publish({ type: 'run.end', status: 'failed', error: state.error });
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

/** `new Agent(options)`, as a function. */
export function createAgent(options: AgentOptions): Agent {
  return new Agent(options);
}

function hookList(hooks: AgentOptions['hooks']): unknown[] {
  if (hooks === undefined) return [];
  if (Array.isArray(hooks)) return hooks;
  if (isHookRegistry(hooks)) return hooks.list();
  throw new TypeError('createAgent: hooks must be an array of hook objects or a HookRegistry');
}

function toolMap(tools: unknown[]): Map<string, Tool> {
  const map = new Map<string, Tool>();
  tools.forEach((tool, i) => {
    if (!isTool(tool)) throw new TypeError(`createAgent: tools[${i}] is not a tool; make tools with defineTool({ name, description, input, execute })`);
    if (map.has(tool.name)) throw new TypeError(`createAgent: two tools are named "${tool.name}" (tools[${[...map.keys()].indexOf(tool.name)}] and tools[${i}]); tool names must be unique`);
    map.set(tool.name, tool);
  });
  return map;
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

/** Turn what escaped the run stack into the one error a failed run rejects with. */
function runFailure(error: unknown, state: RunState): RunFailedError {
  const origin = errorOrigin(error);
  const layer = origin?.kind === 'layer' ? origin.name : undefined;
  if (KoagentError.is(error) && error.code !== 'hook_failed') {
    const blame = error.layer ?? layer;
    return new RunFailedError(error.code, error.message, state, { cause: error.cause ?? error, ...(blame !== undefined ? { layer: blame } : {}) });
  }
  if (layer !== undefined) {
    const cause = KoagentError.is(error) && error.layer === layer && error.cause !== undefined ? error.cause : error;
    return new RunFailedError('hook_failed', `${layer} failed: ${describe(error)}`, state, { cause, layer });
  }
  if (origin?.kind === 'provider') {
    return new RunFailedError('model_error', `The model provider ${origin.name} failed: ${describe(error)}`, state, { cause: error });
  }
  return new RunFailedError('internal', describe(error), state, { cause: error });
}
