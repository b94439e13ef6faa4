// Hook source text for the sandbox tests: read from test/sandbox/hooks/, and loaded in-process the
// same way the sandbox reads it (default export, else named exports in source order; classes
// instantiated), so a test can run one source both ways and compare.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.js';
import type { AgentHook, Hook } from '../../src/hooks.js';
import { sandboxedHooks, type SandboxedHooks } from '../../src/sandbox.js';
import { mockModel } from '../../src/testing/index.js';
import { exportOrder } from '../../src/sandbox/engine.js';

/** The text of test/sandbox/hooks/<file>. */
export function hookSource(file: string): string {
  return readFileSync(fileURLToPath(new URL(`./hooks/${file}`, import.meta.url)), 'utf8');
}

const index = pathToFileURL(fileURLToPath(new URL('../../src/index.ts', import.meta.url))).href;
const hooks = pathToFileURL(fileURLToPath(new URL('../../src/hooks.ts', import.meta.url))).href;
let loaded = 0;

/** The hooks of `source` as ordinary in-process objects: its `koagent` import points at src/. */
export async function inProcessHooks(source: string): Promise<Array<AgentHook | Hook>> {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-hooks-'));
  const file = join(dir, `hooks-${++loaded}.mjs`);
  writeFileSync(file, source.replace(/from\s+'koagent'/g, `from ${JSON.stringify(index)}`).replace(/from\s+'koagent\/hooks'/g, `from ${JSON.stringify(hooks)}`));
  const ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const isClass = (v: unknown) => typeof v === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(v));
  const take = (v: unknown) => (isClass(v) ? new (v as new () => object)() : v) as AgentHook | Hook;
  if (ns.default !== undefined) return (Array.isArray(ns.default) ? ns.default : [ns.default]).map(take);
  return exportOrder(source).filter((name) => typeof ns[name] === 'object' || isClass(ns[name])).map((name) => take(ns[name]));
}

/** The one tool of the sandbox tests' runs. */
export const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });

/** One run with one call of `echo`, through `hooks`. */
export function runEcho(hooks: Array<AgentHook | Hook>, text = 'hi') {
  return createAgent({ model: mockModel([{ toolCalls: [{ name: 'echo', args: { text } }] }, 'done']), tools: [echo], hooks }).run('go');
}

/** A sandbox of `source` (32 MB unless given), closed when the test file ends. */
export async function openSandbox(source: string, options: Parameters<typeof sandboxedHooks>[1] = {}): Promise<SandboxedHooks> {
  const made = await sandboxedHooks(source, { memoryMb: 32, ...options });
  opened.push(made);
  return made;
}
const opened: SandboxedHooks[] = [];
afterAll(() => opened.splice(0).forEach((s) => s.close()));
