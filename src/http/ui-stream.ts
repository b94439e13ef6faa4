// A run's logged events as the AI SDK's UI message stream (the protocol `useChat` reads): text and
// reasoning parts by step, tool parts from the model's calls to their results, approval requests
// carrying the digest a decision must bring back, errors, and the finish. The protocol cannot take
// text back: a retraction that arrives live is sent as a transient `data-koagent-retract` part (an
// `onData` of the client may apply it); a replay (a reconnect) applies the retractions before it
// sends, so a client that reconnects shows the text as the transcript has it.
import type { AgentEvent } from '../core/vocabulary/events.js';
import type { LoggedEvent } from '../stores/run-store.js';
import { approvalDigest } from './decisions.js';

/** One chunk of the UI message stream (the fields the AI SDK's `UIMessageChunk` has). */
export type UiChunk = { type: string; [field: string]: unknown };

type Kind = 'text' | 'reasoning';

/** A text or reasoning part being sent: its id, step, and (while replayed) its delta chunks, which a retraction trims. */
interface OpenPart {
  id: string;
  step: number;
  deltas: UiChunk[];
}

/**
 * Turns one run's events into UI message chunks. Events at offsets up to `replayUntil` are a
 * replay: their chunks are held until the replay is over, so retractions apply to them.
 */
export class UiStream {
  readonly #runId: string;
  readonly #replayUntil: number;
  /** Chunks held while replaying. */
  #held: UiChunk[] = [];
  readonly #open: Record<Kind, OpenPart | undefined> = { text: undefined, reasoning: undefined };
  /** Every part sent, by kind and step (the last one), for retractions of a replay. */
  readonly #parts = new Map<string, OpenPart>();
  /** Tool calls the client has been told of. */
  readonly #announced = new Set<string>();
  #segment = 0;
  #parts_made = 0;
  #end: Extract<AgentEvent, { type: 'run.end' }> | undefined;

  constructor(runId: string, options: { replayUntil?: number; segment?: number } = {}) {
    this.#runId = runId;
    this.#replayUntil = options.replayUntil ?? 0;
    this.#segment = options.segment ?? 0;
  }

  /** The first chunk: the message is the run's (its id the run's id, so a continuation or a replay lands in the same message). */
  start(): UiChunk[] {
    return [{ type: 'start', messageId: this.#runId }];
  }

  /** The chunks of one logged event to send now (none while a replay is held, all held ones once it is over). */
  push({ seq, event }: LoggedEvent): UiChunk[] {
    const replaying = seq <= this.#replayUntil;
    const out: UiChunk[] = [];
    if (event.agentPath === undefined) this.#chunks(event, out, replaying);
    if (replaying) {
      this.#held.push(...out);
      return seq === this.#replayUntil ? this.#release() : [];
    }
    return [...this.#release(), ...out];
  }

  /** The last chunks: the held ones, open parts closed, the run's error, and the finish. */
  finish(): UiChunk[] {
    const out = this.#release();
    this.#closeParts(out);
    const end = this.#end;
    if (end?.error !== undefined) out.push({ type: 'error', errorText: end.error.message });
    const reason = end === undefined ? 'other' : end.status === 'suspended' ? 'tool-calls' : end.status === 'failed' ? 'error' : end.stopReason === 'aborted' ? 'other' : 'stop';
    out.push({ type: 'finish', finishReason: reason });
    return out;
  }

  #release(): UiChunk[] {
    const held = this.#held.filter((chunk) => chunk.type !== 'text-delta' && chunk.type !== 'reasoning-delta' || (chunk.delta as string) !== '');
    this.#held = [];
    return held;
  }

  #chunks(event: AgentEvent, out: UiChunk[], replaying: boolean): void {
    switch (event.type) {
      case 'run.start':
        this.#segment = event.segment;
        return;
      case 'model.start':
        out.push({ type: 'start-step' });
        return;
      case 'text.delta':
      case 'reasoning.delta': {
        const kind: Kind = event.type === 'text.delta' ? 'text' : 'reasoning';
        const part = this.#part(kind, event.step, out);
        const chunk = { type: `${kind}-delta`, id: part.id, delta: event.delta };
        part.deltas.push(chunk);
        out.push(chunk);
        return;
      }
      case 'text.retract':
      case 'reasoning.retract': {
        const kind: Kind = event.type === 'text.retract' ? 'text' : 'reasoning';
        if (!(replaying && this.#trim(kind, event.step, event.text))) out.push({ type: 'data-koagent-retract', data: { kind, step: event.step, text: event.text }, transient: true });
        return;
      }
      case 'model.done':
        this.#closeParts(out);
        for (const call of event.message.toolCalls ?? []) this.#announce(call.id, call.name, call.args, out);
        out.push({ type: 'finish-step' });
        return;
      case 'tool.start':
        this.#announce(event.toolCallId, event.toolName, event.args, out);
        return;
      case 'approval.requested':
        this.#announce(event.toolCallId, event.toolName, event.args, out);
        out.push({ type: 'tool-approval-request', toolCallId: event.toolCallId, approvalId: approvalDigest(this.#runId, this.#segment, { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args, ...(event.path !== undefined ? { path: event.path } : {}) }) });
        return;
      case 'tool.done':
        this.#announce(event.toolCallId, event.toolName, undefined, out);
        out.push({ type: 'tool-output-available', toolCallId: event.toolCallId, output: event.result });
        return;
      case 'tool.error':
        this.#announce(event.toolCallId, event.toolName, undefined, out);
        out.push(event.error.kind === 'denied' && event.error.by === 'approval' ? { type: 'tool-output-denied', toolCallId: event.toolCallId } : { type: 'tool-output-error', toolCallId: event.toolCallId, errorText: event.error.message });
        return;
      case 'run.end':
        this.#closeParts(out);
        this.#end = event;
        return;
      default:
        return;
    }
  }

  /** The open part of `kind` for `step`, started (with its start chunk) when there is none. */
  #part(kind: Kind, step: number, out: UiChunk[]): OpenPart {
    const open = this.#open[kind];
    if (open !== undefined && open.step === step) return open;
    if (open !== undefined) out.push({ type: `${kind}-end`, id: open.id });
    const part: OpenPart = { id: `${kind}-${this.#runId}-${++this.#parts_made}`, step, deltas: [] };
    this.#open[kind] = part;
    this.#parts.set(`${kind}:${step}`, part);
    out.push({ type: `${kind}-start`, id: part.id });
    return part;
  }

  #closeParts(out: UiChunk[]): void {
    for (const kind of ['reasoning', 'text'] as const) {
      const open = this.#open[kind];
      if (open === undefined) continue;
      out.push({ type: `${kind}-end`, id: open.id });
      this.#open[kind] = undefined;
    }
  }

  /** Take `text` back from the end of the held deltas of `kind` at `step`; false when they do not end with it. */
  #trim(kind: Kind, step: number, text: string): boolean {
    const part = this.#parts.get(`${kind}:${step}`);
    if (part === undefined) return false;
    const shown = part.deltas.map((chunk) => chunk.delta as string).join('');
    if (!shown.endsWith(text)) return false;
    let left = text.length;
    for (let i = part.deltas.length - 1; i >= 0 && left > 0; i--) {
      const delta = part.deltas[i].delta as string;
      const cut = Math.min(left, delta.length);
      part.deltas[i].delta = delta.slice(0, delta.length - cut);
      left -= cut;
    }
    return true;
  }

  /** Tell the client of a tool call (once per stream), with its arguments when known. */
  #announce(toolCallId: string, toolName: string, args: unknown, out: UiChunk[]): void {
    if (this.#announced.has(toolCallId)) return;
    this.#announced.add(toolCallId);
    out.push({ type: 'tool-input-available', toolCallId, toolName, input: args ?? {} });
  }
}
