// A reply as stream parts and back: what a streamed call assembles into the same message
// `generate` gives, and what a whole reply becomes when a caller asked for a stream.
import type { AssistantContentPart, ProviderOptions, ReasoningPart, TextPart } from './content.js';
import type { AssistantMessage, AssistantToolCall } from './messages.js';
import type { StreamPart } from './model.js';

/**
 * Builds an assistant message from stream parts, in their order. The content stays a string
 * until a part that is not text arrives (reasoning, a file), so a text-only reply is exactly
 * what it was before content parts existed.
 */
export class ReplyAssembler {
  #text = '';
  #parts: AssistantContentPart[] | undefined;
  #reasoningId: string | undefined;
  readonly #reasoningById = new Map<string, ReasoningPart>();
  readonly #textById = new Map<string, TextPart>();
  /** The id of the text held in the string content, before there are parts. */
  #plainTextId: string | undefined;
  readonly #calls: AssistantToolCall[] = [];

  /** Take one part (`finish` is the caller's business). */
  add(part: StreamPart): void {
    switch (part.type) {
      case 'text':
        if (part.providerOptions === undefined && part.id === undefined) this.#addText(part.delta);
        else this.#addMarkedText(part.delta, part.id, part.providerOptions);
        break;
      case 'reasoning':
        this.#addReasoning(part.delta, part.id, part.providerOptions);
        break;
      case 'file':
        this.#toParts().push(withOptions({ type: 'file', data: part.data, mediaType: part.mediaType }, part.providerOptions));
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
    const message: AssistantMessage = { role: 'assistant', content: this.#parts ?? this.#text };
    if (this.#calls.length > 0) message.toolCalls = this.#calls;
    return message;
  }

  #addText(delta: string): void {
    if (delta === '') return;
    if (this.#parts === undefined) {
      this.#text += delta;
      return;
    }
    const last = this.#parts[this.#parts.length - 1];
    if (last?.type === 'text') last.text += delta;
    else this.#parts.push({ type: 'text', text: delta });
  }

  /** Text with provider data (or an id) must stay a part of its own, so the data goes back with it. */
  #addMarkedText(delta: string, id: string | undefined, options: ProviderOptions | undefined): void {
    let target = id === undefined ? undefined : this.#textById.get(id);
    // Data for the text so far, while the content is still a string: that text becomes its part.
    if (target === undefined && options !== undefined && id !== undefined && this.#parts === undefined && id === this.#plainTextId) {
      target = this.#toParts()[0] as TextPart;
      this.#textById.set(id, target);
    }
    if (target !== undefined) {
      target.text += delta;
      if (options !== undefined) target.providerOptions = mergeOptions(target.providerOptions, options);
      return;
    }
    if (options === undefined) {
      if (this.#parts === undefined) this.#plainTextId = id;
      this.#addText(delta);
      const last = this.#parts?.[this.#parts.length - 1];
      if (id !== undefined && last?.type === 'text') this.#textById.set(id, last);
      return;
    }
    const part: TextPart = { type: 'text', text: delta, providerOptions: options };
    this.#toParts().push(part);
    if (id !== undefined) this.#textById.set(id, part);
  }

  #addReasoning(delta: string, id: string | undefined, options: ProviderOptions | undefined): void {
    const parts = this.#toParts();
    const last = parts[parts.length - 1];
    // A known id continues its part even when other parts came between (a signature sent
    // after the text had begun still lands on its reasoning).
    const known = id === undefined ? undefined : this.#reasoningById.get(id);
    const target = known ?? (last?.type === 'reasoning' && (id === undefined || id === this.#reasoningId) ? last : undefined);
    if (target !== undefined) {
      target.text += delta;
      if (options !== undefined) target.providerOptions = mergeOptions(target.providerOptions, options);
    } else {
      const part: ReasoningPart = withOptions({ type: 'reasoning', text: delta }, options);
      parts.push(part);
      if (id !== undefined) this.#reasoningById.set(id, part);
    }
    this.#reasoningId = id;
  }

  /** Text so far becomes the first part: from here on, the content is a list. */
  #toParts(): AssistantContentPart[] {
    if (this.#parts === undefined) this.#parts = this.#text === '' ? [] : [{ type: 'text', text: this.#text }];
    return this.#parts;
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
