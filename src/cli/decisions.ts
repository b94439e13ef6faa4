// The decision `runs approve` and `runs deny` give: approve as asked, approve with arguments a
// person edited (`--args '<json>'`, checked against the tool's schema when the agent is known),
// or deny with a reason; each one on the record as given through the CLI, by `--actor` (by
// default, the name of the user running the command).
import { userInfo } from 'node:os';
import type { ApprovalDecision, PendingApproval } from '../core/vocabulary/state.js';
import { argumentIssues } from '../tools/argument-issues.js';
import type { CliAgent } from './agents.js';
import { CliError, EXIT } from './io.js';

/** What the command line asked for one run's pending calls. */
export interface DecisionFlags {
  approved: boolean;
  reason?: string;
  /** `--args`, as given (JSON text). */
  args?: string;
  /** `--actor`, as given; absent: the user running the command. */
  actor?: string;
}

/** The decisions to resume with, one per call of `pending`; `agent` (when known) checks edited arguments against its tool. */
export function decisionsFor(pending: readonly PendingApproval[], flags: DecisionFlags, agent: CliAgent | undefined): Record<string, ApprovalDecision> {
  const reason = flags.reason?.trim() === '' ? undefined : flags.reason;
  const actor = actorOf(flags.actor);
  const given = { surface: 'cli', ...(actor === undefined ? {} : { actor }), ...(reason === undefined ? {} : { reason }) };
  if (!flags.approved) return Object.fromEntries(pending.map((p) => [p.toolCallId, { approved: false, ...given }]));
  if (flags.args === undefined) return Object.fromEntries(pending.map((p) => [p.toolCallId, { approved: true, ...given }]));
  if (pending.length !== 1) throw new CliError(EXIT.usage, `--args edits one call's arguments: name it with --call <toolCallId> (the run waits for ${pending.map((p) => p.toolCallId).join(', ')})`);
  const call = pending[0];
  if ((call.path?.length ?? 0) > 0) throw new CliError(EXIT.usage, `${call.toolName} is a call of sub-agent ${call.path!.join(' › ')}: its arguments cannot be edited; approve or deny it as it is`);
  let args: unknown;
  try {
    args = JSON.parse(flags.args);
  } catch (error) {
    throw new CliError(EXIT.usage, `--args must be JSON (the tool's arguments, e.g. '{"env":"staging"}'): ${(error as Error).message}`);
  }
  checkArgs(call, args, agent);
  // The JSON as the person wrote it, not the schema's output: the call is approved as written.
  return { [call.toolCallId]: { approved: true, args, ...given } };
}

/** Who decides: `--actor`, or else the user running the command (none when the system cannot tell). */
function actorOf(flag: string | undefined): string | undefined {
  if (flag !== undefined) {
    const actor = flag.trim();
    if (actor === '') throw new CliError(EXIT.usage, '--actor needs a name (who decides, kept with the decision); leave it out to be recorded as the user running the command');
    return actor;
  }
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // No entry for this user id (a container, say): the environment may still name one.
    user = process.env.USER ?? process.env.LOGNAME ?? process.env.USERNAME;
  }
  return user === undefined || user.trim() === '' ? undefined : user.trim();
}

/** Edited arguments that do not fit the tool's schema are refused here, before anything resumes. */
function checkArgs(call: PendingApproval, args: unknown, agent: CliAgent | undefined): void {
  const tool = agent?.tools?.get(call.toolName);
  if (tool === undefined) {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new CliError(EXIT.usage, `--args must be a JSON object of ${call.toolName}'s arguments`);
    return;
  }
  const issues = argumentIssues(tool, args);
  if (issues.length === 0) return;
  throw new CliError(EXIT.usage, `--args do not fit ${call.toolName}'s schema: ${issues.join('; ')}`);
}
