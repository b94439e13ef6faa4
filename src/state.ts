import { KoagentError } from './errors.js';
import type { Message, ToolMessage } from './messages.js';

export type RunStatus = 'running' | 'completed' | 'suspended' | 'failed';

/**
 * Why a segment stopped: `final` (a reply without tool calls), `hook_end` (a layer ended the
 * run), `max_steps`, `aborted`, `approval` (suspended), or a limit (`limit:model_calls`,
 * `limit:tool_calls`, `limit:tokens`).
 */
export type StopReason = 'final' | 'hook_end' | 'max_steps' | 'aborted' | 'approval' | `limit:${string}`;

/** Token and call counts, summed over every model call of the run (side calls included). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  modelCalls: number;
  toolCalls: number;
}

/** A tool call waiting for a human. `args` are those the layers produced, not the model's raw ones. */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  args: unknown;
  reason?: string;
  /** Names of sub-agents down to the one whose call this is (empty for the agent's own calls). */
  path?: string[];
}

/** A human's answer to one pending approval. */
export type ApprovalDecision = boolean | { approved: boolean; reason?: string };

/**
 * Each tool call of the run, by id: `pending` (received, not started), `running` (the tool's
 * `execute` was entered), `done` (its result is recorded). Nothing re-executes a call past
 * `pending`, whatever path reaches it again.
 */
export type LedgerEntry = 'pending' | 'running' | 'done';

/**
 * Everything needed to continue a run, as plain JSON: write it anywhere, resume it in another
 * process with `agent.resume(state, decisions)`.
 */
export interface RunState {
  version: 1;
  runId: string;
  sessionId: string;
  agentName: string;
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
  /** Decisions given to `resume`, kept until their calls settle. */
  decisions: Record<string, { approved: boolean; reason?: string; toolName?: string; args?: unknown }>;
  /** Results of the current turn's settled calls, held until the whole turn is settled. */
  settled: Record<string, ToolMessage>;
  ledger: Record<string, LedgerEntry>;
  /** What each hook saved with `{ state }`, by hook name. */
  hookState: Record<string, unknown>;
  /** Suspended sub-agent runs, by the parent's tool call id, with the decisions given for them. */
  children: Record<string, { state: RunState; decisions?: Record<string, ApprovalDecision> }>;
  error?: { code: string; message: string; layer?: string };
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

export function newState(runId: string, sessionId: string, agentName: string, messages: Message[]): RunState {
  return {
    version: 1, runId, sessionId, agentName, status: 'running', segment: 0, messages, steps: 0,
    usage: emptyUsage(), pendingApprovals: [], decisions: {}, settled: {}, ledger: {}, hookState: {}, children: {},
  };
}

const FIELDS: [keyof RunState, string][] = [
  ['runId', 'string'], ['sessionId', 'string'], ['agentName', 'string'], ['status', 'string'], ['segment', 'number'],
  ['messages', 'array'], ['steps', 'number'], ['usage', 'object'], ['pendingApprovals', 'array'], ['decisions', 'object'],
  ['settled', 'object'], ['ledger', 'object'], ['hookState', 'object'], ['children', 'object'],
];

const STATUSES = new Set<string>(['running', 'completed', 'suspended', 'failed']);

/** Check a state handed to `resume` (it may come from a database), naming the first bad field. */
export function checkState(value: unknown): RunState {
  const bad = (what: string) => new KoagentError('invalid_resume', `resume(state): ${what}; pass the \`state\` of a RunResult or of a RunFailedError, unchanged`);
  if (typeof value !== 'object' || value === null) throw bad('state is not an object');
  const state = value as RunState;
  if (state.version !== 1) throw bad(`state.version is ${JSON.stringify(state.version)}, expected 1`);
  for (const [field, type] of FIELDS) {
    const v = state[field];
    const ok = type === 'array' ? Array.isArray(v) : type === 'object' ? typeof v === 'object' && v !== null && !Array.isArray(v) : typeof v === type;
    if (!ok) throw bad(`state.${field} should be ${type === 'array' ? 'an array' : `a${type === 'object' ? 'n' : ''} ${type}`}`);
  }
  if (!STATUSES.has(state.status)) throw bad(`state.status is ${JSON.stringify(state.status)}, expected one of ${[...STATUSES].join(', ')}`);
  state.pendingApprovals.forEach((p, i) => {
    if (typeof p !== 'object' || p === null || typeof p.toolCallId !== 'string' || typeof p.toolName !== 'string') {
      throw bad(`state.pendingApprovals[${i}] should be { toolCallId: string, toolName: string, args }`);
    }
  });
  return state;
}
