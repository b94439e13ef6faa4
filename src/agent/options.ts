import type { Logger, Tool } from '../core/contexts.js';
import type { RunFailedError } from '../core/errors.js';
import type { EventListener, PermissionRecord } from '../core/events.js';
import type { Middleware } from '../core/middleware.js';
import type { ModelProvider } from '../core/model.js';
import type { RunResult } from '../core/result.js';
import type { ResumeClaim, StopCondition } from '../core/state.js';
import type { ToolExceptionPolicy } from '../core/tool-exception.js';
import type { AgentHook } from '../dialects/agent-hook/agent-hook.js';
import { HookRegistry } from '../dialects/agent-hook/hook-registry.js';
import type { Hook } from '../dialects/criogen/types.js';
import type { Limits } from '../features/limits.js';
import type { CompactionOptions } from '../middleware/compaction-middleware.js';
import { storeProblem, type RunStore } from '../stores/run-store.js';
import { isTool } from '../tools/define.js';
import type { PermissionsOption } from '../tools/permissions.js';

/**
 * Options of `createAgent` / `new Agent`.
 *
 * @example createAgent({ name: 'helper', instructions: 'You help.', model: mockModel(['Hi']), tools: [search] });
 */
export interface AgentOptions {
  /** Shown in contexts, events and errors; also names the run state's owner. Default `agent`. */
  name?: string;
  /** A stable id for the agent (`ctx.agentId`); defaults to the name. */
  id?: string;
  /** The system message that starts every transcript. */
  instructions?: string;
  /**
   * The model provider, or a model string resolved at construction: `'openai:gpt-5-mini'`
   * (reads OPENAI_API_KEY / OPENAI_BASE_URL), `'ollama:llama3.2'`, or a prefix of your own
   * (`registerModelPrefix`).
   */
  model?: ModelProvider | string;
  /** Alias of `model`, for code written for the AgentHook framework. */
  provider?: ModelProvider | string;
  tools?: Tool<any, any>[];
  /** Middleware, outermost first. */
  middleware?: Middleware[];
  /**
   * Hook objects of either dialect, after the middleware: AgentHooks (`preToolCall` …; an array
   * or a `HookRegistry`) and criogen Hooks (`onStart`, `beforeTool` …).
   */
  hooks?: Array<AgentHook | Hook> | HookRegistry;
  /** Turns of the model the loop takes at most per run (default 20): `stepCountIs(maxSteps)`. */
  maxSteps?: number;
  /**
   * More conditions that end a segment before the next model turn, checked after `maxSteps` and
   * `limits` (see `StopCondition`, `stepCountIs`, `hasToolCall`).
   */
  stopWhen?: StopCondition | StopCondition[];
  /** Merged into every run's `ctx.metadata`. */
  metadata?: Record<string, unknown>;
  /** Tool calls of one reply that run at once (default: all; 1 runs them one at a time). */
  toolConcurrency?: number;
  /** Extra request fields for every model call (e.g. `temperature`, `maxTokens`, `headers`). */
  modelSettings?: Record<string, unknown>;
  /** Ordered allow / deny / ask rules for tool calls. */
  permissions?: PermissionsOption;
  /** Told about every permission decision (rule, default, hook or human). */
  onPermissionDecision?: (record: PermissionRecord) => void;
  /** Watches every run of this agent; cannot change it. */
  onEvent?: EventListener;
  /**
   * Called by `resume` before it starts a segment: claim `(runId, segment)` atomically in a store
   * shared by every process that may resume, and return false if it was claimed before (the
   * resume is then refused). Without it, the agent object remembers the segments it resumed.
   * Not with a `store`: a store claims every resume itself.
   */
  claimResume?: (claim: ResumeClaim) => boolean | Promise<boolean>;
  /**
   * Where the agent's runs are kept, durably: each step is checkpointed there, a run whose
   * process died is continued by `agent.recover()`, suspended runs are resumed by id, and
   * `send(input, { sessionId })` continues a stored session. `memoryStore()`, `sqliteStore()`
   * from `koagent/sqlite`, `postgresStore()` from `koagent/postgres`. See docs/durable-runs.md.
   */
  store?: RunStore;
  /**
   * What a tool's exception does (a throw in the tool, or in a hook that counts as the tool's):
   * `'model'` (default) gives the model the error as the call's result; `'fail'` fails the run
   * with code `tool_exception`; a function decides per error. A thrown `ToolError` always goes
   * to the model.
   */
  onToolException?: ToolExceptionPolicy;
  /** Per-run budgets: model calls, tool calls, tokens. */
  limits?: Limits;
  /** Keep the transcript under a budget by summarising older messages (see `compactionMiddleware`). */
  compaction?: CompactionOptions;
  /** Where warnings go (default `console`). */
  logger?: Logger;
}

/**
 * Options of one `run`, `send`, `resume` or `stream` call.
 *
 * @example await agent.run('Hi', { sessionId: user.id, signal: AbortSignal.timeout(30_000), metadata: { userId: user.id } });
 */
export interface RunCallOptions {
  sessionId?: string;
  signal?: AbortSignal;
  /** Merged over the agent's `metadata` for this run. */
  metadata?: Record<string, unknown>;
  /** An extra listener for this run only. */
  onEvent?: EventListener;
  /** The run store of this run, instead of the agent's `store`. */
  store?: RunStore;
}

/**
 * Options of `agent.send`: those of a run; `sessionId` names the stored session to continue
 * (it needs a store; default: the agent's own session).
 *
 * @example await agent.send('And tomorrow?', { sessionId: `user-\${user.id}` });
 */
export type SendOptions = RunCallOptions;

/**
 * Options of `agent.recover`: those of a run (the recovered segments get them), and how many runs to finish at most.
 *
 * @example await agent.recover({ limit: 10, signal: AbortSignal.timeout(60_000) });
 */
export interface RecoverOptions extends Omit<RunCallOptions, 'sessionId'> {
  /** Recover at most this many runs in this call (default: every one there is). */
  limit?: number;
}

/**
 * One run `agent.recover` continued: its result, or the error its segment failed with.
 *
 * @example for (const { runId, result, error } of await agent.recover()) console.log(runId, result?.status ?? error?.code);
 */
export interface RecoveredRun {
  runId: string;
  result?: RunResult;
  error?: RunFailedError;
}

function positiveInteger(value: unknown, allowInfinity: boolean): boolean {
  return typeof value === 'number' && value >= 1 && (Number.isInteger(value) || (allowInfinity && value === Infinity));
}

/** Check options up front, so a mistake is reported at construction, naming the option. */
export function checkOptions(options: AgentOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('createAgent(options): options must be an object');
  const fail = (what: string) => { throw new TypeError(`createAgent: ${what}`); };
  const { name, instructions, model, provider, tools, middleware, maxSteps, metadata, toolConcurrency } = options;
  if (name !== undefined && (typeof name !== 'string' || name === '')) fail('name must be a non-empty string');
  if (instructions !== undefined && typeof instructions !== 'string') fail('instructions must be a string');
  if (model !== undefined && provider !== undefined && model !== provider) fail('give the model as either `model` or `provider`, not both');
  if (tools !== undefined && !Array.isArray(tools)) fail('tools must be an array of tools made with defineTool');
  if (middleware !== undefined && !Array.isArray(middleware)) fail('middleware must be an array');
  if (maxSteps !== undefined && !positiveInteger(maxSteps, false)) fail(`maxSteps must be a whole number ≥ 1 (got ${String(maxSteps)})`);
  if (toolConcurrency !== undefined && !positiveInteger(toolConcurrency, true)) fail(`toolConcurrency must be a whole number ≥ 1 or Infinity (got ${String(toolConcurrency)})`);
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null)) fail('metadata must be an object');
  const { limits } = options;
  if (limits !== undefined) {
    if (typeof limits !== 'object' || limits === null) fail('limits must be an object { modelCalls?, toolCalls?, tokens? }');
    for (const [key, value] of Object.entries(limits)) {
      if (!['modelCalls', 'toolCalls', 'tokens'].includes(key)) fail(`limits.${key} is not a limit; use modelCalls, toolCalls or tokens`);
      if (value !== undefined && !positiveInteger(value, true)) fail(`limits.${key} must be a whole number ≥ 1 (got ${String(value)})`);
    }
  }
  const policy = options.onToolException;
  if (policy !== undefined && policy !== 'model' && policy !== 'fail' && typeof policy !== 'function') fail(`onToolException must be 'model', 'fail' or a function (error, ctx) => 'model' | 'fail'`);
  const stops = options.stopWhen;
  if (stops !== undefined && typeof stops !== 'function' && !(Array.isArray(stops) && stops.every((s) => typeof s === 'function'))) {
    fail('stopWhen must be a stop condition (state) => boolean | stopReason, or an array of them');
  }
  for (const key of ['onPermissionDecision', 'onEvent', 'claimResume'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function') fail(`${key} must be a function`);
  }
  if (options.store !== undefined) {
    const problem = storeProblem(options.store);
    if (problem !== undefined) fail(`store is not a run store: ${problem}; use memoryStore(), sqliteStore() from koagent/sqlite or postgresStore() from koagent/postgres`);
    if (options.claimResume !== undefined) fail('give claimResume or store, not both: with a store, every resume is claimed through the store');
  }
}

export function hookList(hooks: AgentOptions['hooks']): unknown[] {
  if (hooks === undefined) return [];
  if (Array.isArray(hooks)) return hooks;
  // The registry itself, not a snapshot: the agent sees hooks registered after createAgent.
  if (HookRegistry.is(hooks)) return [hooks];
  throw new TypeError('createAgent: hooks must be an array of hook objects or a HookRegistry');
}

export function toolMap(tools: unknown[]): Map<string, Tool> {
  const map = new Map<string, Tool>();
  tools.forEach((tool, i) => {
    if (!isTool(tool)) throw new TypeError(`createAgent: tools[${i}] is not a tool; make tools with defineTool({ name, description, input, execute })`);
    if (map.has(tool.name)) throw new TypeError(`createAgent: two tools are named "${tool.name}" (tools[${[...map.keys()].indexOf(tool.name)}] and tools[${i}]); tool names must be unique`);
    map.set(tool.name, tool);
  });
  return map;
}
