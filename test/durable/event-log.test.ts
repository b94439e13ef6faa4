// The run's event log as agents write it: when it is kept, how a segment's events reach it (in
// batches, with the step's checkpoint, the run.end with the segment's end), what a segment that
// continues a run takes back of a dead worker's stream, and what a failing append does.
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, memoryStore, type AgentEvent, type ModelProvider } from '../../src/index.js';
import { followEvents } from '../../src/store.js';
import type { EventLogStore, LoggedEvent } from '../../src/stores/run-store.js';
import { EventLogWriter } from '../../src/durable/event-log.js';
import { mockModel } from '../../src/testing/index.js';
import { runFailure } from '../support/core.js';
import { mortal, overriding } from '../support/durable.js';
import { manualClock } from '../support/clock.js';
import { heldModel } from '../support/held-model.js';
import { shownByStep, shownReplies, transcriptReplies } from '../support/event-log.js';

const add = defineTool({ name: 'add', description: 'Add', execute: () => 3 });

async function logged(store: EventLogStore, runId: string): Promise<AgentEvent[]> {
  return (await store.readEvents(runId, { limit: 1000 })).events.map((l) => l.event);
}

async function collect(events: AsyncIterable<LoggedEvent>): Promise<LoggedEvent[]> {
  const got: LoggedEvent[] = [];
  for await (const l of events) got.push(l);
  return got;
}

describe('when a run is logged', () => {
  it('is off for a run nobody streams, on for one that streams, and as the agent or the call says otherwise', async () => {
    const store = memoryStore();
    const agent = createAgent({ model: mockModel(['One.', 'Two.', 'Three.', 'Four.']), store });
    const plain = await agent.run('go');
    expect((await store.readEvents(plain.runId)).last).toBe(0);
    const streamed = agent.stream('go');
    for await (const _ of streamed);
    expect((await logged(store, (await streamed.result).runId)).map((e) => e.type)).toEqual(['run.start', 'model.start', 'text.delta', 'model.done', 'run.end']);
    const asked = await agent.run('go', { eventLog: true });
    expect((await store.readEvents(asked.runId)).last).toBe(4);
    const refused = agent.stream('go', { eventLog: false });
    for await (const _ of refused);
    expect((await store.readEvents((await refused.result).runId)).last).toBe(0);
    const always = createAgent({ model: mockModel(['Five.']), store, eventLog: true });
    expect((await store.readEvents((await always.run('go')).runId)).last).toBe(4);
  });

  it('is on by default for a segment that continues a run whose log has events (a resume that does not stream), off for one whose log is empty', async () => {
    const store = memoryStore();
    const pay = defineTool({ name: 'pay', description: 'Pay', needsApproval: true, execute: () => 'paid' });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'p1', name: 'pay', args: {} }] }, 'Paid.', { toolCalls: [{ id: 'p2', name: 'pay', args: {} }] }, 'Paid again.']), tools: [pay], store });
    const streamed = agent.stream('Pay');
    for await (const _ of streamed);
    const { runId } = await streamed.result;
    const asked = await logged(store, runId);
    expect(asked.filter((e) => e.type === 'approval.requested' || e.type === 'run.end')).toMatchObject([{ type: 'approval.requested', toolCallId: 'p1' }, { type: 'run.end', status: 'suspended' }]);
    const before = asked.length;
    // Resumed without streaming: its readers still get the rest of the run, to its end.
    expect((await agent.resume(runId, { p1: true })).output).toBe('Paid.');
    const rest = (await store.readEvents(runId, { after: before })).events.map((l) => l.event);
    expect(rest.map((e) => e.type)).toEqual(['run.start', 'permission.decision', 'tool.start', 'tool.done', 'model.start', 'model.done', 'run.end']);
    expect(rest.at(-1)).toMatchObject({ type: 'run.end', status: 'completed' });
    // A run nobody streamed stays unlogged when it is resumed.
    const plain = await agent.run('Pay');
    expect((await agent.resume(plain.runId, { p2: true })).output).toBe('Paid again.');
    expect((await store.readEvents(plain.runId)).last).toBe(0);
  });

  it('is refused, naming what to do, without a store or with a store that keeps no log', async () => {
    const noLog = overriding(memoryStore(), { appendEvents: undefined, readEvents: undefined, eventTail: undefined } as never);
    expect(() => createAgent({ model: mockModel([]), eventLog: true })).toThrow('createAgent: eventLog needs a run store, where the log is kept: createAgent({ store, eventLog: true }), or per call: agent.run(input, { store, eventLog: true })');
    expect(() => createAgent({ model: mockModel([]), store: noLog, eventLog: true })).toThrow('createAgent: eventLog needs a store that keeps an event log, and this one (memory) does not; memoryStore(), sqliteStore() and postgresStore() do');
    expect(() => createAgent({ model: mockModel([]), eventlog: true } as never)).toThrow('createAgent: eventlog is not an option; did you mean `eventLog`?');
    await expect(createAgent({ model: mockModel(['x']) }).run('go', { eventLog: true })).rejects.toThrow('agent.run(input, options): eventLog needs a run store, where the log is kept: createAgent({ store }) or { store } in these options');
    await expect(createAgent({ model: mockModel(['x']), store: noLog }).run('go', { eventLog: true })).rejects.toThrow('agent.run(input, options): eventLog needs a store that keeps an event log');
    expect(() => createAgent({ model: mockModel(['x']), store: memoryStore() }).stream('go', { eventLog: 'yes' } as never)).toThrow('agent.stream(input, options): eventLog must be true or false');
    // Streaming with a store that keeps no log logs nothing, and runs as before.
    const stream = createAgent({ model: mockModel(['x']), store: noLog }).stream('go');
    for await (const _ of stream);
    expect((await stream.result).status).toBe('completed');
  });
});

describe("a segment's events in the log", () => {
  it('are every event the listeners got, in order, the deltas of one step joined, with the run.end last', async () => {
    const store = memoryStore();
    const reasoning = { type: 'reasoning' as const, text: 'Think twice.' };
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'a1', name: 'add', args: {} }] }, { content: [reasoning, { type: 'text', text: 'It is three, as the tool says.' }] }]), tools: [add], store });
    const stream = agent.stream('Add');
    const live: AgentEvent[] = [];
    for await (const e of stream) live.push(e);
    const result = await stream.result;
    const events = await logged(store, result.runId);
    const kinds = (list: AgentEvent[]) => list.map((e) => e.type).filter((t, i, all) => !(t.endsWith('.delta') && all[i - 1] === t));
    expect(kinds(events)).toEqual(kinds(live));
    expect(events.filter((e) => e.type === 'text.delta').length).toBeLessThanOrEqual(live.filter((e) => e.type === 'text.delta').length);
    expect(shownReplies(events)).toEqual(transcriptReplies(result.messages));
    expect([...shownByStep(events, 'reasoning').values()]).toEqual(['Think twice.']);
    expect(events.at(-1)).toMatchObject({ type: 'run.end', status: 'completed', runId: result.runId });
    // Every event is written with a checkpoint or before one: the log agrees with the stored run.
    expect(await store.eventTail(result.runId)).toEqual([]);
  });

  it("keep a failed segment's run.end, written with its failure", async () => {
    const store = memoryStore();
    const broken: ModelProvider = { async generate() { throw new Error('the model is down'); } };
    const error = await runFailure(createAgent({ model: broken, store, eventLog: true }).run('go'), 'model_error');
    const events = await logged(store, error.runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.end', status: 'failed', error: { code: 'model_error' } });
    expect((await store.readEvents(error.runId)).status).toBe('failed');
  });

  it("include a sub-agent's, tagged with its path", async () => {
    const store = memoryStore();
    const helper = createAgent({ name: 'helper', model: mockModel(['Helped.']) });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ id: 'h1', name: 'helper', args: { task: 'help' } }] }, 'Done.']), tools: [helper.asTool({ description: 'Helps' })], store });
    const stream = lead.stream('go');
    for await (const _ of stream);
    const events = await logged(store, (await stream.result).runId);
    expect(events.filter((e) => e.agentPath !== undefined && e.type === 'text.delta').map((e) => (e as { delta: string }).delta).join('')).toBe('Helped.');
  });

  it('fail the segment at its next step end when an append fails, as a checkpoint that fails does', async () => {
    const store = memoryStore();
    let appended!: () => void;
    const failed = new Promise<void>((resolve) => (appended = resolve));
    const failing = overriding(store, {
      appendEvents: async () => {
        appended();
        throw new Error('the disk is full');
      },
    });
    // The stream holds after its first delta until the batch of it was appended (and failed).
    const hold = heldModel(mockModel([{ content: [{ type: 'text', text: 'Let me add.' }], toolCalls: [{ id: 'a1', name: 'add', args: {} }] }, 'Three.']), 1);
    void failed.then(() => hold.release());
    const agent = createAgent({ model: hold.model, tools: [add], store: failing });
    const stream = agent.stream('Add');
    // The stream ends with the run's failure; `result` rejects with it.
    await (async () => {
      for await (const _ of stream);
    })().catch(() => undefined);
    const error = await runFailure(stream.result, 'store_error');
    expect(error.message).toContain('the disk is full');
    // Nothing ran after the failed append: the tool never started.
    expect(error.state.ledger.map((call) => call.entry)).not.toContain('done');
  });
});

describe('what logging costs a step', () => {
  /**
   * The commits a run of three model calls (two with a tool call) makes, its log on or off, and
   * the events it logged. A `slow` model answers only once what waited for it was appended: it
   * took longer than a batch (with the log off, nothing is appended, and it answers at once).
   */
  async function commits(slow: boolean, eventLog: boolean): Promise<{ writes: number; events: number }> {
    const store = memoryStore();
    let appended: (() => void) | undefined;
    const logged = overriding(store, {
      appendEvents: async (lease, events) => {
        const last = await store.appendEvents(lease, events);
        appended?.();
        return last;
      },
    });
    const replies = mockModel([{ toolCalls: [{ id: 'a1', name: 'add', args: {} }] }, { toolCalls: [{ id: 'a2', name: 'add', args: {} }] }, 'Six.']);
    const model: ModelProvider = {
      name: 'slow',
      async generate(request) {
        if (slow && eventLog) await new Promise<void>((resolve) => (appended = resolve));
        return replies.generate(request);
      },
    };
    const result = await createAgent({ model, tools: [add], store: logged }).run('Add twice', { eventLog });
    return { writes: store.stats.writes, events: (await store.readEvents(result.runId)).last };
  }

  it("is no commit when the model answers within a batch: the step's checkpoint takes its events", async () => {
    const off = await commits(false, false);
    const on = await commits(false, true);
    expect(on.writes).toBe(off.writes);
    // run.start, 3 × (model.start, model.done), 2 × (tool.start, tool.done), run.end
    expect(on.events).toBe(12);
  });

  it('is at most one commit per model call when the model takes longer than a batch: what waits for it is appended once', async () => {
    const off = await commits(true, false);
    const on = await commits(true, true);
    expect(on.writes - off.writes).toBeGreaterThan(0);
    expect(on.writes - off.writes).toBeLessThanOrEqual(3);
    expect(on.events).toBe(12);
  });
});

describe('EventLogWriter', () => {
  it('joins consecutive deltas of one stream (kind, run, agent, step), and nothing else', () => {
    const log = new EventLogWriter(() => undefined);
    const base = { runId: 'r', at: 1 };
    const events: AgentEvent[] = [
      { type: 'text.delta', delta: 'Hel', step: 1, ...base },
      { type: 'text.delta', delta: 'lo', step: 1, ...base },
      { type: 'reasoning.delta', delta: 'hm', step: 1, ...base },
      { type: 'text.delta', delta: '!', step: 1, ...base },
      { type: 'text.delta', delta: 'sub', step: 1, ...base, agentPath: ['lead', 'helper'] },
      { type: 'text.delta', delta: 'next', step: 2, ...base },
      { type: 'text.retract', text: 'next', step: 2, ...base },
    ];
    for (const e of events) log.listener(e);
    expect(log.take().map((text) => JSON.parse(text))).toEqual([
      { type: 'text.delta', delta: 'Hello', step: 1, ...base },
      { type: 'reasoning.delta', delta: 'hm', step: 1, ...base },
      { type: 'text.delta', delta: '!', step: 1, ...base },
      { type: 'text.delta', delta: 'sub', step: 1, ...base, agentPath: ['lead', 'helper'] },
      { type: 'text.delta', delta: 'next', step: 2, ...base },
      { type: 'text.retract', text: 'next', step: 2, ...base },
    ]);
    expect(log.take()).toEqual([]);
  });

  it("retracts whatever each stream of a dead worker's tail still shows: the run's and its sub-agents', text and reasoning", () => {
    const log = new EventLogWriter(() => undefined);
    const tail: AgentEvent[] = [
      { type: 'text.delta', delta: 'Old answer', step: 3, runId: 'r', at: 1 },
      { type: 'text.retract', text: 'answer', step: 3, runId: 'r', at: 1 },
      { type: 'text.delta', delta: 'reply', step: 3, runId: 'r', at: 1 },
      { type: 'reasoning.delta', delta: 'Because', step: 3, runId: 'r', at: 1 },
      { type: 'text.delta', delta: 'gone', step: 2, runId: 'r', at: 1 },
      { type: 'text.retract', text: 'gone', step: 2, runId: 'r', at: 1 },
      { type: 'tool.start', toolCallId: 'c', toolName: 'helper', args: {}, runId: 'r', at: 1 },
      { type: 'text.delta', delta: 'Sub text', step: 1, runId: 'child', at: 1, agentPath: ['lead', 'helper'] },
    ];
    log.retract(tail.map((event, i) => ({ seq: i + 10, event })));
    const retractions = log.take().map((text) => JSON.parse(text) as AgentEvent);
    expect(retractions.map(({ at: _at, ...e }) => e)).toEqual([
      { type: 'reasoning.retract', text: 'Because', step: 3, runId: 'r' },
      { type: 'text.retract', text: 'Old reply', step: 3, runId: 'r' },
      { type: 'text.retract', text: 'Sub text', step: 1, runId: 'child', agentPath: ['lead', 'helper'] },
    ]);
    // A reader that shows the tail and then these shows nothing of it.
    expect([...shownByStep([...tail, ...retractions]).values()].every((text) => text === '')).toBe(true);
  });
});

/**
 * A provider that only streams: with `toolFirst`, its first turn asks for `add`; then it streams
 * `words` as text, calls `stall` (which kills its worker) and never answers again.
 */
function dyingStreamer(words: string[], stall: () => Promise<void>, toolFirst: boolean): ModelProvider {
  let calls = 0;
  return {
    async generate() {
      throw new Error('this provider streams only');
    },
    async *stream() {
      if (toolFirst && calls++ === 0) {
        yield { type: 'tool-call' as const, id: 'a1', name: 'add', args: {} };
        yield { type: 'finish' as const, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' as const };
        return;
      }
      for (const word of words) yield { type: 'text' as const, delta: word };
      await stall();
      await new Promise(() => undefined);
    },
  };
}

describe('a segment that continues a run whose worker died mid-stream', () => {
  for (const toolFirst of [false, true]) {
    it(`takes back what the dead worker streamed past the last checkpoint, so a reader ends with the final transcript (${toolFirst ? 'after a checkpointed step' : 'in its first step'})`, async () => {
      const clock = manualClock();
      const store = memoryStore({ leaseMs: 1000, clock });
      const worker = mortal(store);
      let runId = '';
      // The worker dies once its half-streamed text is in the log (a reader of the store sees it).
      const stall = async () => {
        for await (const { event } of followEvents(store, runId)) if (event.type === 'text.delta' && event.delta.includes('streamed')) break;
        worker.die();
      };
      const dying = createAgent({ name: 'teller', model: dyingStreamer(['An answer ', 'half ', 'streamed'], stall, toolFirst), tools: [add], store: worker.store });
      const stream = dying.stream('Add', { onEvent: (e) => void (runId ||= e.runId) });
      void (async () => {
        for await (const _ of stream);
      })();
      await worker.died;
      await clock.advance(1001);
      const following = collect(followEvents(store, runId));
      const recoverer = createAgent({ name: 'teller', model: mockModel(toolFirst ? ['Three, in other words.'] : [{ toolCalls: [{ id: 'a1', name: 'add', args: {} }] }, 'Three, in other words.']), tools: [add], store });
      // Recovered streaming, as it was run: its readers get its text as it comes.
      const recovering = recoverer.runs.recover({ stream: true });
      for await (const _ of recovering);
      const [recovered] = await recovering.result;
      expect(recovered.result?.status).toBe('completed');
      const events = (await following).map((l) => l.event);
      expect(events.filter((e) => e.type === 'text.retract').map((e) => (e as { text: string }).text)).toEqual(['An answer half streamed']);
      expect(shownReplies(events)).toEqual(transcriptReplies(recovered.result!.messages));
      expect(shownReplies(events)).toEqual(['Three, in other words.']);
      expect(events.at(-1)).toMatchObject({ type: 'run.end', status: 'completed' });
    });
  }
});
