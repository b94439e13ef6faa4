import type { AgentEvent, EventListener } from '../../core/vocabulary/events.js';
import type { RunResult } from '../../core/vocabulary/result.js';

/**
 * A run as it happens: iterate its events (the `onEvent` events plus `text.delta` and
 * `text.retract`), and await `result` for the `RunResult`. Breaking out of the loop early
 * cancels the run; the run still ends cleanly (`run.end` and `onEnd` fire once) before the
 * loop exits. Every kind of segment streams alike: `agent.stream`, and `run`, `send` and
 * `resume` with `{ stream: true }`; `recover({ stream: true })` streams each run it continues,
 * one after another, and its `result` is the list `recover` resolves with (`R`).
 *
 * @example const stream = agent.stream('Tell me a story');
 *          for await (const e of stream) if (e.type === 'text.delta') process.stdout.write(e.delta);
 *          const { usage } = await stream.result;
 */
export class AgentStream<R = RunResult> implements AsyncIterable<AgentEvent> {
  /** Settles when the run segment ends (with `recover`, when the last run does); rejects with a `RunFailedError` if it fails. */
  readonly result: Promise<R>;
  #queue: AgentEvent[] = [];
  #head = 0;
  #wake?: () => void;
  #finished = false;
  #failure?: { error: unknown };
  #iterated = false;
  readonly #cancel: (reason: string) => void;

  /** @internal `start` begins the run with the listener that feeds this stream. */
  constructor(start: (listener: EventListener) => Promise<R>, cancel: (reason: string) => void) {
    this.#cancel = cancel;
    this.result = start((event) => {
      this.#queue.push(event);
      this.#wakeUp();
    });
    this.result.then(
      () => this.#end(),
      (error) => this.#end({ error }),
    );
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #end(failure?: { error: unknown }): void {
    this.#finished = true;
    this.#failure = failure;
    this.#wakeUp();
  }

  #take(): AgentEvent {
    const event = this.#queue[this.#head++];
    // Drop what was read now and then, so a long stream holds only what is unread.
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  /** The run's events as they happen; iterate once. Leaving the loop early cancels the run. */
  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    if (this.#iterated) throw new TypeError('agent.stream(): a stream can be iterated once; start another run to iterate again');
    this.#iterated = true;
    return {
      next: async () => {
        for (;;) {
          if (this.#head < this.#queue.length) return { value: this.#take(), done: false };
          if (this.#finished) {
            // The run's failure ends the loop with that error; `result` rejects with it too.
            if (this.#failure !== undefined) throw this.#failure.error;
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => (this.#wake = resolve));
        }
      },
      return: async () => {
        if (!this.#finished) {
          this.#cancel('the stream consumer stopped reading');
          await this.result.catch(() => undefined);
        }
        this.#queue = [];
        this.#head = 0;
        return { value: undefined, done: true };
      },
    };
  }
}
