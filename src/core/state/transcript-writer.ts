import { messageProblem, type AssistantMessage, type Message } from '../vocabulary/messages.js';
import { errorContent } from '../vocabulary/outcome.js';
import type { StatePart } from './state-observer.js';
import { ownedCopy, unwrap } from './transcript-view.js';

/**
 * The checked writes to a run's transcript (`state.messages`), made for the state writer: each
 * one keeps the transcript without gaps and its messages valid, and reports the first position
 * it changed. The state writer owns one, and alone decides whether a write still happens (it
 * is not closed); this class only knows the transcript.
 *
 * @example const transcript = new TranscriptWriter(state, (part, key) => observer.changed(part, key)); transcript.append(message);
 */
export class TranscriptWriter {
  readonly #state: { readonly messages: Message[] };
  readonly #changed: (part: StatePart, key: number) => void;

  constructor(state: { readonly messages: Message[] }, changed: (part: StatePart, key: number) => void) {
    this.#state = state;
    this.#changed = changed;
  }

  append(message: Message): void {
    this.#changed('messages', this.#state.messages.length);
    this.#state.messages.push(keptMessage(message));
  }

  // The writes of the transcript's view (`ctx.messages`): each array change a layer makes
  // (an assignment, a push, a splice) arrives as these, and each one is checked.

  /** Put `message` at `index` (at most the end: the transcript has no gaps). */
  putMessage(index: number, message: unknown): void {
    const messages = this.#state.messages;
    if (index > messages.length) throw new TypeError(`ctx.messages[${index}] cannot be set: the transcript has ${messages.length} messages and no gaps; push a message to add it at the end`);
    const own = unwrap(message);
    // A message of the transcript moved (a splice, a shift) was checked when it entered: placed as it is.
    const plain = own !== message ? own : ownedCopy(message);
    if (own === message) {
      const problem = messageProblem(plain, `ctx.messages[${index}]`);
      if (problem !== undefined) throw new TypeError(problem);
    }
    this.#changed('messages', index);
    messages[index] = plain as Message;
  }

  /** Take the last message off (how `pop`, `shift` and `splice` shorten an array); any other would leave a gap. */
  deleteMessage(index: number): void {
    const messages = this.#state.messages;
    if (index >= messages.length) return;
    if (index !== messages.length - 1) throw new TypeError(`ctx.messages[${index}] cannot be deleted: the transcript has no gaps; remove messages with splice, or replace the transcript with ctx.setMessages`);
    this.#changed('messages', index);
    messages.length = index;
  }

  /** Shorten the transcript to `length` messages (it cannot grow this way: no gaps). */
  truncate(length: number): void {
    const messages = this.#state.messages;
    if (!Number.isInteger(length) || length < 0 || length > messages.length) {
      if (length === messages.length) return;
      throw new TypeError(`ctx.messages.length = ${String(length)}: the transcript can be shortened (to 0..${messages.length}), not grown; push messages to add them`);
    }
    if (length === messages.length) return;
    this.#changed('messages', length);
    messages.length = length;
  }

  /**
   * A change inside a stored message (`apply` sets `target[key]`), as a layer made it in place:
   * kept only if the message is still one, else undone and refused.
   */
  editMessage(message: Message, target: object, key: string | symbol, apply: () => boolean): boolean {
    const at = this.#state.messages.lastIndexOf(message);
    const before = Reflect.getOwnPropertyDescriptor(target, key);
    // Setting an index past an array's end (a push) grows its length too: the undo shrinks it back.
    const length = Array.isArray(target) ? target.length : undefined;
    if (!apply()) return false;
    if (at === -1) return true;
    const problem = messageProblem(message, `ctx.messages[${at}]`);
    if (problem !== undefined) {
      if (before === undefined) Reflect.deleteProperty(target, key);
      else Reflect.defineProperty(target, key, before);
      if (length !== undefined) (target as unknown[]).length = length;
      throw new TypeError(`${problem} (the change was undone)`);
    }
    this.#changed('messages', at);
    return true;
  }

  /** Replace the transcript's contents in place: everyone holding the array sees the new ones. */
  setMessages(messages: readonly Message[]): void {
    const live = this.#state.messages;
    if (unwrap(messages) === live) return;
    // Copied first: `messages` may read through to the live array (a view of it).
    const next = messages.map(keptMessage);
    live.length = 0;
    // A loop, not push(...next): spreading a long transcript into arguments can overflow the stack.
    for (const message of next) live.push(message);
    this.#changed('messages', 0);
  }

  /**
   * Put `message` where the call's reply `previous` is (usually last), or at the end if it has
   * none. Returns the message, which is now the call's reply.
   */
  placeReply(previous: AssistantMessage | undefined, message: AssistantMessage): AssistantMessage {
    const messages = this.#state.messages;
    if (previous === message && messages[messages.length - 1] === message) return message;
    const at = previous === undefined ? -1 : messages.lastIndexOf(previous);
    this.#changed('messages', at === -1 ? messages.length : at);
    if (at === -1) messages.push(message);
    else messages[at] = message;
    return message;
  }

  /** Take a call's reply out of the transcript (the call failed, or is being retried). */
  withdrawReply(previous: AssistantMessage): void {
    const messages = this.#state.messages;
    const at = messages.lastIndexOf(previous);
    if (at === -1) return;
    this.#changed('messages', at);
    messages.splice(at, 1);
  }
}

/**
 * A message as the transcript keeps it: one of the state's own (a view's target) as it is, so
 * a message moved by a splice is still itself; any other a copy the state alone holds (see
 * `ownedCopy`), so its giver cannot change it later behind the checks.
 */
export function keptMessage<M>(message: M): M {
  const own = unwrap(message);
  return own !== message ? own : ownedCopy(message);
}

/**
 * The transcript a new run starts from: `history` (the agent's opening messages, or a
 * session's transcript so far), then `added`. Calls the history's last reply made and never
 * settled (a layer ended that run after the reply) are settled first as not run: a model
 * cannot be sent a call without its result. A new array; `history` is not changed.
 *
 * @example const messages = startingTranscript(session.messages, [{ role: 'user', content: 'And tomorrow?' }]);
 */
export function startingTranscript(history: readonly Message[], added: readonly Message[]): Message[] {
  const messages = history.slice();
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant' && last.toolCalls !== undefined) {
    const error = { kind: 'aborted', message: 'Not run: the run ended before this call' } as const;
    for (const call of last.toolCalls) messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: errorContent(error), metadata: { error: { ...error } } });
  }
  for (const message of added) messages.push(keptMessage(message));
  return messages;
}
