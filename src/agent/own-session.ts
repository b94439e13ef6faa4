// The session an agent object keeps in its own memory, for `send` without a store: one turn at
// a time, each on its own copy of the history, never past a run that waits for approval.
import { randomUUID } from 'node:crypto';
import { KoagentError } from '../core/vocabulary/errors.js';
import type { Message } from '../core/vocabulary/messages.js';
import { startingTranscript } from '../core/state/transcript-writer.js';
import type { RunState } from '../core/vocabulary/state.js';

/**
 * An agent object's own session: its id, its history as of the last segment that ended in it,
 * and whether a turn is under way.
 */
export class OwnSession {
  readonly id = `session_${randomUUID()}`;
  #messages: Message[];
  #state: RunState | undefined;
  #busy = false;

  constructor(opening: Message[]) {
    this.#messages = opening;
  }

  /** Run the next turn (`added` after the history) with `run`; refused while one is under way or the last run waits for a human. */
  async turn<R>(added: Message[], run: (messages: Message[]) => Promise<R>): Promise<R> {
    if (this.#busy) throw new KoagentError('session_busy', 'agent.send(): the previous send() has not finished; await it first (or use agent.run() for independent runs)');
    if (this.#state?.status === 'suspended') {
      throw new KoagentError('session_busy', 'agent.send(): the last run is waiting for approval; finish it with agent.resume(result.state, decisions) first');
    }
    this.#busy = true;
    try {
      // A new array per turn, so an earlier result's transcript is not changed by this one.
      return await run(startingTranscript(this.#messages, added));
    } finally {
      this.#busy = false;
    }
  }

  /** A segment of a run ended: if the run is of this session, the session goes on from it. */
  remember(state: RunState): void {
    if (state.sessionId !== this.id) return;
    this.#messages = state.messages;
    this.#state = state;
  }
}
