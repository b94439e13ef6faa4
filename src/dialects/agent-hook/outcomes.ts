// What AgentHook methods return, turned into tool outcomes. A hook's mistake (a value that is no
// outcome) throws, and the caller blames the hook by name, so the run fails saying which one.
import { z } from 'zod';
import { approvalBreach, toolError, type ToolContext, type ToolOutcome } from '../../api.js';

const PRE_KEYS = ['deny', 'result', 'input'] as const;

function shown(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    if (text !== undefined) return text.length > 120 ? `${text.slice(0, 117)}...` : text;
  } catch {
    // not JSON: fall through to the type
  }
  return typeof value === 'function' ? 'a function' : String(value);
}

/**
 * Values that mean "nothing": `undefined`, `null`, and the booleans and numbers that arrow
 * functions return by accident (`(ctx) => seen.push(ctx.toolName)`).
 */
function isNothing(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'boolean' || typeof value === 'number';
}

/**
 * What a pre-hook's return does to the call: `undefined` goes on; an outcome settles the call
 * (a denial, a supplied result, or an `{ input }` the tool's schema or the approval refuses).
 * A valid `{ input }` becomes `ctx.args` at once, so the next pre-hook sees it.
 */
export function preToolOutcome(ctx: ToolContext, hook: string, returned: unknown): ToolOutcome | undefined {
  if (isNothing(returned)) return undefined;
  if (typeof returned !== 'object' || Array.isArray(returned)) {
    const hint = typeof returned === 'string' ? ` (to deny the call, return { deny: ${shown(returned)} })` : '';
    throw new TypeError(`AgentHook "${hook}" returned ${shown(returned)} from preToolCall; return nothing, { deny: reason }, { result } or { input }${hint}`);
  }
  const out = returned as Record<string, unknown>;
  const keys = PRE_KEYS.filter((key) => key in out);
  if (keys.length !== 1) {
    const found = keys.length === 0 ? `none of deny, result or input (keys: ${Object.keys(out).join(', ') || 'none'})` : `${keys.join(' and ')} together`;
    throw new TypeError(`AgentHook "${hook}" returned an object with ${found} from preToolCall; return exactly one of { deny: reason }, { result } or { input }, or nothing`);
  }
  if (keys[0] === 'deny') return denied(ctx, hook, out.deny);
  if (keys[0] === 'result') return { result: out.result, replacedBy: hook };
  return replaceArgs(ctx, out.input, hook);
}

/**
 * A pre-hook's `{ input }`: the call's arguments from now on, checked at once — against the
 * tool's schema, and for a call a human approved, against what they approved — so the message
 * names the hook and the later pre-hooks do not run. Returns the outcome that settles the call
 * when they are refused, else undefined.
 */
function replaceArgs(ctx: ToolContext, args: unknown, hook: string): ToolOutcome | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return toolError('validation', `Invalid arguments for ${ctx.toolName} from hook ${hook}: { input } must be an object of arguments, got ${shown(args)}; the tool did not run`, hook);
  }
  const breach = approvalBreach(ctx.call.decision, ctx.toolName, args, hook);
  if (breach !== undefined) return toolError('denied', breach, hook);
  const tool = ctx.tool;
  if (tool !== undefined) {
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) return toolError('validation', `Invalid arguments for ${tool.name} from hook ${hook} ({ input }): ${z.prettifyError(parsed.error)}; the tool did not run`, hook);
  }
  ctx.call.setArgs(args as Record<string, unknown>);
  return undefined;
}

function denied(ctx: ToolContext, hook: string, reason: unknown): ToolOutcome {
  if (typeof reason !== 'string') {
    throw new TypeError(`AgentHook "${hook}" returned { deny: ${shown(reason)} } from preToolCall; the reason must be a string (the model reads it)`);
  }
  // Recorded under the hook's name: the layer holds every AgentHook of the agent.
  return ctx.deny(reason === '' ? `Denied by hook ${hook}` : reason, hook);
}

/**
 * What a post-hook's return does: nothing keeps the outcome; `{ result }` replaces what the model
 * sees. Replacing a failure turns the call into a success with that value, stamped with the hook
 * that supplied it; replacing while the call waits for approval is a mistake (there is no result).
 */
export function postToolOutcome(settled: ToolOutcome, hook: string, returned: unknown): ToolOutcome {
  if (isNothing(returned)) return settled;
  if (typeof returned !== 'object' || Array.isArray(returned) || !('result' in (returned as object))) {
    throw new TypeError(`AgentHook "${hook}" returned ${shown(returned)} from postToolCall; return nothing to keep the result, or { result } to replace what the model sees`);
  }
  if (settled.requiresApproval === true) {
    throw new TypeError(`AgentHook "${hook}" returned { result } from postToolCall for a call waiting for approval (result.requiresApproval is true); there is no result to replace yet: return nothing then, and replace the result when the approved call runs after resume`);
  }
  const result = (returned as { result: unknown }).result;
  if (settled.error !== undefined) return { result, replacedBy: hook };
  return { ...settled, result };
}
