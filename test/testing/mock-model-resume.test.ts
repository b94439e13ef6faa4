// A plain mockModel counts its calls. Given a transcript its own script already began (a run
// resumed in another process, a run recovered by a new worker, a session continued by a new
// agent), it would answer with its first reply again — call the tools again, or ask for the same
// approval for ever — so it refuses, naming `{ resumable: true }`. A resumable one answers where
// the transcript stands; a plain one whose script holds only the replies still to come answers too.
// (A run approved in another process: mock-model-resume-processes.test.ts.)
import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type Message } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { runFailure } from '../support/core.js';
import { SCRIPT } from '../fixtures/scripted-teller.js';

describe('a plain mockModel given a transcript its script already began', () => {
  it('refuses when a session is continued by a new agent, counting every reply the script already gave', async () => {
    const store = memoryStore();
    const chat = () => createAgent({ name: 'chat', model: mockModel(['One.', 'Two.', 'Three.']), store });
    expect((await chat().send('1', { sessionId: 's' })).text).toBe('One.');
    const error = await runFailure(chat().send('2', { sessionId: 's' }), 'model_error');
    expect((error.cause as Error).message).toContain("the request continues a transcript whose assistant message is the script's first reply");
    const transcript: Message[] = [{ role: 'user', content: '1' }, { role: 'assistant', content: 'One.' }, { role: 'user', content: '2' }, { role: 'assistant', content: 'Two.' }, { role: 'user', content: '3' }];
    await expect(mockModel(['One.', 'Two.', 'Three.']).generate({ messages: transcript, tools: [] })).rejects.toThrow("the script's first 2 replies");
    expect((await mockModel(['One.', 'Two.', 'Three.'], { resumable: true }).generate({ messages: transcript, tools: [] })).message.content).toBe('Three.');
  });

  it('answers when its script holds only the replies still to come, or the transcript is not its own', async () => {
    const after: Message[] = [{ role: 'user', content: 'Pay Alice 80' }, { role: 'assistant', content: 'Paying Alice.', toolCalls: [{ id: 'call_transfer', name: 'transfer', args: { to: 'alice', amount: 80 } }] }, { role: 'tool', toolCallId: 'call_transfer', name: 'transfer', content: '{"to":"alice","amount":80}' }];
    expect((await mockModel(['Paid Alice 80.']).generate({ messages: after, tools: [] })).message.content).toBe('Paid Alice 80.');
    // Another amount in the transcript: not the script's reply, so not a replay.
    const other = after.map((m) => (m.role === 'assistant' ? { ...m, toolCalls: [{ id: 'call_transfer', name: 'transfer', args: { to: 'alice', amount: 90 } }] } : m));
    expect((await mockModel(SCRIPT).generate({ messages: other, tools: [] })).message.toolCalls).toHaveLength(1);
    // The same mock asked again, as a run in one process asks it: it counts on.
    const model = mockModel(SCRIPT);
    await model.generate({ messages: [after[0]], tools: [] });
    expect((await model.generate({ messages: after, tools: [] })).message.content).toBe('Paid Alice 80.');
  });
});
