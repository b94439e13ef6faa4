// A fork's state: a stored run's state as it was after one of its steps — the transcript, the
// hook and layer state, the usage, the ledger — read from the run's record (never by running
// anything again), optionally edited, as the first state of a new run.
import type { ToolContentPart } from '../../core/vocabulary/content.js';
import { contentProblem } from '../../core/vocabulary/content.js';
import { copyJson, setOwn } from '../../core/vocabulary/json.js';
import { messageProblem, type Message } from '../../core/vocabulary/messages.js';
import { newState, type AgentIdentity, type LedgerCall, type RunState } from '../../core/vocabulary/state.js';
import { TRACE_STATE, traceOf, type LayerTraceRecord } from '../layer-trace/record.js';
import { replayRecordOf, REPLAY_STATE, transcriptAt, type ReplayRecord } from './record.js';

/**
 * What a fork changes in the state it takes (time travel): messages replaced, by their index in
 * the transcript at the fork point, and tool results replaced, by call id (the content the model
 * reads; an error result becomes a plain one).
 *
 * @example await fork(agent, runId, { atStep: 2, edit: { toolResults: { call_2: '{"balance": 0}' } } });
 *
 * @inline
 */
export interface ForkEdit {
  messages?: Record<number, Message>;
  toolResults?: Record<string, string | ToolContentPart[]>;
}

/** The steps of `record` a run can be forked after. */
export function forkSteps(record: ReplayRecord): number[] {
  return [...new Set(record.marks.filter((m) => m.kind === 'step').map((m) => m.step))];
}

/** The trace up to the fork point: the calls (and segments) of the steps taken. */
function traceUpTo(trace: LayerTraceRecord, step: number, segment: number): LayerTraceRecord {
  let cut = trace.calls.findIndex((call) => call.parentCallId === undefined && call.step > step);
  if (cut === -1) cut = trace.calls.length;
  const segments = (trace.segments ?? []).filter((s) => (s.parentCallId === undefined ? s.segment <= segment : s.firstCall < cut));
  return { version: 1, calls: structuredClone(trace.calls.slice(0, cut)), segments: structuredClone(segments) };
}

/** The record up to the fork point, the transcript there kept whole on its mark (an edit may change the fork's own). */
function recordUpTo(record: ReplayRecord, index: number, transcript: Message[]): ReplayRecord {
  const step = record.marks[index].step;
  const marks = copyJson(record.marks.slice(0, index + 1));
  marks[index].transcript = copyJson(transcript);
  const out: ReplayRecord = { version: 1, models: copyJson(record.models.filter((m) => m.step <= step)), tools: copyJson(record.tools.filter((t) => t.step <= step)), marks };
  if (record.withheld === true) out.withheld = true;
  return out;
}

function applyEdit(messages: Message[], edit: ForkEdit, where: string): void {
  for (const [key, message] of Object.entries(edit.messages ?? {})) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || index >= messages.length) throw new TypeError(`${where}: edit.messages[${key}]: the transcript at the fork point has messages 0 to ${messages.length - 1}`);
    const problem = messageProblem(message, `edit.messages[${key}]`);
    if (problem !== undefined) throw new TypeError(`${where}: ${problem}`);
    messages[index] = copyJson(message);
  }
  for (const [id, content] of Object.entries(edit.toolResults ?? {})) {
    const index = messages.findIndex((m) => m.role === 'tool' && m.toolCallId === id);
    if (index === -1) {
      const ids = messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
      throw new TypeError(`${where}: edit.toolResults: no result of call ${JSON.stringify(id)} at the fork point (${ids.length === 0 ? 'it has none' : `it has ${ids.join(', ')}`})`);
    }
    if (typeof content !== 'string') {
      const problem = contentProblem(content, 'tool', `edit.toolResults[${JSON.stringify(id)}]`);
      if (problem !== undefined) throw new TypeError(`${where}: ${problem}`);
    }
    const old = messages[index] as Extract<Message, { role: 'tool' }>;
    const { error: _error, ...metadata } = old.metadata ?? {};
    messages[index] = { ...old, content: copyJson(content), metadata: { ...metadata, editedInFork: true } };
  }
}

/**
 * The first state of a fork of `stored` after step `atStep`, for `agent`, as run `runId` of
 * session `sessionId`: a `TypeError` naming `where` says why there is none (no record, no such
 * step, a transcript no longer known, a bad edit).
 */
export function forkState(stored: RunState, atStep: number, edit: ForkEdit | undefined, agent: AgentIdentity, ids: { runId: string; sessionId: string }, where: string): RunState {
  const record = replayRecordOf(stored);
  if (record === undefined) throw new TypeError(`${where}: run ${stored.runId} was not recorded: a run is forked from its record, kept with its layer trace (createAgent({ layerTrace: true }), or { layerTrace: true } in the run's options)`);
  const index = record.marks.findIndex((m) => m.kind === 'step' && m.step === atStep);
  if (index === -1) {
    const steps = forkSteps(record);
    throw new TypeError(`${where}: run ${stored.runId} has no recorded end of step ${atStep} to fork at (${steps.length === 0 ? 'none is recorded' : `it can be forked after step ${steps.join(', ')}`}); a step's end is where the next model turn began`);
  }
  const mark = record.marks[index];
  const transcript = transcriptAt(record, stored.messages, index);
  if (transcript === undefined) throw new TypeError(`${where}: the transcript of run ${stored.runId} after step ${atStep} is no longer known (it was rewritten in a segment that did not finish); fork after a later step`);
  const hookState: Record<string, unknown> = {};
  const calls: string[] = [];
  for (const m of record.marks.slice(0, index + 1)) {
    calls.push(...(m.calls ?? []));
    for (const [name, value] of Object.entries(m.hooks ?? {})) setOwn(hookState, name, copyJson(value));
  }
  const trace = traceOf(stored);
  if (trace !== undefined) hookState[TRACE_STATE] = traceUpTo(trace, atStep, mark.segment);
  hookState[REPLAY_STATE] = recordUpTo(record, index, transcript);
  const messages = copyJson(transcript);
  if (edit !== undefined) applyEdit(messages, edit, where);
  const state = newState(ids.runId, ids.sessionId, agent, messages);
  const entries = new Map(stored.ledger.map((call) => [call.id, call.entry]));
  const ledger: LedgerCall[] = calls.map((id) => ({ id, entry: entries.get(id) ?? 'done' }));
  const made = new Set(calls);
  const log = (stored.decisionLog ?? []).filter((d) => made.has(d.toolCallId) && d.segment <= mark.segment);
  Object.assign(state, { segment: mark.segment, steps: atStep, usage: copyJson(mark.usage ?? state.usage), ledger, hookState, forkedFrom: { runId: stored.runId, step: atStep } });
  if (log.length > 0) state.decisionLog = structuredClone(log);
  return state;
}
