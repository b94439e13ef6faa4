// The error a sandboxed call or load fails with when a limit stops it or the sandbox breaks, and
// the words for the limits. Part of koagent/sandbox's public types, so it stays free of the
// engine's: quickjs-emscripten's declarations need the DOM library, which a Node project lacks.

/** The option a sandbox went over. */
export type Limit = 'timeoutMs' | 'memoryMb';

/**
 * A sandboxed hook call stopped by a limit, or a sandbox that broke: the sandbox it ran in is
 * replaced. `limit` names the option that was exceeded (`timeoutMs`, `memoryMb`), if one was.
 *
 * @example if (error.cause instanceof SandboxError && error.cause.limit === 'timeoutMs') alert(error.layer);
 */
export class SandboxError extends Error {
  // Spelt out, not `Limit`: the public type names no type the entry point does not export.
  constructor(message: string, readonly limit?: 'timeoutMs' | 'memoryMb') {
    super(message);
    this.name = 'SandboxError';
  }
}

/** The limits as the messages name them. */
type Limits = { timeoutMs: number; memoryMb: number };

/** Why a closed sandbox refuses a call. */
export function closedError(): SandboxError {
  return new SandboxError('the sandbox was closed (sandboxedHooks(...).close()); make a new one with sandboxedHooks(source)');
}

/** What loading a module may take: ten calls' time, and at least a second. */
export function loadTimeMs(timeoutMs: number): number {
  return Math.max(1000, timeoutMs * 10);
}

/** Loading the module went over a limit. */
export function loadLimitError(limit: Limit, options: Limits): SandboxError {
  return new SandboxError(`sandboxedHooks(source): loading the hook module went over its ${limit === 'timeoutMs' ? `time limit (${loadTimeMs(options.timeoutMs)} ms: 10 × timeoutMs, at least 1000)` : limitText(limit, options)}`, limit);
}

export function limitText(limit: Limit, options: Limits): string {
  return limit === 'timeoutMs' ? `time limit (timeoutMs: ${options.timeoutMs})` : `memory limit (memoryMb: ${options.memoryMb})`;
}
