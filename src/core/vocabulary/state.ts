import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Message, ToolMessage } from './messages.js';

/**
 * Where a run stands: `running` during a segment, then `completed`, `suspended` (waiting for a human) or `failed`.
 *
 * @example if (state.status === 'suspended') await notifyReviewer(state.pendingApprovals);
 */
export type RunStatus = 'running' | 'completed' | 'suspended' | 'failed';

/**
 * Why a segment stopped: `final` (a reply without tool calls), `hook_end` (a layer ended the
 * run), `max_steps`, `aborted`, `approval` (suspended), a limit (`limit:model_calls`,
 * `limit:tool_calls`, `limit:tokens`), or a stop condition (`stop_when`, or the reason it gave).
 *
 * @example if (result.stopReason.startsWith('limit:')) console.warn('budget reached');
 */
export type StopReason = 'final' | 'hook_end' | 'max_steps' | 'aborted' | 'approval' | 'stop_when' | `limit:${string}` | `stop:${string}`;

/**
 * Checked before each model turn, as data in the agent's `stopWhen`: return `true` (stop reason
 * `stop_when`) or a stop reason of your own to end the segment there, anything else to go on.
 *
 * @example stopWhen: [stepCountIs(8), (state) => state.usage.totalTokens > 20_000 && 'stop:token_budget']
 */
export type StopCondition = (state: Readonly<RunState>) => boolean | StopReason | undefined | null;

/**
 * Token and call counts, summed over every model call of the run (side calls and sub-agents included).
 *
 * @example console.log(`${result.usage.modelCalls} model calls, ${result.usage.totalTokens} tokens`);
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /**
   * Every call made to a provider — turns, retries, side calls (`ctx.generate`), sub-agents' —
   * the failed ones included (a failed one adds no tokens). What `limits.modelCalls` counts.
   */
  modelCalls: number;
  /** Tool calls that settled: ran, or were refused, denied or failed; not ones waiting for a human. */
  toolCalls: number;
  /** Input tokens the provider read from its prompt cache (part of `inputTokens`), when it reports them. */
  cachedInputTokens?: number;
  /** Input tokens the provider wrote to its prompt cache (part of `inputTokens`), when it reports them. */
  cacheWriteInputTokens?: number;
  /**
   * Counters layers add with `ctx.countUsage(name, amount)` (a cost, cache hits): present once
   * counted, kept with the run and summed into the parent run's usage like the tokens.
   */
  [counter: string]: number | undefined;
}

/**
 * The stop reason a layer may end a run with (`ctx.end(output, reason)`): `hook_end`, a
 * `limit:<what>` or a `stop:<what>` of its own.
 *
 * @example return ctx.end({ spent: 1.02 }, 'limit:cost');
 *
 * @inline
 */
export type EndReason = 'hook_end' | `limit:${string}` | `stop:${string}`;

/**
 * A tool call waiting for a human. `args` are those the layers produced, not the model's raw ones.
 *
 * @example for (const p of result.pendingApprovals) console.log(`${p.toolName}(${JSON.stringify(p.args)})`, p.reason ?? '');
 */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  args: unknown;
  reason?: string;
  /** Names of sub-agents down to the one whose call this is (empty for the agent's own calls). */
  path?: string[];
}

/**
 * A human's answer to one pending approval. An approval may carry `args`: the call then runs
 * with those arguments instead of the ones asked about (the run's own calls, not a sub-agent's).
 * `actor` names who decided, `surface` where (default `'api'`); both go into the run's
 * `decisionLog`. `true` and `false` are `{ approved }` alone. An unknown key is refused.
 *
 * @example await agent.resume(result.state, { [pending.toolCallId]: { approved: false, reason: 'Not today', actor: 'ada@example.com' } });
 */
export type ApprovalDecision = boolean | { approved: boolean; reason?: string; args?: unknown; actor?: string | DecisionActor; surface?: DecisionSurface };

/**
 * Who decided: an id (a user name, an e-mail, an account id) and, if you like, a name to show.
 * A decision's `actor` may be given as the id alone (`'ada'`); the log keeps `{ id: 'ada' }`.
 *
 * @example await agent.resume(runId, { call_1: { approved: true, actor: { id: 'u_1842', name: 'Ada Lovelace' } } });
 *
 * @inline
 */
export interface DecisionActor {
  id: string;
  name?: string;
}

/**
 * Where a decision was made: `api` (a program calling `agent.resume`, the default), `cli`
 * (`koagent runs approve/deny`), `studio`, `worker-client` (`client.answer`), `mcp` (an MCP
 * client asked through elicitation), or a name of your own (lower case: letters, digits, `-`,
 * `_`, `.`, `:`; at most 64 characters), such as `'slack'`.
 *
 * @example await agent.resume(runId, { call_1: { approved: true, actor: 'ada', surface: 'slack' } });
 *
 * @inline
 */
export type DecisionSurface = 'api' | 'cli' | 'studio' | 'worker-client' | 'mcp' | (string & {});

/**
 * One human decision, as the run keeps it for good in `state.decisionLog`: which call, what was
 * decided, the arguments the human was asked about and, when they approved other ones, those;
 * why, who, through which surface, and when.
 *
 * @example for (const d of state.decisionLog ?? []) console.log(`${d.at} ${d.actor?.id ?? 'someone'} ${d.decision} ${d.toolName} via ${d.surface}`);
 */
export interface DecisionRecord {
  toolCallId: string;
  toolName: string;
  decision: 'approved' | 'denied';
  /** The arguments the human was asked to approve (the pending approval's). */
  args: unknown;
  /** The arguments they approved instead, when they edited them. */
  editedArgs?: unknown;
  reason?: string;
  actor?: DecisionActor;
  surface: DecisionSurface;
  /** When the run took the decision (the resume that brought it), as an ISO 8601 time. */
  at: string;
  /** The segment the decision resumed the run into: the segment in which the call then settled. */
  segment: number;
  /** For a sub-agent's call: the sub-agents' names, from the lead down. */
  path?: string[];
}

/**
 * How far a tool call of the run got: `pending` (received, not started), `running` (the tool's
 * `execute` was entered), `done` (its result is recorded). Nothing re-executes a call past
 * `pending`, whatever path reaches it again.
 *
 * @example const interrupted = state.ledger.filter((call) => call.entry === 'running').map((call) => call.id);
 */
export type LedgerEntry = 'pending' | 'running' | 'done';

/**
 * One tool call in the run's ledger: its id (as the transcript has it) and its entry.
 *
 * @example const entry = state.ledger.find((call) => call.id === toolCallId)?.entry;
 */
export interface LedgerCall {
  id: string;
  entry: LedgerEntry;
}

/**
 * Everything needed to continue a run, as plain JSON: write it anywhere, resume it in another
 * process with `agent.resume(state, decisions)`.
 *
 * @example await fs.writeFile('run.json', JSON.stringify(result.state)); const state: RunState = JSON.parse(await fs.readFile('run.json', 'utf8'));
 */
export interface RunState {
  /** The state format (3); `resume` also reads format 2, and refuses any other. */
  version: 3;
  runId: string;
  sessionId: string;
  /** The agent the run belongs to: its name, its id, and a fingerprint of its tools' names and schemas. */
  agentName: string;
  agentId: string;
  toolsFingerprint: string;
  status: RunStatus;
  /** Segments started so far (a run, each resume, each retry). */
  segment: number;
  stopReason?: StopReason;
  output?: unknown;
  messages: Message[];
  /** Model turns the loop has taken (what `maxSteps` counts). */
  steps: number;
  usage: Usage;
  pendingApprovals: PendingApproval[];
  /**
   * Decisions given to `resume`, by the id of the pending approval they answer, kept until their
   * calls settle (those on a nested run's approvals, until its record goes).
   */
  decisions: Record<string, { approved: boolean; reason?: string; toolName?: string; args?: unknown; actor?: DecisionActor; surface?: DecisionSurface }>;
  /**
   * Every human decision the run was given, in the order given, kept for good (append-only):
   * absent until the first one. See `DecisionRecord`.
   */
  decisionLog?: DecisionRecord[];
  /**
   * Results of the current turn's settled calls (each names its call by `toolCallId`), held
   * until every call of the turn is settled.
   */
  settled: ToolMessage[];
  /**
   * Every tool call of the run, in the order the replies made them. A list rather than an
   * object keyed by id: it keeps that order, and a call id, which the model writes, is never
   * made a key of an object.
   */
  ledger: LedgerCall[];
  /** What each hook saved with `{ state }`, by hook name. */
  hookState: Record<string, unknown>;
  /**
   * The nested runs kept behind calls (a sub-agent's run that waits for a human, or that failed
   * in an earlier attempt of the call), by tool call id: that run's state, and the ids its
   * approvals are listed under here mapped to its own ids.
   */
  children: Record<string, NestedRunRecord>;
  error?: { code: string; message: string; layer?: string };
  /** A fork's origin: the run it was made from and the step after which it took that run's state (`fork` of `koagent/replay`). */
  forkedFrom?: { runId: string; step: number };
}

/**
 * A nested run kept behind a call (see `RunState.children`). Opaque to the run: only the tool
 * that ran it reads `state`.
 *
 * @example const waiting = Object.keys(state.children); // calls whose nested run (a sub-agent's) is kept
 */
export interface NestedRunRecord {
  state: unknown;
  /** The id each of its pending approvals has in this run's `pendingApprovals` → its id in the nested run. */
  approvals: Record<string, string>;
  /**
   * Decisions on its approvals, by its own ids, in a state a resume wrote before decisions
   * stayed in the run's `decisions` (under the listed ids); read when the call runs again.
   */
  decisions?: Record<string, ApprovalDecision>;
}

/**
 * One segment of one run, as `claimResume` is asked to claim it before `agent.resume` starts the
 * next segment. Claim it atomically in a store every resuming process shares, and answer false
 * when it was claimed before: then no two processes continue the same state.
 *
 * @example claimResume: ({ runId, segment }) => db.insertIfAbsent('resumes', `${runId}#${segment}`)
 */
export interface ResumeClaim {
  runId: string;
  /** The segment the state ended (`state.segment`); the resume starts `segment + 1`. */
  segment: number;
  agentName: string;
  sessionId: string;
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, modelCalls: 0, toolCalls: 0 };
}

/** Who a run belongs to: the agent's name and id, and a fingerprint of its tools. */
export interface AgentIdentity {
  name: string;
  id: string;
  toolsFingerprint: string;
}

/** A name for this process as a worker, unique enough to tell what it holds from what another process holds: `host:pid:random`. */
export function workerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * A new run's id: `run_` and a UUID laid out as version 7 does, its first 48 bits the time in
 * milliseconds, so a run made later sorts later. Stores key a run's rows by its id: a running
 * run's new rows then go at the end of their tables' b-trees, not into the middle, where
 * every page that fills is split (more pages written per step).
 *
 * @example const state = newState(newRunId(), sessionId, identity, messages);
 */
export function newRunId(): string {
  const random = randomUUID();
  const ms = Date.now().toString(16).padStart(12, '0');
  return `run_${ms.slice(0, 8)}-${ms.slice(8)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}

/** A new run's state: nothing done yet, `messages` as its opening transcript. */
export function newState(runId: string, sessionId: string, agent: AgentIdentity, messages: Message[]): RunState {
  return {
    version: 3, runId, sessionId, agentName: agent.name, agentId: agent.id, toolsFingerprint: agent.toolsFingerprint, status: 'running', segment: 0, messages, steps: 0,
    usage: emptyUsage(), pendingApprovals: [], decisions: {}, settled: [], ledger: [], hookState: {}, children: {},
  };
}

/**
 * Orders `[id, …]` entries of the ledger as `transcript` made their calls: a call it no longer
 * shows (compacted away) comes first, as it was made earlier, and the sort is stable, so such
 * calls keep the order they came in.
 */
export function inCallOrder(transcript: readonly Message[]): (a: readonly [string, ...unknown[]], b: readonly [string, ...unknown[]]) => number {
  const made = new Map<string, number>();
  for (const message of transcript) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) if (!made.has(call.id)) made.set(call.id, made.size);
  }
  return (a, b) => (made.get(a[0]) ?? -1) - (made.get(b[0]) ?? -1);
}
