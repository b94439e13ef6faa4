// Helpers of the event log tests: what a reader that applies a log's text events has on its
// screen, and what a transcript says the same places should hold.
import { textOf, type AgentEvent, type Message } from '../../src/index.js';

/**
 * The text a reader shows for each step of the run's own model calls (sub-agents' left out),
 * applying each delta and retraction in order. A retraction must take back the end of what the
 * step shows: anything else is thrown, as a reader could not apply it.
 */
export function shownByStep(events: readonly AgentEvent[], kind: 'text' | 'reasoning' = 'text'): Map<number, string> {
  const shown = new Map<number, string>();
  for (const event of events) {
    if (event.agentPath !== undefined) continue;
    if (event.type === `${kind}.delta`) {
      const { step, delta } = event as { step: number; delta: string };
      shown.set(step, (shown.get(step) ?? '') + delta);
    } else if (event.type === `${kind}.retract`) {
      const { step, text } = event as { step: number; text: string };
      const now = shown.get(step) ?? '';
      if (!now.endsWith(text)) throw new Error(`a ${kind}.retract of step ${step} takes back ${JSON.stringify(text)}, which is not the end of what the step shows: ${JSON.stringify(now)}`);
      shown.set(step, now.slice(0, now.length - text.length));
    }
  }
  return shown;
}

/** What the reader shows, step by step, the empty steps left out. */
export function shownReplies(events: readonly AgentEvent[]): string[] {
  return [...shownByStep(events).entries()].sort(([a], [b]) => a - b).map(([, text]) => text).filter((text) => text !== '');
}

/** The texts of a transcript's assistant messages after its first `from`, the empty ones left out. */
export function transcriptReplies(messages: readonly Message[], from = 0): string[] {
  return messages.slice(from).filter((message) => message.role === 'assistant').map((message) => textOf(message.content)).filter((text) => text !== '');
}
