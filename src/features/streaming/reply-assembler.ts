// A reply as stream parts and back: what a streamed call assembles into the same message
// `generate` gives, and what a whole reply becomes when a caller asked for a stream.
import type { AssistantContentPart, ProviderOptions, ReasoningPart, TextPart } from '../../core/vocabulary/content.js';
import type { AssistantMessage, AssistantToolCall } from '../../core/vocabulary/messages.js';
import type { StreamPart } from '../../core/vocabulary/model.js';

/**
 * Builds an assistant message from stream parts, in their order. A reply that is only text,
 * with no provider data on it, comes out as a string, so a text-only reply is exactly what it
 * was before content parts existed.
 */
export class ReplyAssembler {
  readonly #parts: AssistantContentPart[] = [];
  readonly #textById = new Map<string, TextPart>();
  readonly #reasoningById = new Map<string, ReasoningPart>();
  readonly #calls: AssistantToolCall[] = [];

  /** Take one part (`finish` is the caller's business). */
  add(part: StreamPart): void {
    switch (part.type) {
      case 'text':
        this.#addText(part.delta, part.id, part.providerOptions);
        break;
      case 'reasoning':
        this.#addReasoning(part.delta, part.id, part.providerOptions);
        break;
      case 'file':
        this.#parts.push(withOptions({ type: 'file', data: part.data, mediaType: part.mediaType }, part.providerOptions));
        break;
      case 'tool-call':
        this.#calls.push(withOptions({ id: part.id, name: part.name, args: part.args }, part.providerOptions));
        break;
    }
  }

  get hasToolCalls(): boolean {
    return this.#calls.length > 0;
  }

  message(): AssistantMessage {
    const parts = this.#parts;
    const plain = parts.every((p) => p.type === 'text' && p.providerOptions === undefined);
    const message: AssistantMessage = { role: 'assistant', content: plain ? parts.map((p) => (p as TextPart).text).join('') : parts };
    if (this.#calls.length > 0) message.toolCalls = this.#calls;
    return message;
  }

  /**
   * Text of a known id continues its part, even after other parts (its provider data may come
   * last); a new id starts a part of its own, so each block's data goes back with its text.
   * Text without an id continues the text before it.
   */
  #addText(delta: string, id: string | undefined, options: ProviderOptions | undefined): void {
    const last = this.#parts[this.#parts.length - 1];
    const target = id !== undefined ? this.#textById.get(id) : last?.type === 'text' ? last : undefined;
    if (target !== undefined) {
      target.text += delta;
      if (options !== undefined) target.providerOptions = mergeOptions(target.providerOptions, options);
      return;
    }
    if (delta === '' && options === undefined) return;
    const part: TextPart = withOptions({ type: 'text', text: delta }, options);
    this.#parts.push(part);
    if (id !== undefined) this.#textById.set(id, part);
  }

  #addReasoning(delta: string, id: string | undefined, options: ProviderOptions | undefined): void {
    const last = this.#parts[this.#parts.length - 1];
    // A known id continues its part even when other parts came between (a signature sent
    // after the text had begun still lands on its reasoning).
    const target = id !== undefined ? this.#reasoningById.get(id) : last?.type === 'reasoning' ? last : undefined;
    if (target !== undefined) {
      target.text += delta;
      if (options !== undefined) target.providerOptions = mergeOptions(target.providerOptions, options);
      return;
    }
    const part: ReasoningPart = withOptions({ type: 'reasoning', text: delta }, options);
    this.#parts.push(part);
    if (id !== undefined) this.#reasoningById.set(id, part);
  }
}

/** Provider options merged per provider: later keys win (a signature that arrives last). */
function mergeOptions(a: ProviderOptions | undefined, b: ProviderOptions): ProviderOptions {
  if (a === undefined) return b;
  const merged: ProviderOptions = { ...a };
  for (const [provider, fields] of Object.entries(b)) merged[provider] = { ...merged[provider], ...fields };
  return merged;
}

function withOptions<T extends object>(value: T, options: ProviderOptions | undefined): T & { providerOptions?: ProviderOptions } {
  return options === undefined ? value : Object.assign(value, { providerOptions: options });
}

/** A whole reply as the stream parts that would have built it (without `finish`). */
export function* replyParts(message: AssistantMessage): Generator<StreamPart> {
  const { content } = message;
  if (typeof content === 'string') {
    if (content !== '') yield { type: 'text', delta: content };
  } else {
    for (let i = 0; i < content.length; i++) {
      const part = content[i];
      if (part.type === 'text') yield withOptions({ type: 'text', delta: part.text, ...(part.providerOptions === undefined ? {} : { id: `text_${i}` }) }, part.providerOptions);
      // An id per part, so two reasoning parts in a row stay two.
      else if (part.type === 'reasoning') yield withOptions({ type: 'reasoning', delta: part.text, id: `reasoning_${i}` }, part.providerOptions);
      else yield withOptions({ type: 'file', data: part.data, mediaType: part.mediaType }, part.providerOptions);
    }
  }
  for (const call of message.toolCalls ?? []) yield withOptions({ type: 'tool-call', id: call.id, name: call.name, args: call.args }, call.providerOptions);
}
