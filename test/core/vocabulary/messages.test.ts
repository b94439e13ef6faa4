// Transcript messages: what run input becomes, and the plain-JSON shape of every entry.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../../src/index.js';
import { inputMessages, lastAssistantText } from '../../../src/core/vocabulary/messages.js';
import { mockModel } from '../../../src/testing/index.js';
import { add } from '../../support/core.js';

describe('run input', () => {
  it('a string is one user message', () => {
    expect(inputMessages('Hi')).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('a message or a list of messages is taken as is, in order', () => {
    const system = { role: 'system' as const, content: 'Be brief.' };
    expect(inputMessages(system)).toEqual([system]);
    expect(inputMessages([system, { role: 'user', content: 'Hi' }])).toEqual([system, { role: 'user', content: 'Hi' }]);
  });

  it.each([
    ['a number', 5, "input is not a message: expected { role: 'system' | 'user' | 'assistant' | 'tool', content: string | parts }"],
    ['an unknown role', { role: 'robot', content: 'x' }, 'input is not a message'],
    ['a list with a bad entry', [{ role: 'user', content: 'ok' }, null], 'input[1] is not a message'],
    ['content that is neither text nor parts', { role: 'user', content: 42 }, 'input.content must be a string or an array of content parts'],
    ['a part that is not a content part', { role: 'user', content: ['x'] }, 'input.content[0] is not a content part'],
    ['a reasoning part in a user message', { role: 'user', content: [{ type: 'reasoning', text: 'x' }] }, 'input.content[0]'],
  ])('rejects %s with a TypeError naming where', (_what, input, message) => {
    expect(() => inputMessages(input as never)).toThrow(TypeError);
    expect(() => inputMessages(input as never)).toThrow(message);
  });
});

describe('transcript entries', () => {
  it('are plain JSON objects of the documented shapes', async () => {
    const broken = defineTool({ name: 'broken', description: 'Fails', input: z.object({}), execute: () => { throw new Error('nope'); } });
    const model = mockModel([{ text: 'Working.', toolCalls: [{ name: 'add', args: { a: 1, b: 2 }, id: 't1' }, { name: 'broken', args: {}, id: 't2' }] }, 'Three.']);
    const result = await createAgent({ model, tools: [add, broken], instructions: 'Be exact.' }).run('1+2?');
    expect(result.messages).toStrictEqual([
      { role: 'system', content: 'Be exact.' },
      { role: 'user', content: '1+2?' },
      { role: 'assistant', content: 'Working.', toolCalls: [{ id: 't1', name: 'add', args: { a: 1, b: 2 } }, { id: 't2', name: 'broken', args: {} }] },
      { role: 'tool', toolCallId: 't1', name: 'add', content: '3' },
      { role: 'tool', toolCallId: 't2', name: 'broken', content: 'Error (execution): broken threw: nope', metadata: { error: { kind: 'execution', message: 'broken threw: nope' } } },
      { role: 'assistant', content: 'Three.' },
    ]);
    for (const message of result.messages) expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
  });
});

describe('lastAssistantText', () => {
  it('is the last assistant message\'s content, or empty when there is none', () => {
    expect(lastAssistantText([{ role: 'assistant', content: 'first' }, { role: 'user', content: 'u' }, { role: 'assistant', content: 'last' }, { role: 'tool', toolCallId: 'x', name: 'y', content: 'z' }])).toBe('last');
    expect(lastAssistantText([{ role: 'user', content: 'u' }])).toBe('');
  });
});
