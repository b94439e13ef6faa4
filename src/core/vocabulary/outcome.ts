import type { ToolContentPart } from './content.js';
import type { PendingApproval } from './state.js';
import type { ToolErrorKind } from './tool-error.js';

/**
 * A tool-level failure: what the model reads as the call's result (`Error (<kind>): <message>`).
 *
 * @example postToolCall(ctx, { error }) { if (error?.kind === 'denied') audit(ctx.toolName, error.message); }
 */
export interface ToolFailure {
  kind: ToolErrorKind;
  message: string;
  /** The layer, rule or guardrail that produced it, when known. */
  by?: string;
}

/**
 * What the `tool` stack's `next()` resolves to: the tool's result, a failure, or a pause for
 * approval. Return one without calling `next()` to settle the call yourself.
 *
 * @example tool: async (ctx, next) => (cache.has(ctx.toolName) ? { result: cache.get(ctx.toolName) } : next())
 */
export interface ToolOutcome {
  result: unknown;
  error?: ToolFailure;
  requiresApproval?: boolean;
  /** When approval is required: what the human is asked to approve. */
  approval?: { toolName: string; args: unknown; reason?: string };
  /** The layer that supplied `result` instead of running the tool. */
  replacedBy?: string;
  /**
   * What the model reads instead of `result` as JSON: text, or parts (an image). The tool's
   * `toModelOutput` sets it once every layer has settled the call; a layer that settles a call
   * itself may set it too.
   */
  content?: string | ToolContentPart[];
  /**
   * Set by koagent when a nested run behind the call (a sub-agent's run) waits for a human: its
   * state, opaque to everyone but the tool, and its pending approvals, which become the run's
   * own. Pass it on unchanged.
   */
  nested?: NestedRun;
}

/**
 * See `ToolOutcome.nested`: a run inside a tool call (a sub-agent's) waiting for a human. The
 * call waits with it: the run keeps its state behind the call and lists its approvals as its
 * own, and when the call runs again (after `resume`), the tool continues it.
 *
 * @example if (outcome.nested) console.log(`${outcome.nested.approvals.length} approvals wait inside a nested run`);
 */
export interface NestedRun {
  /** Its state: opaque to the run, read only by the tool that ran it. */
  state: unknown;
  /** Its pending approvals as this run lists them: each under an id unique in this run. */
  approvals: PendingApproval[];
  /** For each id of `approvals`, the approval's id in the nested run (where a decision on it goes). */
  ids: Record<string, string>;
}

/**
 * An outcome that settles a call with a tool error the model reads.
 *
 * @example tool: (ctx, next) => (ctx.args.path === '/' ? toolError('validation', 'Pick a directory below /') : next())
 */
export function toolError(kind: ToolErrorKind, message: string, by?: string): ToolOutcome {
  return { result: undefined, error: by === undefined ? { kind, message } : { kind, message, by } };
}

/**
 * An outcome that denies a call: the model sees a `denied` tool error with `reason`.
 *
 * @example tool: async (ctx, next) => (ctx.toolName === 'shell' ? deny('no shell here') : next())
 */
export function deny(reason: string): ToolOutcome {
  return toolError('denied', reason);
}

/** What the model reads for an error outcome. */
export function errorContent(error: ToolFailure): string {
  return `Error (${error.kind}): ${error.message}`;
}

/**
 * Serialise a result for the model, refusing what JSON cannot carry (functions, symbols,
 * BigInt, Map, Set, cycles, `undefined`) and naming where it was found.
 */
export function resultContent(value: unknown): string {
  if (typeof value === 'string') return value;
  // What JSON.stringify would give, without its setup cost (tools often return a number).
  if (typeof value === 'number' ? Number.isFinite(value) : typeof value === 'boolean') return String(value);
  let text: string | undefined;
  try {
    // Only objects can hide a function or a Map inside; a primitive needs no replacer walk.
    text = typeof value === 'object' && value !== null ? JSON.stringify(value, rejectNonJson) : JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`the result is not JSON: ${(error as Error).message}`);
  }
  if (text === undefined) {
    const type = typeof value;
    throw new TypeError(type === 'undefined' ? 'the result is not JSON: it is undefined (return null for "nothing")' : `the result is not JSON: it is a ${type}`);
  }
  return text;
}

function rejectNonJson(key: string, v: unknown): unknown {
  const type = typeof v;
  const what = type === 'function' || type === 'symbol' ? `a ${type}` : type === 'bigint' ? 'a BigInt'
    : v instanceof Map ? 'a Map (convert it with Object.fromEntries)' : v instanceof Set ? 'a Set (convert it with Array.from)' : undefined;
  if (what !== undefined) throw new TypeError(`${what} at ${key === '' ? 'the top level' : `key "${key}"`}`);
  return v;
}

