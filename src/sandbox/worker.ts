// The entry of a sandbox's worker thread: one engine (engine.ts) on this thread, serving the calls
// the host sends. What the engine asks of the host goes back across the port: context reads,
// hook state and events synchronously (the hook waits for them, as it does in-process: the
// thread sleeps on a shared flag until the host answers), granted functions and logs as messages.
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { Sandbox, type CallHost } from './engine.js';
import type { FromWorker, SyncReply, ToWorker, WorkerSetup } from './messages.js';
import { SandboxError, type Limit } from './sandbox-error.js';

const { setup, replies } = workerData as { setup: WorkerSetup; replies: MessagePort };
const port = parentPort!;
const signal = new Int32Array(setup.signal);
const post = (message: FromWorker) => port.postMessage(message);

/** The call being served (the engine runs one at a time): granted functions are asked for it. */
let serving = 0;
let asks = 0;
const asked = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

const functions = Object.fromEntries(
  setup.functionNames.map((name) => [
    name,
    (...args: unknown[]) =>
      new Promise((resolve, reject) => {
        const ask = ++asks;
        asked.set(ask, { resolve, reject });
        post({ type: 'call', id: serving, ask, name, args });
      }),
  ]),
);

const engine = new Sandbox({
  source: setup.source,
  timeoutMs: setup.timeoutMs,
  memoryMb: setup.memoryMb,
  functions,
  log: setup.logs ? (...args: unknown[]) => post({ type: 'log', args }) : undefined,
});

/** An error that crossed from the host: one that names a limit stays a SandboxError, so the engine counts it as the call's fault. */
const fromHost = (message: string, limit: Limit | undefined): Error => (limit === undefined ? new Error(message) : new SandboxError(message, limit));

/** What an error becomes to cross to the host: its message, and the limit it names, if any. */
function toHost(error: unknown): { message: string; limit?: Limit } {
  const limit = error instanceof SandboxError ? error.limit : undefined;
  return { message: (error as Error).message, ...(limit === undefined ? {} : { limit }) };
}

let requests = 0;
/** Ask the host and wait for its answer: past the call's time the host stops this thread anyway. */
function ask(id: number, op: 'read' | 'setHookState' | 'emit', args: unknown[]): string | undefined {
  const seq = ++requests;
  Atomics.store(signal, 0, 0);
  post({ type: 'sync', id, seq, op, args });
  Atomics.wait(signal, 0, 0, setup.timeoutMs * 2);
  let reply: SyncReply | undefined;
  // A reply to an earlier request that gave up waiting may come first: it is skipped.
  do reply = receiveMessageOnPort(replies)?.message as SyncReply | undefined;
  while (reply !== undefined && reply.seq !== seq);
  if (reply === undefined) throw new Error('the host did not answer in time');
  if (reply.error !== undefined) throw fromHost(reply.error, reply.limit);
  return reply.value;
}

function hostFor(id: number): CallHost {
  return {
    read: (field) => ask(id, 'read', [field]),
    setHookState: (name, value) => void ask(id, 'setHookState', [name, value]),
    emit: (event) => void ask(id, 'emit', [event]),
  };
}

async function serve(message: Extract<ToWorker, { type: 'call' }>): Promise<void> {
  const { id, index, method, payload } = message;
  try {
    // After a fault the engine is starting its next sandbox: the call's time starts once it is up.
    if (!engine.warm) {
      await engine.hooks().catch(() => undefined);
      post({ type: 'begun', id });
    }
    serving = id;
    const answer = await engine.call(index, method, payload, hostFor(id));
    post({ type: 'answered', id, answer, starts: engine.starts });
  } catch (error) {
    post({ type: 'failed', id, ...toHost(error), starts: engine.starts });
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'call') void serve(message);
  else {
    const waiting = asked.get(message.ask);
    asked.delete(message.ask);
    if (waiting === undefined) return;
    if (message.error !== undefined) waiting.reject(fromHost(message.error, message.limit));
    else waiting.resolve(message.text === undefined ? undefined : JSON.parse(message.text));
  }
});

post({ type: 'booted' });
engine.hooks().then(
  (hooks) => post({ type: 'loaded', hooks, starts: engine.starts }),
  (error: unknown) => post({ type: 'loadFailed', ...toHost(error), starts: engine.starts }),
);
