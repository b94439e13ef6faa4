// A streamed reply assembled into the message a whole reply would be.
import { describe, expect, it } from 'vitest';
import { ReplyAssembler, replyParts } from '../../../src/features/streaming/reply-assembler.js';
import type { StreamPart } from '../../../src/types.js';

function assemble(parts: StreamPart[]) {
  const assembler = new ReplyAssembler();
  for (const part of parts) assembler.add(part);
  return assembler.message();
}

describe('assembling a streamed reply', () => {
  it('gives text without provider data as one string, whatever ids its blocks had', () => {
    expect(assemble([{ type: 'text', delta: 'Hello ', id: 'a' }, { type: 'text', delta: 'World', id: 'b' }, { type: 'text', delta: '!' }])).toEqual({ role: 'assistant', content: 'Hello World!' });
  });

  it('keeps each text block its own part when its provider data comes after its text', () => {
    const message = assemble([
      { type: 'text', delta: 'Hello ', id: 'a' },
      { type: 'text', delta: 'World', id: 'b' },
      { type: 'text', delta: '', id: 'a', providerOptions: { openai: { itemId: 'A' } } },
      { type: 'text', delta: '', id: 'b', providerOptions: { openai: { itemId: 'B' } } },
    ]);
    expect(message.content).toEqual([
      { type: 'text', text: 'Hello ', providerOptions: { openai: { itemId: 'A' } } },
      { type: 'text', text: 'World', providerOptions: { openai: { itemId: 'B' } } },
    ]);
  });

  it('puts a reasoning signature sent after the text on its reasoning part', () => {
    const message = assemble([
      { type: 'reasoning', delta: 'Think', id: 'r' },
      { type: 'text', delta: 'Answer' },
      { type: 'reasoning', delta: '', id: 'r', providerOptions: { anthropic: { signature: 's' } } },
    ]);
    expect(message.content).toEqual([{ type: 'reasoning', text: 'Think', providerOptions: { anthropic: { signature: 's' } } }, { type: 'text', text: 'Answer' }]);
  });

  it('rebuilds a whole reply from the parts it streams as', () => {
    const reply = { role: 'assistant' as const, content: [{ type: 'reasoning' as const, text: 'Think' }, { type: 'text' as const, text: 'Answer', providerOptions: { openai: { itemId: 'A' } } }], toolCalls: [{ id: 'c1', name: 't', args: { x: 1 } }] };
    expect(assemble([...replyParts(reply)])).toEqual(reply);
  });
});
