/**
 * Hooks from source text, run in a sandbox: a QuickJS engine in WebAssembly with no file system,
 * network, process, environment or timers, a time limit per call and a memory limit per
 * sandbox, on a worker thread of its own by default. Needs `quickjs-emscripten` 0.32, an optional
 * peer dependency. See docs/sandbox.md.
 *
 * @example
 * ```ts
 * import { sandboxedHooks } from 'koagent/sandbox';
 * ```
 *
 * @packageDocumentation
 * @module koagent/sandbox
 */
// The `koagent/sandbox` entry: only this entry loads quickjs-emscripten (when the first sandbox
// starts), so the package root never needs it.
/** @category Hooks */
export { sandboxedHooks, type SandboxedHooks } from './sandbox/sandboxed-hooks.js';
/** @category Hooks */
export { SandboxError } from './sandbox/sandbox-error.js';
