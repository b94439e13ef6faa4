// sandboxedHooks(source): hook objects whose methods run in a sandbox. Each is a plain hook object
// of its dialect in the host (an AgentHook or a criogen Hook) whose methods call into the
// sandbox, so the dialect adapters take them as they take any hook: order, outcomes, errors and
// hook state are theirs, unchanged.
import { z } from 'zod';
import { functionSchema, optionsSchema, parseOptions } from '../api.js';
import type { AgentHook } from '../dialects/agent-hook/agent-hook.js';
import { HookRegistry } from '../dialects/agent-hook/hook-registry.js';
import type { Hook } from '../dialects/criogen/types.js';
import { Sandbox, type HookInfo, type SandboxEngine } from './engine.js';
import { marshal, SIGNATURES, unmarshal } from './marshal.js';
import { SandboxError } from './sandbox-error.js';
import { ThreadSandbox } from './thread.js';
import { tooMuchText } from './vm-errors.js';

/**
 * Options of `sandboxedHooks(source, options)`: the limits and what the sandboxed code is given.
 *
 * @example await sandboxedHooks(source, { timeoutMs: 50, memoryMb: 32, log: console.log, functions: { lookup: async (sku) => prices[sku] } })
 *
 * @inline
 */
export interface SandboxOptions {
  /**
   * Where the engine runs. `'worker'` (the default): on a worker thread of its own, kept warm, so
   * a hook that loops or crashes never holds the host's event loop; the host stops a worker that
   * has not answered by `timeoutMs` and starts another. `'inline'`: on the host's thread, the
   * lowest cost per call, but a looping hook holds the host until `timeoutMs` stops it, and one
   * long native step (a search of a long string) cannot be stopped mid-way: it runs to its end,
   * then the call fails on `timeoutMs`.
   */
  thread?: 'worker' | 'inline';
  /** Wall-clock milliseconds one hook call may take, waits for granted functions included (default 1000). Loading the module may take 10 × this, at least 1000. */
  timeoutMs?: number;
  /** The sandbox's memory in MiB, the engine's own included (default 64, at least 24). */
  memoryMb?: number;
  /** Where `console.log` and `log(...)` in the sandbox go (JSON copies of the arguments). Without it they print nothing. */
  log?: (...args: unknown[]) => void;
  /**
   * Host functions the sandboxed code may call by name, as globals: JSON in, JSON out. In the
   * sandbox each returns a promise; its wait counts in the call's `timeoutMs`.
   */
  functions?: Record<string, (...args: any[]) => unknown>;
}

/**
 * The hooks of one source, running in one sandbox. Give `hooks` to `createAgent({ hooks })` (or
 * `registry` when they are all AgentHooks), and `close()` the sandbox when no agent needs it.
 *
 * @example const sandboxed = await sandboxedHooks(source); const agent = createAgent({ model, hooks: sandboxed.hooks });
 */
export interface SandboxedHooks {
  /** The module's hooks in order, AgentHooks and criogen Hooks, as `createAgent({ hooks })` takes them. */
  readonly hooks: Array<AgentHook | Hook>;
  /** A HookRegistry holding them; throws if the module has criogen Hooks (a registry holds AgentHooks only). */
  registry(): HookRegistry;
  /** How many sandboxes were started: 1, plus one for each that a limit or a crash left behind. */
  readonly starts: number;
  /** Stop the sandbox: later calls of its hooks fail. */
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 1000;
const DEFAULT_MEMORY_MB = 64;
const RESERVED = /^(?:console|log|globalThis|Object|Array|JSON|Promise|Reflect|Function|Error|Math|Symbol|String|Number|Boolean|Date|RegExp|Map|Set|ToolResult|ToolError)$/;

const sandboxOptionsSchema = optionsSchema(
  {
    timeoutMs: z.number({ error: 'must be a number of milliseconds, e.g. 100' }).positive({ error: 'must be more than 0 ms' }).optional(),
    thread: z.enum(['worker', 'inline'], { error: "must be 'worker' (the default: the engine on a thread of its own) or 'inline' (on the host's thread, the lowest cost per call)" }).optional(),
    memoryMb: z.number({ error: 'must be a number of MiB, e.g. 64' }).int({ error: 'must be a whole number of MiB' }).min(24, { error: 'must be at least 24 (the engine itself takes 16 MiB)' }).max(2048, { error: 'must be at most 2048' }).optional(),
    log: functionSchema('a function (...args) => void, e.g. console.log').optional(),
    functions: z.record(z.string(), functionSchema('a function, called with JSON arguments')).optional(),
  },
  { noun: 'an option of sandboxedHooks', aliases: { threads: 'thread', worker: 'thread', inline: 'thread', mode: 'thread', timeout: 'timeoutMs', time: 'timeoutMs', memory: 'memoryMb', memoryLimit: 'memoryMb', logger: 'log', console: 'log', grants: 'functions', globals: 'functions' } },
);

/**
 * Load hook source text (one JavaScript module, as an editor produces it) into a sandbox and get
 * its hooks back as hook objects whose methods run there. The module's default export (a hook or
 * an array of hooks) gives the hooks, in order; without one, its exported objects and classes do,
 * in the order of the source. It may import ToolResult, ToolError, textOf and mapText from 'koagent', nothing else.
 * The code there gets no file system, network, process, environment or timers: only the `log`
 * and `functions` the options grant. Past `timeoutMs` or `memoryMb`, a call fails (a `hook_failed`
 * run under the dialect's rules), and the sandbox is replaced for the next one. The engine runs on
 * a worker thread of its own unless `thread: 'inline'` is given: a looping hook never holds the host.
 *
 * @example const { hooks } = await sandboxedHooks(`export default { name: 'no-shell', preToolCall: (ctx) => ctx.toolName === 'shell' ? { deny: 'No shell' } : undefined }`);
 */
export async function sandboxedHooks(source: string, options: SandboxOptions = {}): Promise<SandboxedHooks> {
  if (typeof source !== 'string') throw new TypeError(`sandboxedHooks(source): source must be the text of a JavaScript module, got ${source === null ? 'null' : typeof source}`);
  if (typeof options !== 'object' || options === null) throw new TypeError('sandboxedHooks(source, options): options must be an object { thread?, timeoutMs?, memoryMb?, log?, functions? }');
  const parsed = parseOptions(sandboxOptionsSchema, options, 'sandboxedHooks(source, options)');
  const functions = parsed.functions ?? {};
  for (const name of Object.keys(functions)) {
    if (!/^[A-Za-z_$][\w$]*$/.test(name) || RESERVED.test(name)) {
      throw new TypeError(`sandboxedHooks(source, { functions }): "${name}" cannot be a global of the sandbox; name functions with identifiers that are not built-ins (e.g. lookupPrice)`);
    }
  }
  const engine = { source, timeoutMs: parsed.timeoutMs ?? DEFAULT_TIMEOUT_MS, memoryMb: parsed.memoryMb ?? DEFAULT_MEMORY_MB, functions, log: parsed.log };
  const sandbox: SandboxEngine = parsed.thread === 'inline' ? new Sandbox(engine) : new ThreadSandbox(engine);
  let described: HookInfo[];
  try {
    described = checkedHooks(await sandbox.hooks());
  } catch (error) {
    sandbox.close();
    throw error;
  }
  const hooks = described.map((info, index) => hostHook(sandbox, info, index, engine.memoryMb));
  return {
    hooks,
    registry() {
      const registry = new HookRegistry();
      const criogen = described.filter((info) => !info.methods.some((m) => AGENT_HOOK_METHODS.has(m)));
      if (criogen.length > 0) throw new TypeError(`sandboxedHooks(...).registry(): ${criogen.map(labelOf).join(', ')} ${criogen.length === 1 ? 'is a criogen Hook' : 'are criogen Hooks'}, which a HookRegistry does not hold; give .hooks to createAgent({ hooks }) instead`);
      return registry.registerMany(hooks as AgentHook[]);
    },
    get starts() {
      return sandbox.starts;
    },
    close: () => sandbox.close(),
  };
}

const AGENT_HOOK_METHODS = new Set(['preToolCall', 'postToolCall', 'preGenerate', 'postGenerate']);

/**
 * The sandbox's description of its hooks, checked before the host builds objects from it: the
 * prelude writes it, but a module that changes the built-ins it uses could make it say anything
 * (a method named `__proto__` would set a host object's prototype).
 */
function checkedHooks(described: unknown): HookInfo[] {
  const optional = (value: unknown) => value === undefined || typeof value === 'string';
  const isInfo = (info: unknown): info is HookInfo => {
    if (typeof info !== 'object' || info === null) return false;
    const { exportName, name, hasName, className, methods } = info as Record<string, unknown>;
    return typeof exportName === 'string' && optional(name) && typeof hasName === 'boolean' && optional(className) && Array.isArray(methods) && methods.every((m) => typeof m === 'string' && Object.hasOwn(SIGNATURES, m));
  };
  if (!Array.isArray(described) || !described.every(isInfo)) {
    throw new SandboxError('sandboxedHooks(source): the hook module did not load: the sandbox described its hooks in a form the host does not accept (a hook method that is not one of the dialects\' methods, or a name that is not a string); does the module replace built-ins such as Array.prototype.filter?');
  }
  return described;
}

function labelOf(info: HookInfo): string {
  return info.name ?? info.className ?? info.exportName;
}

/**
 * The host's object for one sandboxed hook: its name (or its class's, which a criogen Hook is
 * known by), its own plain fields, and each method as a function that calls into the sandbox.
 */
function hostHook(sandbox: SandboxEngine, info: HookInfo, index: number, memoryMb: number): AgentHook | Hook {
  const hook: Record<string, unknown> = {};
  if (info.hasName) hook.name = info.name;
  else if (info.className !== undefined) hook.name = info.className;
  const label = labelOf(info);
  for (const method of info.methods) {
    hook[method] = {
      // Named for the method it stands for, as stack traces and the adapters' messages show it.
      [method]: async (...args: unknown[]) => {
        const { payload, host, context } = marshal(method, args);
        // Refused before it is copied: the sandbox is untouched, so it is not replaced.
        const over = tooMuchText(payload, memoryMb, 'what it is given (its context and arguments)');
        if (over !== undefined) throw new SandboxError(`sandboxed hook ${label}.${method}() was not called: ${over}`, 'memoryMb');
        let answer: unknown;
        try {
          answer = await sandbox.call(index, method, payload, host);
        } catch (error) {
          if (!(error instanceof SandboxError)) throw error;
          const fault = new SandboxError(`sandboxed hook ${label}.${method}() ${error.message}${error.limit !== undefined ? '; the sandbox was replaced' : ''}`, error.limit);
          throw fault;
        }
        return unmarshal(answer, label, method, context);
      },
    }[method];
  }
  return hook as AgentHook | Hook;
}
