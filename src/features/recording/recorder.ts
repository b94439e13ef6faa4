// One segment's recording of the world, in memory: marks, provider calls and tool executions
// added to the run's record as they happen, handed to the state as the segment ends.
import type { BaseContext } from '../../core/vocabulary/contexts.js';
import { copyJson, setOwn } from '../../core/vocabulary/json.js';
import type { Message } from '../../core/vocabulary/messages.js';
import type { GenerateOptions, GenerateResult } from '../../core/vocabulary/model.js';
import type { RunState } from '../../core/vocabulary/state.js';
import { TRACE_STATE } from '../layer-trace/record.js';
import { digestOf, fingerprint, jsonValue, messageDigest, recordedError, REPLAY_STATE, type RecordedModelCall, type RecordedToolCall, type ReplayRecord, type RunMark } from './record.js';

/**
 * Fingerprints of requests: every field but the signal, in the order the request has them — for
 * a turn, but its messages, which are the run's transcript (a mark keeps where they stood, and a
 * replay compares them with the stored transcript), so recording costs no pass over them. Each
 * tool spec's JSON is made once (specs are frozen).
 */
export class RequestDigests {
  readonly #specs = new WeakMap<object, string>();

  of(request: GenerateOptions, turn: boolean): string {
    const { signal: _signal, messages, tools, ...rest } = request;
    let text = JSON.stringify(rest);
    for (const spec of tools ?? []) {
      let json = this.#specs.get(spec);
      if (json === undefined) this.#specs.set(spec, (json = JSON.stringify(spec)));
      text += `|${json}`;
    }
    return fingerprint(turn ? text : `${text}|${JSON.stringify(messages)}`);
  }
}

/**
 * A request's fields other than its messages, tools and signal, as the record keeps them: header
 * values as fingerprints (a header may carry a key, which the state must never hold).
 */
export function requestFields(request: GenerateOptions): Record<string, unknown> {
  const { signal: _signal, messages: _messages, tools: _tools, headers, ...rest } = request;
  const fields = (jsonValue(rest) ?? {}) as Record<string, unknown>;
  if (headers !== undefined && headers !== null && typeof headers === 'object') {
    const named: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) setOwn(named, name, `sha256:${digestOf(String(value), 12)}`);
    fields.headers = named;
  }
  return fields;
}

/** Whether the transcript `now` no longer starts with the messages `before` (one was replaced, or it got shorter). */
function rewritten(before: readonly Message[], now: readonly Message[]): boolean {
  if (now.length < before.length) return true;
  for (let i = before.length - 1; i >= 0; i--) if (before[i] !== now[i]) return true;
  return false;
}

/**
 * The recording of one segment: it continues the run's record (a copy, so a state handed out
 * before is never changed) and knows, from its marks, which hook states and calls it has seen.
 */
export class Recorder {
  readonly record: ReplayRecord;
  /** Each hook state's JSON as of the last mark. */
  readonly #hooks = new Map<string, string>();
  readonly #calls = new Set<string>();
  /** Attempts so far per model call kind (`turn:<step>`, `side:<purpose>`). */
  readonly #attempts = new Map<string, number>();
  readonly #digests = new RequestDigests();
  /** Where the ledger's calls not yet marked begin (within a segment, the ledger only grows). */
  #ledgerFrom = 0;
  /** The transcript's messages as of the last mark (grown, not copied, while it only grows), and that mark: kept whole on it if they are rewritten later. */
  #last: { messages: Message[]; mark: RunMark } | undefined;

  constructor(readonly state: RunState, kept: ReplayRecord | undefined, readonly withhold: boolean) {
    this.record = { version: 1, models: [...(kept?.models ?? [])], tools: [...(kept?.tools ?? [])], marks: [...(kept?.marks ?? [])] };
    if (withhold || kept?.withheld === true) this.record.withheld = true;
    for (const mark of this.record.marks) {
      for (const id of mark.calls ?? []) this.#calls.add(id);
      for (const [name, value] of Object.entries(mark.hooks ?? {})) this.#hooks.set(name, JSON.stringify(value));
    }
    for (const call of this.record.models) {
      const kind = call.key.slice(0, call.key.lastIndexOf(':'));
      this.#attempts.set(kind, Math.max(this.#attempts.get(kind) ?? 0, Number(call.key.slice(kind.length + 1))));
    }
  }

  /** The run's start (`start`), or the end of step `step` as the next turn begins (`step`): its transcript, usage, new calls and hook states. */
  mark(kind: 'start' | 'step', step: number): void {
    const { state } = this;
    const mark: RunMark = { kind, step, segment: state.segment, messages: state.messages.length, usage: copyJson(state.usage) };
    const last = messageDigest(state.messages[state.messages.length - 1]);
    if (last !== undefined) mark.last = last;
    const calls: string[] = [];
    for (let i = this.#ledgerFrom; i < state.ledger.length; i++) {
      const { id } = state.ledger[i];
      if (!this.#calls.has(id)) calls.push(id);
      this.#calls.add(id);
    }
    this.#ledgerFrom = state.ledger.length;
    if (calls.length > 0) mark.calls = calls;
    const hooks: Record<string, unknown> = {};
    let changed = false;
    for (const name of Object.keys(state.hookState)) {
      if (name === TRACE_STATE || name === REPLAY_STATE) continue;
      const json = JSON.stringify(state.hookState[name]) ?? 'null';
      if (this.#hooks.get(name) === json) continue;
      this.#hooks.set(name, json);
      setOwn(hooks, name, JSON.parse(json));
      changed = true;
    }
    if (changed) mark.hooks = hooks;
    this.#capture(state.messages, mark);
  }

  /** A provider call begins: its entry (a turn's request marked in the transcript too). */
  modelCall(request: GenerateOptions, purpose: string, turnStep: number | undefined, provider: string | undefined): RecordedModelCall {
    const kind = turnStep === undefined ? `side:${purpose}` : `turn:${turnStep}`;
    const n = (this.#attempts.get(kind) ?? 0) + 1;
    this.#attempts.set(kind, n);
    const entry: RecordedModelCall = {
      key: `${kind}:${n}`, purpose, step: turnStep ?? this.state.steps, digest: this.#digests.of(request, turnStep !== undefined), messages: request.messages.length,
      tools: (request.tools ?? []).map((tool) => tool.name), fields: requestFields(request),
    };
    if (provider !== undefined) entry.provider = provider;
    this.record.models.push(entry);
    if (turnStep !== undefined) {
      const mark: RunMark = { kind: 'request', step: turnStep, segment: this.state.segment, messages: request.messages.length, key: entry.key };
      const last = messageDigest(request.messages[request.messages.length - 1]);
      if (last !== undefined) mark.last = last;
      this.#capture(request.messages, mark);
    }
    return entry;
  }

  replied(entry: RecordedModelCall, reply: GenerateResult): void {
    if (this.record.withheld !== true) entry.reply = copyJson(reply);
  }

  failed(entry: RecordedModelCall | RecordedToolCall, error: unknown): void {
    entry.error = this.record.withheld === true ? { message: '[withheld]' } : recordedError(error);
  }

  /** A tool's `execute` is entered for call `id`, with `args` (the call's arguments, as JSON). */
  toolCall(id: string, name: string, step: number, args: unknown): RecordedToolCall {
    // What a tool gets may be what a layer keeps out of the transcript (the values it redacts).
    const entry: RecordedToolCall = { id, name, step, args: this.record.withheld === true ? '[withheld]' : jsonValue(args) ?? {} };
    this.record.tools.push(entry);
    return entry;
  }

  toolResult(entry: RecordedToolCall, result: unknown, suspended: boolean): void {
    if (suspended) entry.suspended = true;
    else if (this.record.withheld !== true && result !== undefined) entry.result = jsonValue(result);
  }

  /** The segment ends: a transcript rewritten since the last mark is kept on it, and the record goes into the state. */
  flush(ctx: BaseContext): void {
    const last = this.#last;
    if (last !== undefined && rewritten(last.messages, this.state.messages)) last.mark.transcript = copyJson(last.messages);
    this.#last = undefined;
    ctx.setHookState(REPLAY_STATE, this.record);
  }

  #capture(messages: readonly Message[], mark: RunMark): void {
    const last = this.#last;
    if (last === undefined) this.#last = { messages: messages.slice(), mark };
    else if (rewritten(last.messages, messages)) {
      // The messages of the last mark were replaced since (compaction, a layer): kept whole there.
      last.mark.transcript = copyJson(last.messages);
      this.#last = { messages: messages.slice(), mark };
    } else {
      // Only added to: the new messages join the list, with no copy of the whole.
      for (let i = last.messages.length; i < messages.length; i++) last.messages.push(messages[i]);
      last.mark = mark;
    }
    this.record.marks.push(mark);
  }
}
