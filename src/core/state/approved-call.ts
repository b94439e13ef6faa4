// The approved-call rule, in one place: a call a human approved runs only as they approved it —
// the same tool with the same arguments — and a call they denied does not run at all.
import { sameJson } from '../vocabulary/json.js';
import { toolError, type ToolOutcome } from '../vocabulary/outcome.js';
import type { RunState } from '../vocabulary/state.js';

/** A human's decision about one call, as the run state keeps it until the call settles. */
export type Decision = RunState['decisions'][string];

export function isApproved(decision: Decision | undefined): boolean {
  return decision?.approved === true;
}

/** A human said no: the call settles as `denied` with their reason and does not run. */
export function humanDenial(decision: Decision | undefined): ToolOutcome | undefined {
  if (decision === undefined || decision.approved) return undefined;
  return toolError('denied', decision.reason ?? 'A human denied this call', 'approval');
}

/**
 * The arguments a resumed call starts from: those the human approved (what the layers made of
 * the model's), so a layer that skips its re-fire does not undo its change; else the model's.
 */
export function startingArgs(decision: Decision | undefined, toolName: string, modelArgs: unknown): unknown {
  if (decision?.approved !== true || decision.args === undefined) return modelArgs;
  return (decision.toolName ?? toolName) === toolName ? decision.args : modelArgs;
}

/**
 * Why an approved call may not run as it stands (another tool, other arguments), as the
 * message the model reads; undefined when it is what the human approved (or nobody approved
 * anything). `by` names a hook whose new arguments are being judged.
 */
export function approvalBreach(decision: Decision | undefined, toolName: string, args: unknown, by?: string): string | undefined {
  if (decision?.approved !== true || decision.toolName === undefined) return undefined;
  if (decision.toolName === toolName && sameJson(decision.args, args)) return undefined;
  if (by !== undefined && decision.toolName === toolName) {
    return `Hook ${by} changed the input of a call a human had approved (approved ${show(decision.args)}, the hook gave ${show(args)}); the call was not run`;
  }
  return `The call changed after a human approved it (approved ${decision.toolName} with ${show(decision.args)}, now ${toolName} with ${show(args)}); it was not run`;
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
