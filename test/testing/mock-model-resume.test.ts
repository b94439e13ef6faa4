// A plain mockModel counts its calls. Given a transcript its own script already began (a run
// resumed in another process, a run recovered by a new worker, a session continued by a new
// agent), it would answer with its first reply again — call the tools again, or ask for the same
// approval for ever — so it refuses, naming `{ resumable: true }`. A resumable one answers where
// the transcript stands; a plain one whose script holds only the replies still to come answers too.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type Message } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { childReport } from '../support/child-report.js';
import { runFailure } from '../support/core.js';
import { SCRIPT, scriptedTeller } from '../fixtures/scripted-teller.js';

const CHILD = 'test/fixtures/scripted-teller-child.ts';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A teller run suspended for approval in this process, its state in a file. */
async function suspendedTransfer(): Promise<{ dir: string; stateFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-mock-resume-'));
  dirs.push(dir);
  const paused = await scriptedTeller(dir, false).run('Pay Alice 80');
  expect(paused.pendingApprovals.map((p) => p.toolCallId)).toEqual(['call_transfer']);
  const stateFile = join(dir, 'state.json');
  writeFileSync(stateFile, JSON.stringify(paused.state));
  return { dir, stateFile };
}

const transfers = (dir: string) => readFileSync(join(dir, 'transfers.log'), 'utf8').trim().split('\n');

describe('a plain mockModel given a transcript its script already began', () => {
  it('fails a run approved in another process with an error naming { resumable: true }, after the approved call ran once', async () => {
    const { dir, stateFile } = await suspendedTransfer();
    const report = await childReport(CHILD, [stateFile, dir, 'plain']);
    expect(report).toMatchObject({ status: 'failed', code: 'model_error' });
    expect(report.cause).toBe("mockModel: the request continues a transcript whose assistant message is the script's first reply, but a plain mockModel counts its calls, "
      + 'so this fresh one would answer with the first reply again. A run resumed or recovered in another process, or a session continued by a new agent, '
      + 'needs mockModel(script, { resumable: true }), which picks each reply by the transcript (here reply 2); or script only the replies still to come');
    expect(transfers(dir)).toEqual(['alice 80']);
  }, 30_000);

  it('with { resumable: true }, the run approved in another process ends with the second reply', async () => {
    const { dir, stateFile } = await suspendedTransfer();
    expect(await childReport(CHILD, [stateFile, dir, 'resumable'])).toEqual({ status: 'completed', text: 'Paid Alice 80.', pending: 0 });
    expect(transfers(dir)).toEqual(['alice 80']);
  }, 30_000);

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
