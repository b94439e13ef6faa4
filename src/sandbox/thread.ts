// A sandbox on a thread of its own: the engine (engine.ts) runs in a worker thread, kept warm for
// every call and run of its hooks, so a hook that loops holds that thread, never the host's. The
// host keeps the deadline too: a worker that has not answered a call by timeoutMs (plus a margin
// its own interrupt answers well within) is terminated, the call fails on the time limit, and a
// new worker is started for the next call; so is one that crashed.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { CallHost, EngineOptions, HookInfo, SandboxEngine } from './engine.js';
import { closedError, limitText, loadLimitError, loadTimeMs, SandboxError } from './sandbox-error.js';
import type { FromWorker, SyncReply, ToWorker, WorkerSetup } from './messages.js';
import { tooMuchText } from './vm-errors.js';

/** How long past a call's deadline the host waits for the worker's own answer before stopping it. */
export function hostMarginMs(timeoutMs: number): number {
  return Math.max(100, Math.ceil(timeoutMs / 4));
}

/** Past the loading deadline, the host waits this long more: a fresh engine takes a while to compile. */
const LOAD_MARGIN_MS = 1000;

/** How long a new worker may take to start (run its module) before the host stops it; generous, as tsx compiles it from source in tests. */
const BOOT_MS = 30_000;

interface InFlight {
  id: number;
  host: CallHost;
  resolve(answer: unknown): void;
  reject(error: SandboxError): void;
}

/** One worker and what the host knows of it. */
interface Thread {
  worker: Worker;
  replies: MessagePort;
  signal: Int32Array;
  loaded: Promise<HookInfo[]>;
  settleLoad: { resolve(hooks: HookInfo[]): void; reject(error: SandboxError): void } | undefined;
  /** Engines the worker started (reported with each answer). */
  starts: number;
  hadLoaded: boolean;
  stopped: boolean;
  crash: Error | undefined;
  timer: NodeJS.Timeout | undefined;
  inFlight: InFlight | undefined;
}

export class ThreadSandbox implements SandboxEngine {
  readonly #options: EngineOptions;
  #thread: Thread | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;
  #calls = 0;
  /** Engines started by workers that are gone. */
  #retiredStarts = 0;

  readonly #onWorker: ((worker: Worker) => void) | undefined;
  readonly #bootMs: number;

  /**
   * `onWorker` is told of each worker as it starts: a test can stop one, as a crash would.
   * `bootMs` bounds a worker's start, until its module runs (30 s; a test makes it short).
   */
  constructor(options: EngineOptions, testing: { onWorker?: (worker: Worker) => void; bootMs?: number } = {}) {
    this.#options = options;
    this.#onWorker = testing.onWorker;
    this.#bootMs = testing.bootMs ?? BOOT_MS;
  }

  /** How many sandboxes were started, in all the workers so far. */
  get starts(): number {
    return this.#retiredStarts + (this.#thread?.starts ?? 0);
  }

  hooks(): Promise<HookInfo[]> {
    return this.#ready().then((thread) => thread.loaded);
  }

  /** Calls go to the worker one at a time, so each one's deadline starts when the worker takes it. */
  call(index: number, method: string, payload: string, host: CallHost): Promise<unknown> {
    const run = this.#tail.then(() => this.#call(index, method, payload, host));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.#closed = true;
    const thread = this.#thread;
    this.#thread = undefined;
    if (thread !== undefined) this.#lose(thread, closedError());
  }

  #ready(): Promise<Thread> {
    if (this.#closed) return Promise.reject(closedError());
    this.#thread ??= this.#spawn();
    return Promise.resolve(this.#thread);
  }

  async #call(index: number, method: string, payload: string, host: CallHost): Promise<unknown> {
    let thread = await this.#ready();
    await thread.loaded;
    // A worker lost while this call waited its turn has a successor: the call goes there.
    if (thread.stopped) {
      thread = await this.#ready();
      await thread.loaded;
    }
    if (thread.stopped) throw new SandboxError('the sandbox\'s thread stopped before the call began');
    return new Promise((resolve, reject) => {
      const id = ++this.#calls;
      thread.inFlight = { id, host, resolve, reject };
      thread.worker.ref();
      this.#armCall(thread);
      this.#post(thread, { type: 'call', id, index, method, payload });
    });
  }

  /** The host's own deadline for the call in flight: its time limit, plus the margin. */
  #armCall(thread: Thread): void {
    const { timeoutMs } = this.#options;
    this.#arm(thread, timeoutMs + hostMarginMs(timeoutMs), () => new SandboxError(`went over its ${limitText('timeoutMs', this.#options)}`, 'timeoutMs'));
  }

  #spawn(): Thread {
    const { source, timeoutMs, memoryMb, functions, log } = this.#options;
    const channel = new MessageChannel();
    const setup: WorkerSetup = { source, timeoutMs, memoryMb, functionNames: Object.keys(functions), logs: log !== undefined, signal: new SharedArrayBuffer(4) };
    const worker = startWorker({ setup, replies: channel.port2 }, [channel.port2], memoryMb);
    let settleLoad: Thread['settleLoad'];
    const loaded = new Promise<HookInfo[]>((resolve, reject) => (settleLoad = { resolve, reject }));
    loaded.catch(() => undefined);
    const thread: Thread = { worker, replies: channel.port1, signal: new Int32Array(setup.signal), loaded, settleLoad, starts: 0, hadLoaded: false, stopped: false, crash: undefined, timer: undefined, inFlight: undefined };
    worker.on('message', (message: FromWorker) => this.#onMessage(thread, message));
    this.#onWorker?.(worker);
    // Until it says it booted, nothing else bounds a worker that never starts.
    this.#arm(thread, this.#bootMs, () => new SandboxError(`the sandbox's thread did not start within ${this.#bootMs} ms`));
    worker.on('error', (error) => (thread.crash ??= error));
    worker.on('exit', (code) => {
      if (!thread.stopped) this.#lose(thread, new SandboxError(`the sandbox's thread stopped (${thread.crash?.message ?? `exit code ${code}`})`));
    });
    return thread;
  }

  #onMessage(thread: Thread, message: FromWorker): void {
    if (thread.stopped) return;
    const inFlight = thread.inFlight;
    switch (message.type) {
      case 'booted':
        this.#arm(thread, loadTimeMs(this.#options.timeoutMs) + LOAD_MARGIN_MS, () => loadLimitError('timeoutMs', this.#options));
        return;
      case 'loaded':
      case 'loadFailed':
        this.#disarm(thread);
        thread.starts = message.starts;
        thread.worker.unref();
        if (message.type === 'loaded') {
          thread.hadLoaded = true;
          thread.settleLoad?.resolve(message.hooks);
        } else thread.settleLoad?.reject(new SandboxError(message.message, message.limit));
        thread.settleLoad = undefined;
        return;
      case 'begun':
        if (inFlight?.id === message.id) this.#armCall(thread);
        return;
      case 'answered':
      case 'failed':
        thread.starts = message.starts;
        if (inFlight?.id !== message.id) return;
        this.#disarm(thread);
        thread.inFlight = undefined;
        thread.worker.unref();
        if (message.type === 'answered') inFlight.resolve(message.answer);
        else inFlight.reject(new SandboxError(message.message, message.limit));
        return;
      case 'log':
        this.#options.log?.(...message.args);
        return;
      case 'call':
        this.#callFunction(thread, message.ask, message.name, message.args);
        return;
      case 'sync':
        this.#answerSync(thread, message, inFlight?.id === message.id ? inFlight.host : undefined);
        return;
    }
  }

  /** A granted function, called on the host; its answer (or failure) goes back as JSON text. */
  #callFunction(thread: Thread, ask: number, name: string, args: unknown[]): void {
    void Promise.resolve()
      .then(() => this.#options.functions[name](...args))
      .then(
        (value) => {
          const text = JSON.stringify(value);
          const over = tooMuchText(text, this.#options.memoryMb, `the answer of ${name}()`);
          this.#post(thread, over === undefined ? { type: 'called', ask, ...(text === undefined ? {} : { text }) } : { type: 'called', ask, error: over, limit: 'memoryMb' });
        },
        (error: unknown) => this.#post(thread, { type: 'called', ask, error: error instanceof Error ? error.message : String(error) }),
      );
  }

  /** Answer a context operation the worker waits for, then wake it. */
  #answerSync(thread: Thread, message: Extract<FromWorker, { type: 'sync' }>, host: CallHost | undefined): void {
    let reply: SyncReply;
    try {
      if (host === undefined) throw new Error('the context is gone: it is readable only during the hook call');
      const [first, second] = message.args;
      if (message.op === 'read') {
        const value = host.read(String(first));
        const over = tooMuchText(value, this.#options.memoryMb, `ctx.${String(first)}`);
        reply = over === undefined ? { seq: message.seq, ...(value === undefined ? {} : { value }) } : { seq: message.seq, error: over, limit: 'memoryMb' };
      } else {
        if (message.op === 'setHookState') host.setHookState?.(String(first), second);
        else host.emit?.(first);
        reply = { seq: message.seq };
      }
    } catch (error) {
      reply = { seq: message.seq, error: error instanceof Error ? error.message : String(error) };
    }
    thread.replies.postMessage(reply);
    Atomics.store(thread.signal, 0, 1);
    Atomics.notify(thread.signal, 0);
  }

  #post(thread: Thread, message: ToWorker): void {
    if (!thread.stopped) thread.worker.postMessage(message);
  }

  /** Stop the worker at `ms` from now unless it answers first, failing what waits with `fault()`. */
  #arm(thread: Thread, ms: number, fault: () => SandboxError): void {
    this.#disarm(thread);
    thread.timer = setTimeout(() => this.#lose(thread, fault()), ms);
  }

  #disarm(thread: Thread): void {
    clearTimeout(thread.timer);
    thread.timer = undefined;
  }

  /**
   * Leave a worker behind (stopped by the host, crashed, or closed): what waits on it fails with
   * `error`, and one that had loaded is followed at once by a new worker, ready for the next call.
   */
  #lose(thread: Thread, error: SandboxError): void {
    if (thread.stopped) return;
    thread.stopped = true;
    this.#disarm(thread);
    this.#retiredStarts += thread.starts;
    thread.starts = 0;
    thread.settleLoad?.reject(error);
    thread.settleLoad = undefined;
    thread.inFlight?.reject(error);
    thread.inFlight = undefined;
    thread.replies.close();
    void thread.worker.terminate();
    if (this.#thread !== thread) return;
    this.#thread = undefined;
    if (!this.#closed && thread.hadLoaded) this.#thread = this.#spawn();
  }
}

const here = import.meta.url;

/**
 * Start a worker on worker.ts's code: the built worker.js next to this file, or, when this file
 * runs from its TypeScript source (tests, tsx), worker.ts compiled through tsx, as the CLI loads
 * TypeScript agent modules.
 */
function startWorker(workerData: { setup: WorkerSetup; replies: MessagePort }, transferList: MessagePort[], memoryMb: number): Worker {
  // The worker's own heap holds little (text going in is capped by memoryMb): a bound keeps a
  // runaway there from taking the host's memory.
  const options = { workerData, transferList, resourceLimits: { maxOldGenerationSizeMb: 128 + memoryMb * 2 } };
  if (!here.endsWith('.ts')) return new Worker(new URL('./worker.js', here), options);
  const entry = JSON.stringify(new URL('./worker.ts', here).href);
  const api = tsxApi();
  const boot = api === undefined ? `import(${entry})` : `import(${JSON.stringify(api)}).then((api) => api.tsImport(${entry}, ${entry}))`;
  return new Worker(boot, { ...options, eval: true });
}

/** The file of tsx's ESM API (`tsx/esm/api`), if tsx is installed. */
function tsxApi(): string | undefined {
  try {
    const manifest = createRequire(here).resolve('tsx/package.json');
    const exported = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api'];
    return new URL(exported.import.default, pathToFileURL(manifest)).href;
  } catch {
    return undefined;
  }
}
