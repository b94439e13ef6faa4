// A new run's input, prepared by the layers that ask for it before anything records it: the
// run state, a run store (which stores a run as it starts, before the run stack is entered),
// events and spans. A redaction layer needs exactly this: a run layer is too late for a store.
import { messageProblem, type Message } from '../core/vocabulary/messages.js';
import type { NamedMiddleware } from '../core/vocabulary/middleware.js';

declare module '../core/vocabulary/middleware.js' {
  interface Middleware<C> {
    /**
     * Called once with a new run's input messages (a `run` or `send`; not a resume), before
     * they enter the run state or a run store: returns the messages to use in their place (or
     * nothing, having edited them in place). Layers are asked outermost first. What it removes
     * is never recorded anywhere — the reason to use it rather than a `run` layer.
     *
     * @example prepareInput: (messages) => messages.map((m) => (m.role === 'user' && typeof m.content === 'string' ? { ...m, content: m.content.replace(SECRET, '[secret]') } : m))
     */
    prepareInput?: (messages: Message[]) => Message[] | void | Promise<Message[] | void>;
  }
}

/** Whether any of `layers` prepares input: when none does, a run starts with no extra await. */
export function preparesInput(layers: readonly NamedMiddleware[]): boolean {
  return layers.some((layer) => typeof layer.prepareInput === 'function');
}

/** `messages` as the layers that prepare input make them, each one checked. */
export async function prepareInput(layers: readonly NamedMiddleware[], messages: Message[]): Promise<Message[]> {
  let current = messages;
  for (const layer of layers) {
    if (typeof layer.prepareInput !== 'function') continue;
    const returned = await layer.prepareInput.call(layer.self ?? layer, current);
    if (returned !== undefined) {
      if (!Array.isArray(returned)) throw new TypeError(`${layer.name}.prepareInput(messages) must return an array of messages, or nothing`);
      current = returned;
    }
    for (let i = 0; i < current.length; i++) {
      const problem = messageProblem(current[i], `${layer.name}.prepareInput(messages): messages[${i}]`);
      if (problem !== undefined) throw new TypeError(problem);
    }
  }
  return current;
}
