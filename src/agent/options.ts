import * as crypto from 'node:crypto';
import { z } from 'zod';
import type { Logger, Tool } from '../core/vocabulary/contexts.js';
import type { EventListener, PermissionRecord } from '../core/vocabulary/events.js';
import type { Middleware } from '../core/vocabulary/middleware.js';
import { modelSettingsSchema, type ModelProvider } from '../core/vocabulary/model.js';
import { functionSchema, optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import type { ResumeClaim, StopCondition } from '../core/vocabulary/state.js';
import type { ToolExceptionPolicy } from '../core/vocabulary/tool-exception.js';
import type { AgentHook } from '../dialects/agent-hook/agent-hook.js';
import { HookRegistry } from '../dialects/agent-hook/hook-registry.js';
import type { Hook } from '../dialects/criogen/types.js';
import type { Limits } from '../features/limits.js';
import type { OutputSpec } from '../features/structured-output.js';
import type { CompactionOptions } from '../middleware/compaction-middleware.js';
import { assertStore, hasEventLog, type RunStore } from '../stores/run-store.js';
import { isTool } from '../tools/define.js';
import { permissionsSchema, type PermissionsOption } from '../tools/permissions.js';
import { resolveModel } from '../providers/registry.js';
import { isToolset, type Toolset } from '../tools/toolset.js';

/**
 * Options of `createAgent` / `new Agent`. `C` is the type of the run context (`ctx.context`),
 * `O` the type of `result.output`.
 *
 * @example createAgent({ name: 'helper', instructions: 'You help.', model: mockModel(['Hi']), tools: [search] });
 */
export interface AgentOptions<C = unknown, O = unknown> {
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
  /** Tools made with `defineTool`, and toolsets whose tools are known at run time (an MCP server's, `koagent/mcp`). */
  tools?: Array<Tool<any, any, C> | Toolset>;
  /** Middleware, outermost first. */
  middleware?: Middleware<C>[];
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
   * process died is continued by `agent.runs.recover()`, suspended runs are resumed by id, and
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
  /**
   * Bounds on the arguments a model writes for a tool call (defaults: `maxDepth` 64 levels of
   * nesting, `maxBytes` 1 MiB of JSON). A call past them settles as a `validation` error the
   * model reads, and the transcript keeps a short note instead of the arguments.
   */
  toolArguments?: { maxDepth?: number; maxBytes?: number };
  /** Keep the transcript under a budget by summarising older messages (see `compactionMiddleware`). */
  compaction?: CompactionOptions;
  /** Where warnings go (default `console`). */
  logger?: Logger;
  /**
   * The shape of the run context every run is given (`run(input, { context })`), checked at the
   * start of each run; `ctx.context` is its output. For a type without a check, `z.custom<T>()`.
   *
   * @example createAgent({ model, contextSchema: z.object({ userId: z.string(), db: z.custom<Db>() }) })
   */
  contextSchema?: z.ZodType<C>;
  /**
   * The final answer of every run, as a zod schema (or `OutputOptions`): `result.output` is its
   * parsed value. A run may give its own (`run(input, { output })`).
   */
  output?: OutputSpec<O>;
  /**
   * Record every run's layer trace (default false): for each model and tool call, the layers it
   * passed, their times and what each did, kept in `state.hookState['koagent.trace']`. A run may
   * turn it on or off for itself (`run(input, { layerTrace })`). See docs/layer-trace.md.
   *
   * @example createAgent({ model, tools, layerTrace: true })
   */
  layerTrace?: boolean;
  /**
   * Append every run's events to its run store's event log, for readers in any process
   * (`followEvents` from `koagent/store`). Default: only the segments that stream
   * (`agent.stream`, `{ stream: true }`) and those that continue a run whose log has events (a
   * resume, a recovery); a call may say otherwise (`run(input, { eventLog })`). Needs a store
   * that keeps a log (koagent's three do). See docs/streaming.md.
   *
   * @example createAgent({ model, store: sqliteStore({ path: 'runs.db' }), eventLog: true })
   */
  eventLog?: boolean;
}

/**
 * Options of one `run`, `send`, `resume`, `recover` or `stream` call.
 *
 * @example await agent.run('Hi', { sessionId: user.id, signal: AbortSignal.timeout(30_000), metadata: { userId: user.id } });
 */
export interface RunCallOptions<C = unknown> {
  sessionId?: string;
  /**
   * The id of the run a `run`, `send` or `stream` starts (default: a fresh time-ordered id).
   * Give one when the id must be known before the run starts — a job queue's client hands it
   * out at once; with a store, a second start under the same id is refused (`invalid_resume`).
   */
  runId?: string;
  /**
   * The run context: handed to every tool and layer as `ctx.context`, never written into the
   * state (it may hold functions and connections). Give it again to `resume`.
   */
  context?: C;
  signal?: AbortSignal;
  /** Merged over the agent's `metadata` for this run. */
  metadata?: Record<string, unknown>;
  /** An extra listener for this run only. */
  onEvent?: EventListener;
  /** Stop conditions for this call's segment only, checked before each model turn after the agent's own. */
  stopWhen?: StopCondition | StopCondition[];
  /** The run store of this run, instead of the agent's `store`. */
  store?: RunStore;
  /**
   * Stream this call's segment: the call returns an `AgentStream` (as `agent.stream` does) in
   * place of a promise, the model is asked through `provider.stream`, and text arrives as
   * `text.delta` events, under the same hold and retract rules. `run`, `send`, `resume` and `recover` take it.
   *
   * @example for await (const e of agent.resume(runId, { [callId]: true }, { stream: true })) if (e.type === 'text.delta') process.stdout.write(e.delta);
   */
  stream?: boolean;
  /** Record this call's layer trace (or not), whatever the agent's `layerTrace` says. See docs/layer-trace.md. */
  layerTrace?: boolean;
  /**
   * Append this call's events to its run store's event log (or not), whatever the agent's
   * `eventLog` says (default: when the call streams, or continues a run whose log has events).
   * See docs/streaming.md.
   *
   * @example await agent.run('Refund order 42', { eventLog: true }); // followed from another process
   */
  eventLog?: boolean;
}

const logger = z.custom<Logger>((value) => typeof (value as Logger | null)?.warn === 'function', { error: 'must have a warn(message) method (console does)' });

const budget = () => wholeNumberSchema(1, true, 'must be a whole number ≥ 1').optional();
const limitsSchema = optionsSchema({
  modelCalls: budget(),
  toolCalls: budget(),
  tokens: budget(),
}, { noun: 'a limit' });

const toolArgumentsSchema = optionsSchema({
  maxDepth: wholeNumberSchema(1).optional(),
  maxBytes: wholeNumberSchema(1).optional(),
}, { noun: 'a bound on tool arguments' });

/** The shape of `createAgent`'s options, described once: the check and its messages come from it. */
const agentOptionsSchema = optionsSchema({
  name: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }).optional(),
  id: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }).optional(),
  instructions: z.string({ error: 'must be a string' }).optional(),
  // Checked where they are used: each has its own, more telling messages.
  model: z.unknown().optional(),
  provider: z.unknown().optional(),
  tools: z.array(z.unknown(), { error: 'must be an array of tools made with defineTool (or toolsets)' }).optional(),
  middleware: z.array(z.unknown(), { error: 'must be an array' }).optional(),
  hooks: z.unknown().optional(),
  compaction: z.unknown().optional(),
  maxSteps: wholeNumberSchema(1).optional(),
  stopWhen: z.union([functionSchema(), z.array(functionSchema())], { error: 'must be a stop condition (state) => boolean | stopReason, or an array of them' }).optional(),
  metadata: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  toolConcurrency: wholeNumberSchema(1, true).optional(),
  modelSettings: modelSettingsSchema.optional(),
  permissions: permissionsSchema.optional(),
  onPermissionDecision: functionSchema().optional(),
  onEvent: functionSchema().optional(),
  claimResume: functionSchema().optional(),
  onToolException: z.union([z.enum(['model', 'fail']), functionSchema()], { error: "must be 'model', 'fail' or a function (error, ctx) => 'model' | 'fail'" }).optional(),
  limits: limitsSchema.optional(),
  toolArguments: toolArgumentsSchema.optional(),
  logger: logger.optional(),
  // Checked below, with a message that says what it lacks.
  store: z.unknown().optional(),
  contextSchema: z.custom<z.ZodType>((value) => typeof value === 'object' && value !== null && '_zod' in value, { error: 'must be a zod (v4) schema of the run context, e.g. z.object({ userId: z.string() })' }).optional(),
  // Checked where it is used, with its own messages.
  output: z.unknown().optional(),
  layerTrace: z.boolean({ error: 'must be true or false' }).optional(),
  eventLog: z.boolean({ error: 'must be true or false' }).optional(),
}, { aliases: { logEvents: 'eventLog', recordEvents: 'eventLog', eventsLog: 'eventLog', trace: 'layerTrace', layerTracing: 'layerTrace', context: 'contextSchema', outputSchema: 'output', responseFormat: 'output', schema: 'output', systemPrompt: 'instructions', system: 'instructions', prompt: 'instructions', llm: 'model', maxTurns: 'maxSteps', maxIterations: 'maxSteps', concurrency: 'toolConcurrency', onToolError: 'onToolException', settings: 'modelSettings', listeners: 'onEvent', runStore: 'store', db: 'store' } });

/** Check options up front, so a mistake is reported at construction, naming the option. */
export function checkOptions(options: AgentOptions<any, any>): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('createAgent(options): options must be an object');
  parseOptions(agentOptionsSchema, options, 'createAgent');
  if (options.model !== undefined && options.provider !== undefined && options.model !== options.provider) {
    throw new TypeError('createAgent: give the model as either `model` or `provider`, not both');
  }
  if (options.eventLog === true && options.store === undefined) throw new TypeError("createAgent: eventLog needs a run store, where the log is kept: createAgent({ store, eventLog: true }), or per call: agent.run(input, { store, eventLog: true })");
  if (options.store !== undefined) {
    assertStore(options.store, 'createAgent: store');
    if (options.eventLog === true && !hasEventLog(options.store)) throw new TypeError(`createAgent: eventLog needs a store that keeps an event log, and this one (${options.store.kind}) does not; memoryStore(), sqliteStore() and postgresStore() do`);
    if (options.claimResume !== undefined) throw new TypeError('createAgent: give claimResume or store, not both: with a store, every resume is claimed through the store');
  }
}

/** The shape of the options of one `run`, `send`, `resume`, `recover` or `stream` call. */
export const runCallOptionsSchema = optionsSchema({
  sessionId: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }).optional(),
  runId: z.string({ error: 'must be a non-empty string of at most 200 characters' }).min(1, { error: 'must be a non-empty string of at most 200 characters' }).max(200, { error: 'must be a non-empty string of at most 200 characters' }).optional(),
  signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
  metadata: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  onEvent: functionSchema().optional(),
  context: z.unknown().optional(),
  output: z.unknown().optional(),
  stopWhen: z.union([functionSchema(), z.array(functionSchema())], { error: 'must be a stop condition (state) => boolean | stopReason, or an array of them' }).optional(),
  store: z.unknown().optional(),
  stream: z.boolean({ error: 'must be true or false' }).optional(),
  layerTrace: z.boolean({ error: 'must be true or false' }).optional(),
  eventLog: z.boolean({ error: 'must be true or false' }).optional(),
}, { aliases: { logEvents: 'eventLog', recordEvents: 'eventLog', eventsLog: 'eventLog', trace: 'layerTrace', layerTracing: 'layerTrace', streaming: 'stream', ctx: 'context', runContext: 'context', outputSchema: 'output', schema: 'output', session: 'sessionId', abortSignal: 'signal', listener: 'onEvent', stopIf: 'stopWhen', runStore: 'store', db: 'store' } });

/** Check the options of one call (`where` names it), or throw naming the mistake. */
export function checkCallOptions(options: unknown, where: string): RunCallOptions & { output?: unknown } {
  const parsed = parseOptions(runCallOptionsSchema, options ?? {}, where);
  if (parsed.store !== undefined) assertStore(parsed.store, `${where}: store`);
  // The caller's own object, checked: zod's copy of a record leaves out a `__proto__` key.
  if (parsed.metadata !== undefined) parsed.metadata = (options as { metadata: Record<string, unknown> }).metadata;
  return parsed as RunCallOptions & { output?: unknown };
}

export function hookList(hooks: AgentOptions<any, any>['hooks']): unknown[] {
  if (hooks === undefined) return [];
  if (Array.isArray(hooks)) return hooks;
  // The registry itself, not a snapshot: the agent sees hooks registered after createAgent.
  if (HookRegistry.is(hooks)) return [hooks];
  throw new TypeError('createAgent: hooks must be an array of hook objects or a HookRegistry');
}

/** The agent's own tools by name, and its toolsets, checked. */
export function toolMap(tools: unknown[]): { own: Map<string, Tool>; toolsets: Toolset[] } {
  const map = new Map<string, Tool>();
  const toolsets: Toolset[] = [];
  const at = new Map<string, number>();
  tools.forEach((tool, i) => {
    if (isToolset(tool)) {
      if (toolsets.includes(tool)) throw new TypeError(`createAgent: tools[${i}] is the toolset "${tool.name}" a second time; give each toolset once`);
      toolsets.push(tool);
      return;
    }
    if (!isTool(tool)) throw new TypeError(`createAgent: tools[${i}] is not a tool; make tools with defineTool({ name, description, input, execute })`);
    if (map.has(tool.name)) throw new TypeError(`createAgent: two tools are named "${tool.name}" (tools[${at.get(tool.name)}] and tools[${i}]); tool names must be unique`);
    map.set(tool.name, tool);
    at.set(tool.name, i);
  });
  return { own: map, toolsets };
}

/**
 * A fingerprint of the tools' names and argument schemas: what a pending call of a stored run
 * means. Descriptions may change; names and schemas may not, silently.
 */
export function toolsFingerprint(tools: ReadonlyMap<string, Tool>): string {
  const named = [...tools.values()].sort((a, b) => a.name.localeCompare(b.name));
  // JSON.stringify([[name, parameters], …]), with each (frozen, shared) schema's text made once.
  const text = `[${named.map((tool) => `[${JSON.stringify(tool.name)},${schemaText(tool.spec.parameters)}]`).join(',')}]`;
  let fingerprint = fingerprints.get(text);
  if (fingerprint === undefined) {
    if (fingerprints.size >= FINGERPRINTS_KEPT) fingerprints.clear();
    fingerprints.set(text, (fingerprint = sha256Hex(text).slice(0, 16)));
  }
  return fingerprint;
}

/**
 * The fingerprints of the tool sets hashed last, by the text hashed: agents built per request
 * over the same tools hash it once (a SHA-256 through OpenSSL costs more than building the rest
 * of an agent's options). A few dozen sets at most, so an application that makes tools without
 * end keeps no more.
 */
const fingerprints = new Map<string, string>();
const FINGERPRINTS_KEPT = 64;

/** The JSON of a tool's parameters, by the object: tools defined over one zod schema share it. */
const schemaTexts = new WeakMap<object, string>();

function schemaText(parameters: Record<string, unknown>): string {
  let text = schemaTexts.get(parameters);
  if (text === undefined) schemaTexts.set(parameters, (text = JSON.stringify(parameters)));
  return text;
}

/**
 * SHA-256 of a text, in hex. Node's one-shot `crypto.hash` (20.12 and later) costs a third of
 * a `Hash` object for a short text, and every agent computes one when it is built.
 */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'hex') : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** A model string (`openai:gpt-5-mini`), resolved now so a missing key fails at construction. */
export function modelFromString(spec: string): ModelProvider {
  try {
    return resolveModel(spec);
  } catch (error) {
    throw new TypeError(`createAgent: ${(error as Error).message}`);
  }
}
