// Where a sandbox's engine runs: by default on a worker thread of its own, so a hook that loops
// never holds the host's event loop; the host keeps the deadline itself, and a worker it stopped
// or that crashed is replaced. `thread: 'inline'` keeps the engine on the host's thread.
import { isMainThread, type Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { RunFailedError } from '../../src/index.js';
import { SandboxError, sandboxedHooks } from '../../src/sandbox.js';
import { marshal } from '../../src/sandbox/marshal.js';
import { ThreadSandbox } from '../../src/sandbox/thread.js';
import { openSandbox, runEcho } from './support.js';
import { gate } from '../support/core.js';
import { nextTurn } from '../support/waits.js';

const sandbox = openSandbox;
const run = runEcho;
const opened: Array<{ close(): void }> = [];
afterAll(() => opened.forEach((s) => s.close()));

async function failure(promise: Promise<unknown>): Promise<RunFailedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RunFailedError);
  return error as RunFailedError;
}

const spinner = "export default { name: 'spinner', preToolCall(ctx) { if (ctx.args.text === 'spin') for (;;) {} } };";
/** Tells the host (`looping()`) as it begins to loop. */
const looper = "export default { name: 'looper', async preToolCall(ctx) { if (ctx.args.text !== 'spin') return; await looping(); for (;;) {} } };";

describe('a looping hook and the host\'s event loop', () => {
  it('in a worker (the default) the host gets a turn of its event loop while the hook loops; inline not until the deadline has stopped the hook', async () => {
    const seen: Record<string, number> = {};
    for (const thread of ['worker', 'inline'] as const) {
      const probe = gate();
      // The worker's deadline is far: only the turn the host gets can end its wait.
      const made = await sandbox(looper, { thread, timeoutMs: thread === 'worker' ? 60_000 : 200, functions: { looping: () => probe.open() } });
      const call = run(made.hooks, 'spin').catch((e: unknown) => e);
      await probe.promise;
      await nextTurn();
      // The sandboxes started by then: the first still, or a second, as the deadline stopped the first.
      seen[thread] = made.starts;
      if (thread === 'worker') made.close();
      expect(await call).toBeInstanceOf(RunFailedError);
    }
    expect(seen).toEqual({ worker: 1, inline: 2 });
  });

  it('both fail the same way, naming the hook and timeoutMs, and the next call works', async () => {
    for (const thread of ['worker', 'inline'] as const) {
      const made = await sandbox(spinner, { timeoutMs: 50, thread });
      const error = await failure(run(made.hooks, 'spin'));
      expect(error).toMatchObject({ code: 'hook_failed', layer: 'spinner' });
      expect(error.message).toContain('spinner.preToolCall() went over its time limit (timeoutMs: 50); the sandbox was replaced');
      expect((await run(made.hooks, 'calm')).text).toBe('done');
      expect(made.starts).toBe(2);
    }
  });
});

describe('the host keeps the deadline', () => {
  // A long search of a long string is one native step the engine's interrupt cannot break: only
  // the host can stop it (left alone it would run for minutes).
  const stuck = "export default { name: 'stuck', preToolCall(ctx) { if (ctx.args.text === 'stick') return { result: 'a'.repeat(1e6).indexOf('a'.repeat(5e5) + 'b') }; } };";

  it('a worker that does not answer by timeoutMs is terminated: the call fails on the time limit, and a new worker serves the next call', async () => {
    const made = await sandbox(stuck, { timeoutMs: 200 });
    const error = await failure(run(made.hooks, 'stick'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'stuck' });
    expect(error.message).toContain('stuck.preToolCall() went over its time limit (timeoutMs: 200); the sandbox was replaced');
    expect((error.cause as SandboxError).limit).toBe('timeoutMs');
    expect((await run(made.hooks, 'calm')).text).toBe('done');
    expect(made.starts).toBe(2);
  });

  it('a worker that crashes mid-call fails that call, saying so, and is replaced for the next one', async () => {
    const workers: Worker[] = [];
    const thread = new ThreadSandbox({ source: stuck, timeoutMs: 10_000, memoryMb: 32, functions: {} }, { onWorker: (worker) => workers.push(worker) });
    opened.push(thread);
    await thread.hooks();
    const call = (text: string) => {
      const { payload, host } = marshal('preToolCall', [{ toolName: 'echo', args: { text }, metadata: {}, messages: [], setHookState() {} }]);
      return thread.call(0, 'preToolCall', payload, host);
    };
    const inFlight = call('stick');
    await new Promise((resolve) => setImmediate(resolve));
    await workers[0].terminate();
    await expect(inFlight).rejects.toThrow(/the sandbox's thread stopped \(exit code 1\)/);
    await expect(call('calm')).resolves.toMatchObject({ kind: 'nothing' });
    expect(workers).toHaveLength(2);
    expect(thread.starts).toBe(2);
  });

  it('a worker that does not start in time is stopped and the sandbox fails to load, saying so; the next use starts another', async () => {
    const workers: Worker[] = [];
    const exits: Promise<number>[] = [];
    // A millisecond: no worker runs its module that fast, so each start goes over the bound.
    const thread = new ThreadSandbox({ source: stuck, timeoutMs: 200, memoryMb: 32, functions: {} }, { bootMs: 1, onWorker: (worker) => (workers.push(worker), exits.push(new Promise((resolve) => worker.once('exit', resolve)))) });
    opened.push(thread);
    await expect(thread.hooks()).rejects.toThrow("the sandbox's thread did not start within 1 ms");
    await expect(thread.hooks()).rejects.toThrow("the sandbox's thread did not start within 1 ms");
    expect(workers).toHaveLength(2);
    await Promise.all(exits);
  });
});

describe('inline, one long native step', () => {
  // One search of a long string: a single step of the engine's, which its interrupt cannot break.
  const searcher = "export default { name: 'searcher', preToolCall(ctx) { if (ctx.args.text === 'search') return { result: 'a'.repeat(1 << 19).indexOf('a'.repeat(1000) + 'b') }; } };";

  it('runs to its end on the host\'s thread, and the call that overran fails then on timeoutMs, naming the hook; the next call works', async () => {
    const made = await sandbox(searcher, { timeoutMs: 50, thread: 'inline' });
    const error = await failure(run(made.hooks, 'search'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'searcher' });
    expect(error.message).toContain('searcher.preToolCall() went over its time limit (timeoutMs: 50); the sandbox was replaced');
    expect((error.cause as SandboxError).limit).toBe('timeoutMs');
    expect((await run(made.hooks, 'calm')).text).toBe('done');
    expect(made.starts).toBe(2);
  });
});

describe('host functions from a worker', () => {
  it('granted functions run on the host\'s thread, may be async, and answer across the port; log reaches the host; ctx reads and hook state cross too', async () => {
    const logged: unknown[][] = [];
    const ranOn: boolean[] = [];
    const source = `export default { name: 'asker', async preToolCall(ctx) {
      const price = await lookup(ctx.args.text);
      let refused = '';
      try { await refuse(); } catch (e) { refused = e.message; }
      log('priced', { price });
      ctx.setHookState('asker', { seen: ctx.messages.length });
      return { result: price.sku + ' costs ' + price.cents + ' / ' + refused };
    } };`;
    const made = await sandbox(source, {
      log: (...args) => logged.push(args),
      functions: {
        lookup: async (sku: string) => {
          ranOn.push(isMainThread);
          await nextTurn();
          return { sku, cents: 250 };
        },
        refuse: () => {
          throw new Error('not today');
        },
      },
    });
    const result = await run(made.hooks, 'A1');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toBe('A1 costs 250 / not today');
    expect(ranOn).toEqual([true]);
    // As inline: a string argument as it is, others as their JSON text.
    expect(logged).toEqual([['priced', '{"price":{"sku":"A1","cents":250}}']]);
    expect(result.state.hookState).toEqual({ asker: { seen: 2 } });
  });
});

describe('the thread option', () => {
  it('inline keeps the engine on the host\'s thread and serves calls as a worker does', async () => {
    const made = await sandbox("export default { name: 'tag', postToolCall(ctx, r) { return { result: r.result + ' (tagged)' }; } };", { thread: 'inline' });
    expect((await run(made.hooks, 'a')).messages.find((m) => m.role === 'tool')?.content).toBe('echo: a (tagged)');
    expect(made.starts).toBe(1);
  });

  it('a value other than worker or inline is refused, saying which fit; a near-miss key names thread', async () => {
    const source = "export default { name: 'x', preToolCall() {} };";
    await expect(sandboxedHooks(source, { thread: 'process' } as never)).rejects.toThrow(/sandboxedHooks\(source, options\): thread .*must be 'worker' \(the default: the engine on a thread of its own\) or 'inline'/);
    await expect(sandboxedHooks(source, { threads: 'inline' } as never)).rejects.toThrow(/threads is not an option of sandboxedHooks; did you mean `thread`\?/);
  });
});
