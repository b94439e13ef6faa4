// The run's record of the world: what each provider call and each tool execution gave, and the
// run's state at each step's end, kept beside the layer trace so a stored run can be forked at a
// step, replayed without a model or a tool, or exported as a test fixture. Plain JSON.
import { createHash } from 'node:crypto';
import type { Message } from '../../core/vocabulary/messages.js';
import type { GenerateResult } from '../../core/vocabulary/model.js';
import type { Usage } from '../../core/vocabulary/state.js';

/**
 * The hook state name a run's record of the world is kept under (`state.hookState['koagent.replay']`).
 *
 * @example const record = replayRecordOf(state); console.log(record?.models.length, 'provider calls recorded');
 */
export const REPLAY_STATE = 'koagent.replay';

/**
 * What a run recorded with its layer trace (`layerTrace: true`): each provider call's request (as
 * a fingerprint) and reply, each tool execution's arguments and result, and a mark at the run's
 * start and at each step's end (the transcript's length, the usage, the hook states set since
 * the last mark). Handed to the state once per segment, like the trace.
 *
 * @example const record = replayRecordOf(state)!; const steps = record.marks.filter((m) => m.kind === 'step').map((m) => m.step);
 */
export interface ReplayRecord {
  version: 1;
  /** Replies and results were not kept: a layer of the agent withholds values (`traceValues: false`). Marks are kept. */
  withheld?: true;
  /** Every call of a provider (turns, retries, side calls), in the order made. */
  models: RecordedModelCall[];
  /** Every entry into a tool's `execute`, in the order made. */
  tools: RecordedToolCall[];
  /** The run's start, each step's end, and each turn's request, in the order they came. */
  marks: RunMark[];
}

/**
 * One call of a provider: the request as the provider got it (a fingerprint, its length, its
 * other fields) and what came back.
 *
 * @example const failed = record.models.filter((call) => call.error !== undefined);
 */
export interface RecordedModelCall {
  /** `turn:<step>:<n>` for a turn's n-th attempt, `<purpose>:<n>` for the n-th side call of that purpose. */
  key: string;
  purpose: string;
  /** The turn's step (for a side call, the steps done then). */
  step: number;
  /** The provider's name, when it has one. */
  provider?: string;
  /** A fingerprint of the request's JSON — every field but the signal and, for a turn, its messages (the transcript, which a replay compares as such): a replayed request is the same when its digest is. */
  digest: string;
  /** How many messages the request held. */
  messages: number;
  /** The tools it offered, by name. */
  tools: string[];
  /** Its other fields (temperature, headers, response format …). */
  fields: Record<string, unknown>;
  /** What the provider gave (absent when it failed, or when values are withheld). */
  reply?: GenerateResult;
  error?: RecordedError;
}

/**
 * One entry into a tool's `execute`: the call, the arguments it got (as JSON), and what it
 * returned or threw.
 *
 * @example const results = new Map(record.tools.map((t) => [t.id, t.result]));
 */
export interface RecordedToolCall {
  id: string;
  name: string;
  step: number;
  /** The arguments as JSON (`'[withheld]'` when values are withheld). */
  args: unknown;
  /** What `execute` returned, as JSON (absent when it threw, or when values are withheld). */
  result?: unknown;
  error?: RecordedError;
  /** It ran a nested run (a sub-agent's) that waited for a human: a replay cannot give that back. */
  suspended?: true;
}

/**
 * An error as a record keeps it, so a replay can throw one like it.
 *
 * @example if (call.error?.retryable) console.log('a retryable failure', call.error.status);
 *
 * @inline
 */
export interface RecordedError {
  message: string;
  name?: string;
  code?: string;
  status?: number;
  retryable?: boolean;
  /** Thrown as a `ToolError` (the model reads it as is). */
  toolError?: boolean;
  /** A `ProviderError`'s kind and the provider's own message. */
  kind?: string;
  providerMessage?: string;
}

/**
 * A point of the run: `start` (its first segment began, before any run layer), `step` (`step`
 * steps were done and the next turn began, before any model layer), `request` (turn `step`'s
 * request reached the provider). The state there is the transcript's first `messages` messages
 * (those of the first later mark that kept `transcript`, or of the run's transcript), and, for
 * `start` and `step`, `usage` and the hook states as set up to there.
 *
 * @example const mark = record.marks.find((m) => m.kind === 'step' && m.step === 2);
 */
export interface RunMark {
  kind: 'start' | 'step' | 'request';
  step: number;
  segment: number;
  messages: number;
  /** A short fingerprint of the last of those messages, to tell that it was not changed since. */
  last?: string;
  /** The transcript then, whole: a later change rewrote it (compaction, a layer replacing messages). */
  transcript?: Message[];
  /** `start` and `step`: the ledger's calls made since the mark before. */
  calls?: string[];
  usage?: Usage;
  /** `start` and `step`: hook states set since the mark before, by name (koagent's trace and record left out). */
  hooks?: Record<string, unknown>;
  /** `request`: the key of its model call. */
  key?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The record of the world kept in a run state (or the record itself), if there is one.
 *
 * @example const record = replayRecordOf(result.state); if (record === undefined) console.log('run it with layerTrace: true');
 */
export function replayRecordOf(stateOrRecord: unknown): ReplayRecord | undefined {
  if (!isRecord(stateOrRecord)) return undefined;
  const candidate = stateOrRecord.version === 1 && Array.isArray(stateOrRecord.marks) ? stateOrRecord : isRecord(stateOrRecord.hookState) ? stateOrRecord.hookState[REPLAY_STATE] : undefined;
  return isRecord(candidate) && Array.isArray(candidate.models) && Array.isArray(candidate.tools) && Array.isArray(candidate.marks) ? (candidate as unknown as ReplayRecord) : undefined;
}

/** SHA-256 of `text`, in hex (`length` characters of it). */
export function digestOf(text: string, length = 64): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * A fingerprint of `text` (16 hex digits: two 32-bit FNV-1a hashes): cheap enough for every step,
 * for telling a value changed, never for keeping a secret (`digestOf` is SHA-256).
 */
export function fingerprint(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** A short fingerprint of one message. */
export function messageDigest(message: Message | undefined): string | undefined {
  return message === undefined ? undefined : fingerprint(JSON.stringify(message));
}

/**
 * The transcript at mark `index` of `record`: the first messages of the first mark from there
 * on that kept the transcript whole, else of `transcript` (the run's own). Undefined when that
 * cannot be told: the messages are gone, or the last of them changed since (a segment that
 * rewrote the transcript ended with its process, or a layer edited an old message in place).
 */
export function transcriptAt(record: ReplayRecord, transcript: readonly Message[], index: number): Message[] | undefined {
  const source = transcriptSource(record, transcript, index);
  return source === undefined ? undefined : structuredClone(source.slice(0, record.marks[index].messages));
}

/** Where the transcript at mark `index` is read from (its first `messages`, not copied), as `transcriptAt` tells it. */
export function transcriptSource(record: ReplayRecord, transcript: readonly Message[], index: number): readonly Message[] | undefined {
  const mark = record.marks[index];
  if (mark === undefined) return undefined;
  let source: readonly Message[] = transcript;
  for (let i = index; i < record.marks.length; i++) {
    const kept = record.marks[i].transcript;
    if (kept !== undefined) {
      source = kept;
      break;
    }
  }
  if (source.length < mark.messages) return undefined;
  if (mark.last !== undefined && mark.messages > 0 && messageDigest(source[mark.messages - 1]) !== mark.last) return undefined;
  return source;
}

/** An error as the record keeps it. */
export function recordedError(error: unknown): RecordedError {
  if (typeof error !== 'object' || error === null) return { message: String(error) };
  const e = error as { message?: unknown; name?: unknown; code?: unknown; status?: unknown; retryable?: unknown; kind?: unknown; providerMessage?: unknown };
  const out: RecordedError = { message: typeof e.message === 'string' ? e.message : String(error) };
  if (typeof e.name === 'string' && e.name !== 'Error') out.name = e.name;
  if (typeof e.code === 'string') out.code = e.code;
  if (typeof e.status === 'number') out.status = e.status;
  if (typeof e.retryable === 'boolean') out.retryable = e.retryable;
  if (e.name === 'ToolError') out.toolError = true;
  if (typeof e.kind === 'string') out.kind = e.kind;
  if (typeof e.providerMessage === 'string') out.providerMessage = e.providerMessage;
  return out;
}

/**
 * A value as JSON, for the record: what `JSON.stringify` keeps of it (a Date becomes its text,
 * a function or a class's methods go), or undefined when it is not JSON at all (a cycle).
 */
export function jsonValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
