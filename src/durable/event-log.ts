// A durable segment's events on their way to its run's log in the store (docs/streaming.md):
// buffered a few milliseconds, so a burst of text deltas is one append, and taken whole by each
// checkpoint, so the events of a step are written in the step's own transaction. A segment that
// continues a run first takes back what a dead worker streamed past the run's last checkpoint.
import type { AgentEvent, EventListener } from '../core/vocabulary/events.js';
import type { LoggedEvent } from '../stores/run-store.js';

/** How long events wait for others before they are appended on their own (a step end takes them sooner). */
export const EVENT_BATCH_MS = 10;

/** The `run.end` of a segment, as the segment decided it (the log adds `runId` and `at`). */
export type SegmentEnd = Omit<Extract<AgentEvent, { type: 'run.end' }>, 'runId' | 'at'>;

type Delta = Extract<AgentEvent, { type: 'text.delta' | 'reasoning.delta' }>;

const isDelta = (event: AgentEvent): event is Delta => event.type === 'text.delta' || event.type === 'reasoning.delta';

/** Two deltas of one stream: the same kind, run, agent and step (the later one may join the earlier). */
function sameStream(a: Delta, b: Delta): boolean {
  return a.type === b.type && a.step === b.step && a.runId === b.runId && JSON.stringify(a.agentPath) === JSON.stringify(b.agentPath);
}

/**
 * The events of one segment not yet in the store, in order. Consecutive deltas of one stream
 * (same kind, run, agent and step) are kept as one delta, their text joined: the log spells the
 * same text in fewer rows. `appendSoon` is asked for an append `EVENT_BATCH_MS` after the first
 * event that waits.
 *
 * @example const log = new EventLogWriter(() => append(log.take())); segmentListeners.push(log.listener);
 */
export class EventLogWriter {
  #buffer: string[] = [];
  /** The last event when it is a delta: the next delta of its stream joins it. */
  #open: Delta | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(private readonly appendSoon: () => void) {}

  /** What the segment's listeners include: every event of the segment (its sub-agents' too). */
  readonly listener: EventListener = (event) => this.push(event);

  push(event: AgentEvent): void {
    if (this.#closed) return;
    if (isDelta(event) && this.#open !== undefined && sameStream(this.#open, event)) {
      this.#open = { ...this.#open, delta: this.#open.delta + event.delta };
    } else {
      this.#seal();
      // Made JSON now: a value the run changes later is logged as it was.
      if (isDelta(event)) this.#open = { ...event };
      else this.#buffer.push(JSON.stringify(event));
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.appendSoon();
    }, EVENT_BATCH_MS);
    // A batch waiting must not keep the process alive by itself: the segment's end takes it.
    this.#timer.unref?.();
  }

  #seal(): void {
    if (this.#open === undefined) return;
    this.#buffer.push(JSON.stringify(this.#open));
    this.#open = undefined;
  }

  /** The events waiting, in order; from now on they are the caller's to write. */
  take(): string[] {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#seal();
    const taken = this.#buffer;
    this.#buffer = [];
    return taken;
  }

  /** The segment's end: its `run.end` is the last event logged (written with the last checkpoint); later ones are not. */
  end(end: SegmentEnd, runId: string): void {
    if (this.#closed) return;
    this.#seal();
    this.#buffer.push(JSON.stringify({ ...end, runId, at: Date.now() }));
    this.#closed = true;
  }

  /** Log nothing more (the segment is over, or its log failed). */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * A segment continues the run: take back what `tail` — the events logged after the run's
   * last checkpoint, by a worker that died — still shows. The run goes on from that checkpoint,
   * so none of that text is in its state; what it redoes streams anew. Each stream's shown text
   * (deltas minus retractions, per run, agent and step) is retracted whole, reasoning before
   * text, as a retry's is; these retractions come before anything the segment logs.
   */
  retract(tail: readonly LoggedEvent[]): void {
    const shown = new Map<string, { base: Pick<AgentEvent, 'runId' | 'agentPath'>; step: number; text: string; reasoning: string }>();
    for (const { event } of tail) {
      if (event.type !== 'text.delta' && event.type !== 'text.retract' && event.type !== 'reasoning.delta' && event.type !== 'reasoning.retract') continue;
      const key = JSON.stringify([event.runId, event.agentPath ?? null, event.step]);
      let stream = shown.get(key);
      if (stream === undefined) {
        const base: Pick<AgentEvent, 'runId' | 'agentPath'> = { runId: event.runId };
        if (event.agentPath !== undefined) base.agentPath = event.agentPath;
        shown.set(key, (stream = { base, step: event.step, text: '', reasoning: '' }));
      }
      const field = event.type.startsWith('text') ? 'text' : 'reasoning';
      if (event.type.endsWith('delta')) stream[field] += (event as Delta).delta;
      else {
        const taken = (event as { text: string }).text;
        // A retraction takes back the end of what its stream showed.
        stream[field] = stream[field].endsWith(taken) ? stream[field].slice(0, stream[field].length - taken.length) : '';
      }
    }
    const at = Date.now();
    for (const { base, step, text, reasoning } of shown.values()) {
      if (reasoning !== '') this.#buffer.push(JSON.stringify({ type: 'reasoning.retract', step, text: reasoning, ...base, at }));
      if (text !== '') this.#buffer.push(JSON.stringify({ type: 'text.retract', step, text, ...base, at }));
    }
  }
}
