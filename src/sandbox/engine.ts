// One sandbox: a QuickJS engine compiled to WebAssembly, in a WebAssembly module of its own whose
// memory cannot grow past the limit (the engine, not a count kept by the sandboxed code, holds
// the line). The hook module is evaluated in it once; every call goes in and out as JSON text.
// A call that runs past its deadline is interrupted; one that exhausts memory or breaks the
// engine leaves it behind: a fresh sandbox is started for the next call.
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { KOAGENT_MODULE, prelude } from './prelude.js';
import { closedError, limitText, loadLimitError, loadTimeMs, SandboxError } from './sandbox-error.js';
import { describeError, Fault, faultLimit, tooMuchText, unwrap } from './vm-errors.js';

/** What a sandbox is made of: the source, the limits and the grants. */
export interface EngineOptions {
  source: string;
  timeoutMs: number;
  memoryMb: number;
  functions: Record<string, (...args: any[]) => unknown>;
  log?: (...args: unknown[]) => void;
}

/** The host's side of one call: what the sandboxed context reads and writes through the bridge. */
export interface CallHost {
  read(field: string): string | undefined;
  setHookState?(name: string, value: unknown): void;
  emit?(event: unknown): void;
}

/** One hook of the module as the sandbox described it. */
export interface HookInfo {
  exportName: string;
  name?: string;
  hasName: boolean;
  className?: string;
  methods: string[];
}

interface Instance {
  runtime: QuickJSRuntime;
  vm: QuickJSContext;
  invoke: QuickJSHandle;
  hooks: HookInfo[];
  /** Epoch ms after which the engine interrupts what it runs (Infinity between calls). */
  deadline: number;
  /** The call in progress: the bridge answers it only. A limit a host reply went over is its `fault`. */
  current: { host: CallHost; fault?: Fault } | undefined;
  wake: () => void;
  dead: boolean;
  /** Whether the engine's last try to grow its memory was refused: an allocation it could not make. */
  memory: { ranOut: boolean };
}

type QuickJS = typeof import('quickjs-emscripten');
let loading: Promise<QuickJS> | undefined;

/** quickjs-emscripten, an optional peer: loaded when the first sandbox starts, with what to install if it is missing. */
function quickjs(): Promise<QuickJS> {
  loading ??= import('quickjs-emscripten').catch((error: unknown) => {
    loading = undefined;
    throw new SandboxError(`sandboxedHooks needs quickjs-emscripten, an optional peer dependency of koagent: npm install quickjs-emscripten@^0.32.0 (${(error as Error).message})`);
  });
  return loading;
}

const PAGE = 64 * 1024;
/** The WebAssembly module's own first memory: QuickJS starts in 16 MiB. */
const INITIAL_PAGES = 256;
/** Fixed: a larger stack lets deep recursion overrun the host's stack before QuickJS notices. */
const STACK_BYTES = 256 * 1024;

/**
 * What runs a source's hooks, on the host's thread (Sandbox) or on a thread of its own
 * (ThreadSandbox): the hooks the module gave, calls one at a time, the starts so far.
 */
export interface SandboxEngine {
  hooks(): Promise<HookInfo[]>;
  call(index: number, method: string, payload: string, host: CallHost): Promise<unknown>;
  close(): void;
  readonly starts: number;
}

export class Sandbox implements SandboxEngine {
  readonly #options: EngineOptions;
  #instance: Promise<Instance> | undefined;
  /** The instance that finished starting and is not left behind: a call needs no start. */
  #started: Instance | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** How many times a sandbox was started (1 after the first). */
  starts = 0;

  constructor(options: EngineOptions) {
    this.#options = options;
  }

  /** Start the first sandbox and describe the module's hooks (a bad module fails here). */
  async hooks(): Promise<HookInfo[]> {
    return (await this.#ready()).hooks;
  }

  /**
   * Call `method` of hook `index` with `payload` (the JSON of its arguments). Calls run one at a
   * time per sandbox; each gets the whole `timeoutMs` from when it starts.
   */
  call(index: number, method: string, payload: string, host: CallHost): Promise<unknown> {
    const run = this.#tail.then(() => this.#call(index, method, payload, host));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Whether the next call finds its sandbox started (none left behind since, none starting). */
  get warm(): boolean {
    return this.#started !== undefined && !this.#started.dead;
  }

  close(): void {
    this.#closed = true;
    const instance = this.#instance;
    this.#instance = undefined;
    void instance?.then(retire, () => undefined);
  }

  #ready(): Promise<Instance> {
    if (this.#closed) return Promise.reject(closedError());
    this.#instance ??= this.#start();
    return this.#instance;
  }

  async #start(): Promise<Instance> {
    this.starts++;
    const { source, timeoutMs, memoryMb, functions, log } = this.#options;
    const memory = { ranOut: false };
    const wasmMemory = cappedMemory(memoryMb, memory);
    const { newQuickJSWASMModule, newVariant, RELEASE_SYNC } = await quickjs();
    const engine = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory: wasmMemory as never }));
    const runtime = engine.newRuntime({ maxStackSizeBytes: STACK_BYTES, memoryLimitBytes: memoryMb * 1024 * 1024 });
    runtime.setModuleLoader((name) => (name === 'koagent' || name === 'koagent/hooks' ? KOAGENT_MODULE : { error: new Error(`hook source imports "${name}": a sandboxed hook may import only ToolResult (from 'koagent/hooks'), ToolError, textOf and mapText (from 'koagent')`) }));
    const vm = runtime.newContext();
    // Loading (compiling the prelude and the module, running its top level) gets more room than a call.
    const instance: Instance = { runtime, vm, invoke: vm.undefined, hooks: [], deadline: Date.now() + loadTimeMs(timeoutMs), current: undefined, wake: () => undefined, dead: false, memory };
    runtime.setInterruptHandler(() => Date.now() > instance.deadline);
    try {
      installBridge(instance, functions, log, memoryMb);
      unwrap(vm, vm.evalCode(prelude(Object.keys(functions), log !== undefined), 'koagent-prelude.js')).dispose();
      const evaluated = unwrap(vm, vm.evalCode(source, 'hooks.js', { type: 'module' }));
      runtime.executePendingJobs();
      // A module with top-level await evaluates to a promise of its namespace; others to the namespace.
      const state = vm.getPromiseState(evaluated);
      if (state.type !== 'fulfilled' || !state.notAPromise) evaluated.dispose();
      if (state.type !== 'fulfilled') {
        throw new Fault(undefined, state.type === 'rejected' ? describeError(vm, state.error) : 'it awaits something that never comes (top-level await)');
      }
      const register = unwrap(vm, vm.evalCode('globalThis.__koagent_register'));
      const order = vm.newString(JSON.stringify(exportOrder(source)));
      const described = unwrap(vm, vm.callFunction(register, vm.undefined, state.value, order));
      instance.hooks = JSON.parse(vm.getString(described)) as HookInfo[];
      for (const handle of [register, order, described, state.value]) handle.dispose();
      instance.invoke = unwrap(vm, vm.evalCode('globalThis.__koagent_invoke'));
    } catch (error) {
      retire(instance);
      if (memory.ranOut && !(error instanceof Fault && error.limit !== undefined)) throw loadLimitError('memoryMb', this.#options);
      if (error instanceof Fault) throw error.limit === undefined ? new SandboxError(`sandboxedHooks(source): the hook module did not load: ${error.detail}`) : loadLimitError(error.limit, this.#options);
      throw new SandboxError(`sandboxedHooks(source): the hook module did not load: ${(error as Error).message}`);
    } finally {
      instance.deadline = Infinity;
    }
    this.#started = instance;
    return instance;
  }

  async #call(index: number, method: string, payload: string, host: CallHost): Promise<unknown> {
    const instance = await this.#ready();
    const { vm, runtime } = instance;
    const current: NonNullable<Instance['current']> = { host };
    instance.current = current;
    instance.deadline = Date.now() + this.#options.timeoutMs;
    instance.memory.ranOut = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const args = [vm.newNumber(index), vm.newString(method), vm.newString(payload)];
      let result: QuickJSHandle;
      try {
        result = unwrap(vm, vm.callFunction(instance.invoke, vm.undefined, ...args));
      } finally {
        for (const handle of args) handle.dispose();
      }
      keepDeadline(instance);
      // A promise: run its jobs, and wait for granted host functions between them.
      let expired: Promise<'expired'> | undefined;
      for (;;) {
        if (current.fault !== undefined) throw current.fault;
        const state = vm.getPromiseState(result);
        if (state.type === 'fulfilled') {
          if (!state.notAPromise) result.dispose();
          result = state.value;
          break;
        }
        if (state.type === 'rejected') throw new Fault(undefined, describeError(vm, state.error));
        const jobs = runtime.executePendingJobs();
        if (jobs.error) throw new Fault(faultLimit(vm, jobs.error), describeError(vm, jobs.error));
        keepDeadline(instance);
        if (vm.getPromiseState(result).type !== 'pending') continue;
        expired ??= new Promise((resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(0, instance.deadline - Date.now()))));
        const woken = new Promise<'woken'>((resolve) => (instance.wake = () => resolve('woken')));
        if ((await Promise.race([woken, expired])) === 'expired') throw new Fault('timeoutMs', 'it was still waiting when its time was up');
      }
      const text = vm.typeof(result) === 'string' ? vm.getString(result) : undefined;
      result.dispose();
      // Work the hook left queued runs now, under its own deadline, not in a later call's.
      if (runtime.hasPendingJob()) {
        const jobs = runtime.executePendingJobs();
        if (jobs.error) throw new Fault(faultLimit(vm, jobs.error), describeError(vm, jobs.error));
        // An interrupt inside a queued job only rejects that job's promise: the clock tells.
        keepDeadline(instance);
      }
      // A host reply refused for its size fails the call, even if the hook caught the error.
      if (current.fault !== undefined) throw current.fault;
      if (text === undefined) throw new Fault(undefined, 'the sandbox answered with something other than the call\'s result');
      const answer = JSON.parse(text) as { kind?: string; name?: string; message?: string };
      // Running out of memory is catchable in QuickJS, and an interrupt inside an async function
      // rejects its promise: the prelude hands both back like a hook's throw.
      if (answer.kind === 'threw' && answer.name === 'InternalError') {
        if (answer.message === 'out of memory') throw new Fault('memoryMb', 'out of memory');
        if (answer.message === 'interrupted') throw new Fault('timeoutMs', 'interrupted');
      }
      // Out of memory so far that QuickJS could not make its error, it throws null: the refused
      // growth tells that from a hook's own `throw null`.
      if (answer.kind === 'threw' && instance.memory.ranOut) throw new Fault('memoryMb', 'out of memory');
      return answer;
    } catch (caught) {
      // A call that failed after its engine ran out of memory failed on memoryMb, whatever it threw.
      const overLimit = caught instanceof Fault && caught.limit !== undefined;
      const error = instance.memory.ranOut && !overLimit ? new Fault('memoryMb', 'out of memory') : caught;
      // Whatever stopped the call, the sandbox it ran in is not used again.
      this.#replace(instance);
      if (error instanceof Fault) throw error.limit === undefined ? new SandboxError(error.detail) : new SandboxError(`went over its ${limitText(error.limit, this.#options)}${error.note === undefined ? '' : `: ${error.note}`}`, error.limit);
      throw new SandboxError(`the sandbox broke (${(error as Error).message})`);
    } finally {
      clearTimeout(timer);
      instance.current = undefined;
      if (!instance.dead) instance.deadline = Infinity;
    }
  }

  /** Leave a broken or exceeded sandbox behind and start the next one now, ready for the next call. */
  #replace(instance: Instance): void {
    instance.dead = true;
    instance.current = undefined;
    if (this.#started === instance) this.#started = undefined;
    if (this.#closed) return;
    this.#instance = undefined;
    this.#instance = this.#start();
    this.#instance.catch(() => undefined);
  }
}

/**
 * Fail a call that ran past its deadline. The engine's interrupt cannot break one long native
 * step (a search of a long string): on the host's thread such a step runs to its end, and the
 * clock, read after each stretch of the engine's work, fails the call then.
 */
function keepDeadline(instance: Instance): void {
  if (Date.now() > instance.deadline) throw new Fault('timeoutMs', 'it ran past its deadline');
}

/**
 * The WebAssembly memory of one engine, `memoryMb` at most (the engine cannot grow it further).
 * The engine grows it through `grow`: a refusal past the maximum is an allocation the engine
 * could not make, kept in `memory.ranOut` until a later growth succeeds (the engine retries
 * smaller growths before it gives up).
 */
function cappedMemory(memoryMb: number, memory: { ranOut: boolean }): object {
  // Typed here: the project's lib (ES2023) has no WebAssembly declarations.
  type WasmMemory = { grow(pages: number): number };
  const { WebAssembly } = globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => WasmMemory } };
  const wasmMemory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: Math.max(INITIAL_PAGES, Math.floor((memoryMb * 1024 * 1024) / PAGE)) });
  const grow = wasmMemory.grow.bind(wasmMemory);
  wasmMemory.grow = (pages) => {
    try {
      const before = grow(pages);
      memory.ranOut = false;
      return before;
    } catch (error) {
      memory.ranOut = true;
      throw error;
    }
  };
  return wasmMemory;
}

/**
 * The host functions the prelude takes (and hides) at start. A host reply refused for a limit (a
 * SandboxError with `limit`, or text over the memory's share) is kept as the call's fault.
 */
function installBridge(instance: Instance, functions: EngineOptions['functions'], log: EngineOptions['log'], memoryMb: number): void {
  const { vm } = instance;
  const refuse = (fault: Fault): never => {
    if (instance.current !== undefined) instance.current.fault ??= fault;
    throw new Error(fault.detail);
  };
  const limited = (error: unknown): Fault | undefined => (error instanceof SandboxError && error.limit !== undefined ? new Fault(error.limit, error.message, error.message) : undefined);
  const bridge = vm.newObject();
  const answering = (): CallHost => {
    if (instance.current === undefined) throw new Error('the context is gone: it is readable only during the hook call');
    return instance.current.host;
  };
  const define = (name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
    const handle = vm.newFunction(name, fn);
    vm.setProp(bridge, name, handle);
    handle.dispose();
  };
  define('read', (field) => {
    const name = vm.getString(field);
    let json: string | undefined;
    try {
      json = answering().read(name);
    } catch (error) {
      const fault = limited(error);
      throw fault === undefined ? error : refuse(fault);
    }
    const over = tooMuchText(json, memoryMb, `ctx.${name}`);
    if (over !== undefined) refuse(new Fault('memoryMb', over, over));
    return json === undefined ? undefined : vm.newString(json);
  });
  // What the sandbox hands out is capped as what goes in is: parsed, it would land in the host's heap.
  const outgoing = (json: QuickJSHandle, what: string): unknown => {
    const text = vm.getString(json);
    const over = tooMuchText(text, memoryMb, what);
    return over === undefined ? JSON.parse(text) : refuse(new Fault('memoryMb', over, over));
  };
  define('setHookState', (name, json) => {
    const host = answering();
    host.setHookState?.(vm.getString(name), outgoing(json, 'the hook state') ?? null);
    return undefined;
  });
  define('emit', (json) => {
    answering().emit?.(outgoing(json, 'the event'));
    return undefined;
  });
  define('log', (_level, json) => {
    log?.(...(outgoing(json, 'what it logs') as unknown[]));
    return undefined;
  });
  define('call', (name, json) => {
    const current = instance.current;
    const called = vm.getString(name);
    const fn = functions[called];
    const args = outgoing(json, `what it passes to ${called}()`) as unknown[];
    const deferred = vm.newPromise();
    // The answer is handed in only while the same call is still running in a live sandbox.
    const live = () => !instance.dead && current !== undefined && instance.current === current;
    const settle = (handle: QuickJSHandle, ok: boolean) => {
      if (ok) deferred.resolve(handle);
      else deferred.reject(handle);
      handle.dispose();
      instance.wake();
    };
    void Promise.resolve()
      .then(() => fn(...args))
      .then((value) => {
        const text = JSON.stringify(value);
        const over = tooMuchText(text, memoryMb, `the answer of ${called}()`);
        if (over !== undefined) throw new SandboxError(over, 'memoryMb');
        return text;
      })
      .then(
        (text) => {
          if (!live()) return deferred.dispose();
          settle(text === undefined ? vm.undefined : vm.newString(text), true);
        },
        (error: unknown) => {
          if (!live()) return deferred.dispose();
          const fault = limited(error);
          if (fault !== undefined) current!.fault ??= fault;
          settle(vm.newError(error instanceof Error ? error.message : String(error)), false);
        },
      );
    return deferred.handle;
  });
  vm.setProp(vm.global, '__koagent_bridge', bridge);
  bridge.dispose();
}

/**
 * Leave a sandbox behind. It is dropped whole, not disposed: a sandbox stopped mid-call holds
 * handles QuickJS would refuse to free (it aborts), and its WebAssembly module and memory go
 * once nothing refers to them.
 */
function retire(instance: Instance): void {
  instance.dead = true;
  instance.current = undefined;
}

/** The names a module exports, in the order its source gives them (a namespace sorts them). */
export function exportOrder(source: string): string[] {
  const names: string[] = [];
  const pattern = /export\s+(?:async\s+)?(?:const|let|var|function\s*\*?|class)\s+([A-Za-z_$][\w$]*)|export\s*\{([^}]*)\}/g;
  for (const match of source.matchAll(pattern)) {
    if (match[1] !== undefined) names.push(match[1]);
    else for (const part of match[2].split(',')) {
      const name = part.trim().split(/\s+as\s+/).at(-1)?.trim();
      if (name) names.push(name);
    }
  }
  return names;
}
