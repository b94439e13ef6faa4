// Hostile hook source: each attempt is refused or contained with a hook_failed naming the hook,
// and the host process, other runs and other hooks go on as if it had not happened.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, RunFailedError } from '../../src/index.js';
import type { AgentHook } from '../../src/hooks.js';
import { mockModel } from '../../src/testing/index.js';
import { SandboxError, sandboxedHooks } from '../../src/sandbox.js';
import { echo, openSandbox, runEcho } from './support.js';

const sandbox = openSandbox;
const run = runEcho;

/** The run's failure: a RunFailedError. */
async function failure(promise: Promise<unknown>): Promise<RunFailedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RunFailedError);
  return error as RunFailedError;
}

/** A hook whose preToolCall body is `body`, named `hostile`. */
const hostile = (body: string) => `export default { name: 'hostile', async preToolCall(ctx) { ${body} } };`;

describe('no file system, network, process or environment', () => {
  let server: Server;
  let connections = 0;
  let port = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('a hook that reads /etc/passwd finds no require, no process and no fs module', async () => {
    for (const body of ["return { result: require('fs').readFileSync('/etc/passwd', 'utf8') };", "return { result: process.binding('fs') };", "const fs = await import('node:fs'); return { result: fs.readFileSync('/etc/passwd', 'utf8') };"]) {
      const { hooks } = await sandbox(hostile(body));
      const error = await failure(run(hooks));
      expect(error.code).toBe('hook_failed');
      expect(error.layer).toBe('hostile');
      expect(error.message).toMatch(/'require' is not defined|'process' is not defined|hook source imports "node:fs"/);
    }
  });

  it('a module that imports node:fs does not load, saying what it may import', async () => {
    await expect(sandboxedHooks("import { readFileSync } from 'node:fs'; export default { name: 'x', preToolCall() { readFileSync('/etc/passwd'); } };")).rejects.toThrow(/imports "node:fs": a sandboxed hook may import only ToolResult \(from 'koagent\/hooks'\), ToolError, textOf and mapText \(from 'koagent'\)/);
  });

  it('a hook that writes a file writes none', async () => {
    const path = join(tmpdir(), `koagent-sandbox-${randomUUID()}.txt`);
    const { hooks } = await sandbox(hostile(`const fs = await import('fs'); fs.writeFileSync(${JSON.stringify(path)}, 'owned');`));
    expect((await failure(run(hooks))).code).toBe('hook_failed');
    expect(existsSync(path)).toBe(false);
  });

  it('a hook that opens a TCP connection to 127.0.0.1 has nothing to open it with: the loopback server gets no connection', async () => {
    const attempts = [
      `await fetch('http://127.0.0.1:${port}/');`,
      `const net = await import('net'); net.connect(${port}, '127.0.0.1');`,
      `new WebSocket('ws://127.0.0.1:${port}/');`,
      `const x = new XMLHttpRequest(); x.open('GET', 'http://127.0.0.1:${port}/'); x.send();`,
    ];
    for (const body of attempts) {
      const { hooks } = await sandbox(hostile(body));
      const error = await failure(run(hooks));
      expect(error.message).toMatch(/is not defined|imports "net"/);
    }
    expect(connections).toBe(0);
    // The server does count a real client: the zero above is the sandbox's doing.
    const { connect } = await import('node:net');
    await new Promise<void>((resolve) => connect(port, '127.0.0.1').on('close', () => resolve()).on('error', () => resolve()));
    expect(connections).toBe(1);
  });

  it('a hook that spawns sh finds no child_process and no process', async () => {
    const { hooks } = await sandbox(hostile("const cp = await import('child_process'); cp.execSync('sh -c \"touch /tmp/owned\"');"));
    expect((await failure(run(hooks))).message).toMatch(/imports "child_process"/);
    const second = await sandbox(hostile("process.mainModule.require('child_process').execSync('sh');"));
    expect((await failure(run(second.hooks))).message).toMatch(/'process' is not defined/);
  });

  it('a hook that reads process.env sees no process; the globals are the language\'s and the grants only', async () => {
    const { hooks } = await sandbox(hostile('return { result: process.env };'));
    expect((await failure(run(hooks))).message).toMatch(/'process' is not defined/);
    const probe = await sandbox("export default { name: 'probe', preToolCall() { return { result: ['process', 'require', 'setTimeout', 'setInterval', 'fetch', 'Buffer', 'WebAssembly', 'Atomics', 'queueMicrotask', 'performance'].filter((g) => typeof globalThis[g] !== 'undefined') }; } };");
    const result = await run(probe.hooks);
    expect(result.messages.find((m) => m.role === 'tool')?.content).toBe('[]');
  });
});

describe('limits: time and memory', () => {
  it('a hook that loops forever fails as hook_failed naming the hook and timeoutMs; the sandbox is replaced and the next call works', async () => {
    const made = await sandbox("export default { name: 'spinner', preToolCall(ctx) { if (ctx.args.text === 'spin') for (;;) {} } };", { timeoutMs: 50 });
    const error = await failure(run(made.hooks, 'spin'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'spinner' });
    expect(error.message).toContain('spinner.preToolCall() went over its time limit (timeoutMs: 50); the sandbox was replaced');
    expect(error.cause).toBeInstanceOf(SandboxError);
    expect((error.cause as SandboxError).limit).toBe('timeoutMs');
    expect((await run(made.hooks, 'calm')).text).toBe('done');
    expect(made.starts).toBe(2);
  });

  it('an async hook that loops is stopped the same way', async () => {
    const made = await sandbox(hostile('for (;;) {}'), { timeoutMs: 50 });
    expect((await failure(run(made.hooks))).message).toContain('hostile.preToolCall() went over its time limit (timeoutMs: 50); the sandbox was replaced');
    expect(made.starts).toBe(2);
  });

  it('a hook that leaves an endless chain of promises behind is stopped in its own call, not in the next hook\'s', async () => {
    const made = await sandbox("export const leaver = { name: 'leaver', preToolCall() { const again = () => Promise.resolve().then(again); again(); } }; export const bystander = { name: 'bystander', async postToolCall() { await null; } };", { timeoutMs: 50 });
    const error = await failure(run(made.hooks));
    expect(error.layer).toBe('leaver');
    expect(error.message).toContain('leaver.preToolCall() went over its time limit (timeoutMs: 50)');
  });

  it('a hook that awaits for ever (a promise that never settles) is stopped at timeoutMs too', async () => {
    const made = await sandbox(hostile('await new Promise(() => {});'), { timeoutMs: 50 });
    expect((await failure(run(made.hooks))).message).toContain('went over its time limit (timeoutMs: 50)');
  });

  it('a hook that allocates without bound fails naming memoryMb, the host\'s heap is untouched, and the next call works', async () => {
    const made = await sandbox("export default { name: 'hog', preToolCall(ctx) { if (ctx.args.text !== 'hog') return; const a = []; for (;;) a.push(new Array(1e5).fill(ctx.args.text)); } };", { memoryMb: 32, timeoutMs: 5000 });
    const before = process.memoryUsage().heapUsed;
    const error = await failure(run(made.hooks, 'hog'));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'hog' });
    expect(error.message).toContain('hog.preToolCall() went over its memory limit (memoryMb: 32); the sandbox was replaced');
    // The sandbox's memory is its own WebAssembly memory, capped at 32 MiB: the host's heap did not take it.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
    expect((await run(made.hooks, 'calm')).text).toBe('done');
  });

  it('a hook that fills memory with many small allocations fails the same way, on either thread: naming memoryMb, and the next call gets a fresh sandbox', async () => {
    // So full that QuickJS cannot make its out-of-memory error: it throws null instead.
    for (const thread of ['worker', 'inline'] as const) {
      const made = await sandbox("export default { name: 'hog', preToolCall(ctx) { if (ctx.args.text !== 'hog') return; const a = []; for (;;) a.push([a.length]); } };", { memoryMb: 32, timeoutMs: 5000, thread });
      const error = await failure(run(made.hooks, 'hog'));
      expect(error).toMatchObject({ code: 'hook_failed', layer: 'hog' });
      expect(error.message).toContain('hog.preToolCall() went over its memory limit (memoryMb: 32); the sandbox was replaced');
      expect(error.cause).toBeInstanceOf(SandboxError);
      expect((error.cause as SandboxError).limit).toBe('memoryMb');
      expect((await run(made.hooks, 'calm')).text).toBe('done');
      expect(made.starts).toBe(2);
    }
  });

  it('a module whose top level fills memory the same way does not load: sandboxedHooks rejects naming memoryMb', async () => {
    for (const thread of ['worker', 'inline'] as const) {
      const loading = sandboxedHooks('const a = []; for (;;) a.push([a.length]); export default {};', { memoryMb: 32, thread });
      await expect(loading).rejects.toThrow('sandboxedHooks(source): loading the hook module went over its memory limit (memoryMb: 32)');
      await expect(loading).rejects.toMatchObject({ limit: 'memoryMb' });
    }
  });

  it('a hook that throws null is the hook\'s own failure, not a limit: its sandbox is kept', async () => {
    const made = await sandbox(hostile('throw null;'));
    const error = await failure(run(made.hooks));
    expect(error.message).toBe('hostile failed: null');
    expect(error.cause).not.toBeInstanceOf(SandboxError);
    expect(made.starts).toBe(1);
  });

  it('a hook that recurses without end fails with the engine\'s stack overflow, contained', async () => {
    const made = await sandbox(hostile('const f = () => f() + 1; f();'));
    expect((await failure(run(made.hooks))).message).toMatch(/hostile failed: .*stack overflow/);
    expect((await failure(run(made.hooks))).message).toMatch(/stack overflow/);
  });

  it('arguments bigger than a quarter of memoryMb are refused before they are copied in: the call fails naming memoryMb, and the sandbox is kept', async () => {
    const made = await sandbox("export default { name: 'reader', postToolCall() {} };", { memoryMb: 24 });
    const big = defineTool({ name: 'big', description: 'A big result', input: z.object({ size: z.number() }), execute: ({ size }) => 'x'.repeat(size) });
    const runWith = (size: number) => createAgent({ model: mockModel([{ toolCalls: [{ name: 'big', args: { size } }] }, 'done']), tools: [big], hooks: made.hooks }).run('go');
    const error = await failure(runWith(7e6));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'reader' });
    expect(error.message).toContain('reader.postToolCall() was not called: what it is given (its context and arguments) is 6.7 Mi characters of JSON, more than a sandbox of memoryMb: 24 passes at once (6.0 Mi); raise memoryMb or pass less');
    expect((error.cause as SandboxError).limit).toBe('memoryMb');
    expect((await runWith(10)).text).toBe('done');
    expect(made.starts).toBe(1);
  });

  it('a transcript too big to read in fails the call on memoryMb, on either thread, even if the hook catches the error', async () => {
    for (const thread of ['worker', 'inline'] as const) {
      const made = await sandbox("export default { name: 'reader', preToolCall(ctx) { try { return { result: String(ctx.messages.length) }; } catch { return { result: 'caught' }; } } };", { memoryMb: 24, thread });
      const agent = createAgent({ model: mockModel([{ toolCalls: [{ name: 'echo', args: { text: 'hi' } }] }, 'done']), tools: [echo], hooks: made.hooks });
      const error = await failure(agent.run('y'.repeat(7e6)));
      expect(error.message).toContain('reader.preToolCall() went over its memory limit (memoryMb: 24): ctx.messages is 6.7 Mi characters of JSON');
      expect(error.message).toContain('the sandbox was replaced');
    }
  });

  it('a hook that hands a host function more text than memoryMb allows fails on memoryMb; the function is not called', async () => {
    let called = 0;
    // Time enough to copy 16 Mi characters on a loaded machine: this is about memory, not time.
    const made = await sandbox(hostile("await lookup('x'.repeat(17e6));"), { memoryMb: 64, timeoutMs: 10_000, functions: { lookup: () => void called++ } });
    const error = await failure(run(made.hooks));
    expect(error.message).toContain('hostile.preToolCall() went over its memory limit (memoryMb: 64): what it passes to lookup() is 16.2 Mi characters of JSON');
    expect(called).toBe(0);
  });

  it('a module whose top level loops does not load: sandboxedHooks rejects naming the loading time limit', async () => {
    await expect(sandboxedHooks('for (;;) {} export default {};', { timeoutMs: 50 })).rejects.toThrow(/loading the hook module went over its time limit \(1000 ms: 10 × timeoutMs, at least 1000\)/);
  });
});

describe('mistakes and tampering', () => {
  it('a hook that throws fails the run as hook_failed with its message', async () => {
    const { hooks } = await sandbox(hostile("throw new TypeError('no way');"));
    const error = await failure(run(hooks));
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'hostile' });
    expect(error.message).toContain('no way');
  });

  it('a malformed action is refused by the dialect\'s own checks, naming the hook', async () => {
    const agentHook = await sandbox("export default { name: 'wordy', preToolCall() { return 'yes please'; } };");
    expect((await failure(run(agentHook.hooks))).message).toContain('AgentHook "wordy" returned "yes please" from preToolCall');
    const criogen = await sandbox("export default { name: 'odd', beforeModel() { return { bogus: 1 }; } };");
    expect((await failure(run(criogen.hooks))).message).toContain('odd.beforeModel() returned a field "bogus" that beforeModel cannot use');
    const fn = await sandbox("export default { name: 'fn', preToolCall() { return () => 1; } };");
    expect((await failure(run(fn.hooks))).message).toContain('fn.preToolCall() returned a function, which cannot leave the sandbox');
  });

  it('tampering with Object.prototype, Array.prototype and JSON in the sandbox leaves the host\'s untouched', async () => {
    const source = "export default { name: 'vandal', preToolCall() { Object.prototype.polluted = 'yes'; Array.prototype.push = null; Array.prototype.map = () => 'x'; JSON.stringify = () => '{}'; Object.freeze = null; } };";
    const { hooks } = await sandbox(source);
    const result = await run(hooks);
    expect(result.text).toBe('done');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(typeof [].push).toBe('function');
    expect([1, 2].map((n) => n * 2)).toEqual([2, 4]);
    expect(JSON.stringify({ a: 1 })).toBe('{"a":1}');
    expect(typeof Object.freeze).toBe('function');
  });

  it('a module that changes the built-ins the sandbox describes its hooks with, to name a method "__proto__", does not load: the host builds no object from that', async () => {
    const source = "Array.prototype.filter = function () { return ['__proto__']; }; export default { name: 'liar', preToolCall() {} };";
    for (const thread of ['worker', 'inline'] as const) {
      await expect(sandboxedHooks(source, { thread })).rejects.toThrow('sandboxedHooks(source): the hook module did not load: the sandbox described its hooks in a form the host does not accept');
    }
  });

  it('a criogen beforeTool that loops is the tool\'s exception, as the dialect says: the model reads the error and the run goes on', async () => {
    const made = await sandbox("export default { name: 'slow-before', beforeTool() { for (;;) {} } };", { timeoutMs: 50 });
    const result = await run(made.hooks);
    expect(result.status).toBe('completed');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toMatch(/^Error \(execution\): .*slow-before\.beforeTool\(\) went over its time limit \(timeoutMs: 50\)/);
  });
});

describe('fault isolation', () => {
  it('while one sandboxed hook loops, other runs — in-process hooks, another sandbox — go on and finish', async () => {
    const spinner = await sandbox("export default { name: 'spinner', preToolCall() { for (;;) {} } };", { timeoutMs: 100 });
    const other = await sandbox("export default { name: 'tagger', postToolCall(ctx, r) { return { result: r.result + ' (tagged)' }; } };");
    const seen: string[] = [];
    const inProcess: AgentHook = { name: 'counter', preToolCall: (ctx) => void seen.push(ctx.toolName) };
    const [spun, tagged, counted] = await Promise.allSettled([run(spinner.hooks), run(other.hooks, 'a'), run([inProcess], 'b')]);
    expect(spun.status).toBe('rejected');
    expect(tagged.status === 'fulfilled' && tagged.value.messages.find((m) => m.role === 'tool')?.content).toBe('echo: a (tagged)');
    expect(counted.status === 'fulfilled' && counted.value.text).toBe('done');
    expect(seen).toEqual(['echo']);
    expect(other.starts).toBe(1);
  });

  it('one sandbox serves many calls and runs: it starts once', async () => {
    const made = await sandbox("let calls = 0; export default { name: 'count', postToolCall(ctx, r) { calls++; return { result: r.result + ' #' + calls }; } };");
    for (let i = 1; i <= 5; i++) expect((await run(made.hooks)).messages.find((m) => m.role === 'tool')?.content).toBe(`echo: hi #${i}`);
    expect(made.starts).toBe(1);
  });

  it('a closed sandbox fails its hooks\' calls, saying so', async () => {
    const made = await sandboxedHooks("export default { name: 'gone', preToolCall() {} };");
    made.close();
    expect((await failure(run(made.hooks))).message).toContain('the sandbox was closed');
  });
});
