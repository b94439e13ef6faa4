// The Chat Completions mapping on its own: the chunk shapes of servers that are not quite
// OpenAI (no `index`, repeated names, refusals, a `stop` reason with tool calls).
import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../src/types.js';
import { wireMessages } from '../../src/providers/openai-messages.js';
import { ChunkAssembler, completionResult, finishReasonOf, MalformedReply } from '../../src/providers/openai-wire.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] });

function assemble(chunks: unknown[]): StreamPart[] {
  const assembler = new ChunkAssembler();
  return [...chunks.flatMap((c) => [...assembler.accept(c)]), ...assembler.end()];
}

describe('ChunkAssembler', () => {
  it('joins argument fragments by index, emitting each call whole when the choice finishes', () => {
    expect(assemble([
      chunk({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'second', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'first', arguments: '{"x"' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }, { index: 0, function: { arguments: ':1}' } }] }),
      chunk({}, 'tool_calls'),
      { choices: [], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } },
    ])).toEqual([
      { type: 'tool-call', id: 'a', name: 'first', args: { x: 1 } },
      { type: 'tool-call', id: 'b', name: 'second', args: {} },
      { type: 'finish', usage: { inputTokens: 4, outputTokens: 2 }, finishReason: 'tool_calls' },
    ]);
  });

  it('handles servers that send each call whole without an index, or repeat the name in every fragment', () => {
    expect(assemble([
      chunk({ tool_calls: [{ id: 'a', function: { name: 'one', arguments: '{"n":1}' } }] }),
      chunk({ tool_calls: [{ id: 'b', function: { name: 'two', arguments: '{"n":' } }] }),
      chunk({ tool_calls: [{ id: 'b', function: { name: 'two', arguments: '2}' } }] }),
      chunk({}, 'stop'),
    ])).toEqual([
      { type: 'tool-call', id: 'a', name: 'one', args: { n: 1 } },
      { type: 'tool-call', id: 'b', name: 'two', args: { n: 2 } },
      { type: 'finish', usage: { inputTokens: 0, outputTokens: 0 }, finishReason: 'tool_calls' },
    ]);
  });

  it('streams a refusal as text, and rejects a tool call that never got a name', () => {
    expect(assemble([chunk({ refusal: 'I can\'t help with that.' }), chunk({}, 'stop')])).toEqual([
      { type: 'text', delta: 'I can\'t help with that.' },
      { type: 'finish', usage: { inputTokens: 0, outputTokens: 0 }, finishReason: 'stop' },
    ]);
    expect(() => assemble([chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }), chunk({}, 'tool_calls')])).toThrow(MalformedReply);
  });
});

describe('completionResult and finish reasons', () => {
  it('maps every documented finish_reason, and unknown ones to other', () => {
    expect(['stop', 'length', 'tool_calls', 'content_filter', 'function_call', 'weird', null].map((r) => finishReasonOf(r, false)))
      .toEqual(['stop', 'length', 'tool_calls', 'content_filter', 'tool_calls', 'other', 'other']);
    expect(finishReasonOf('stop', true)).toBe('tool_calls');
  });

  it('reads a completion with no usage as zero tokens, and a refusal as the reply text', () => {
    expect(completionResult({ choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'stop' }] }))
      .toEqual({ message: { role: 'assistant', content: 'No.' }, usage: { inputTokens: 0, outputTokens: 0 }, finishReason: 'stop' });
  });

  it('names what is wrong with a completion that has the wrong shape', () => {
    expect(() => completionResult({ choices: [{ message: { tool_calls: 'x' } }] })).toThrow(/tool_calls is not an array/);
    expect(() => completionResult({ choices: [{ message: { tool_calls: [{ id: 'a' }] } }] })).toThrow(/tool_calls\[0\] has no function.name/);
  });
});

describe('wireMessages', () => {
  it('sends raw argument text back verbatim and object arguments as JSON', () => {
    expect(wireMessages([{ role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'f', args: '{"broken"' }, { id: 'b', name: 'g', args: { ok: true } }] }])).toEqual([
      { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name: 'f', arguments: '{"broken"' } },
        { id: 'b', type: 'function', function: { name: 'g', arguments: '{"ok":true}' } },
      ] },
    ]);
  });
});
