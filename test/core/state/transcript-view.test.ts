// The transcript as layers see it: read through with no copy, and every change made through
// it — to the array, or inside a message at any depth — a checked write of the state writer,
// told to its observer with the position it changed.
import { describe, expect, it } from 'vitest';
import type { StatePart } from '../../../src/core/state/state-observer.js';
import { StateWriter } from '../../../src/core/state/state-writer.js';
import { jsonOf, plainValue, stateView, transcriptView, unwrap, type EndingFields } from '../../../src/core/state/transcript-view.js';
import type { Message } from '../../../src/core/vocabulary/messages.js';
import { newState } from '../../../src/core/vocabulary/state.js';

const user = (content: string): Message => ({ role: 'user', content });

function setup(messages: Message[] = [user('one'), user('two'), user('three')]) {
  const state = newState('r', 's', { name: 'a', id: 'a', toolsFingerprint: 'f' }, messages);
  const changes: [StatePart, string | number | undefined][] = [];
  const writer = new StateWriter(state, { changed: (part, key) => void changes.push([part, key]), stepEnds: async () => undefined });
  const at = () => changes.filter(([part]) => part === 'messages').map(([, key]) => key);
  return { state, writer, view: transcriptView(writer, false), at };
}

describe('reading through the view', () => {
  it('shows the live transcript, with no copy: later appends are there', () => {
    const { state, writer, view } = setup();
    expect(view).toEqual(state.messages);
    writer.append(user('four'));
    expect(view).toHaveLength(4);
    expect(Array.isArray(view)).toBe(true);
    expect(unwrap(view)).toBe(state.messages);
    expect(JSON.stringify(view)).toBe(JSON.stringify(state.messages));
  });

  it('gives the same view of a message each time, and the message itself to koagent', () => {
    const { state, view } = setup();
    expect(view[0]).toBe(view[0]);
    expect(view[0]).not.toBe(state.messages[0]);
    expect(unwrap(view[0])).toBe(state.messages[0]);
  });
});

describe('changes through the view are the writer\'s', () => {
  it('push, as the AgentHook dialect does in preGenerate, appends and reports the position', () => {
    const { state, view, at } = setup();
    view.push({ role: 'system', content: 'Be brief.' });
    expect(state.messages.at(-1)).toEqual({ role: 'system', content: 'Be brief.' });
    expect(at()).toEqual([3]);
  });

  it('splice, shift and pop change the transcript and report the lowest position they touched', () => {
    const { state, view, at } = setup();
    view.splice(1, 1);
    expect(state.messages.map((m) => m.content)).toEqual(['one', 'three']);
    expect(Math.min(...(at() as number[]))).toBe(1);
    view.shift();
    view.pop();
    expect(state.messages).toEqual([]);
    expect(Math.min(...(at() as number[]))).toBe(0);
  });

  it('an edit inside a message, at any depth, is reported at that message\'s position', () => {
    const { state, view, at } = setup([user('one'), { role: 'user', content: [{ type: 'text', text: 'deep' }] }]);
    (view[1].content as { text: string }[])[0].text = 'edited';
    expect(state.messages[1]).toEqual({ role: 'user', content: [{ type: 'text', text: 'edited' }] });
    expect(at()).toEqual([1]);
  });

  it('refuses a message that is no message, a gap, and an edit that breaks a message (undone), naming the fix', () => {
    const { state, view } = setup();
    expect(() => view.push({ role: 'robot' } as unknown as Message)).toThrow(/is not a message/);
    expect(() => (view[7] = user('far'))).toThrow(/no gaps; push a message/);
    expect(() => delete view[0]).toThrow(/no gaps; remove messages with splice/);
    expect(() => ((view[0] as { role: string }).role = 'robot')).toThrow(/the change was undone/);
    expect(state.messages[0]).toEqual(user('one'));
    expect(() => (view.length = 9)).toThrow(/shortened .* not grown/);
  });

  it('keeps the state plain: a view pushed back in is what it shows; one nested in a new message becomes a copy of its own', () => {
    const { state, view } = setup([{ role: 'user', content: [{ type: 'text', text: 'x' }] }]);
    view.push({ ...view[0] });
    expect(unwrap(state.messages[1].content)).toBe(state.messages[1].content);
    expect(state.messages[1].content).toEqual(state.messages[0].content);
    // Shared, an edit of one message would change the other behind the writer's back.
    expect(state.messages[1].content).not.toBe(state.messages[0].content);
    expect(() => structuredClone(state)).not.toThrow();
    view.push(view[0]);
    expect(state.messages[2]).toBe(state.messages[0]);
  });

  it('changes nothing once the writer is closed (the segment is over)', () => {
    const { state, writer, view } = setup();
    writer.close();
    view.push(user('late'));
    (view[0] as { content: string }).content = 'late';
    expect(state.messages.map((m) => m.content)).toEqual(['one', 'two', 'three']);
  });
});

describe('what a layer hands in is the state\'s own copy', () => {
  // A layer keeps its own reference to what it pushed or set; a change made through that
  // reference later (after an await, say) would reach the state unchecked, and could leave a
  // run that resume refuses.
  const image = (image: unknown) => ({ role: 'user', content: [{ type: 'image', image }] }) as Message;

  it('a pushed message is checked, then copied: changing it afterwards through the giver\'s reference changes nothing', () => {
    const { state, view } = setup([]);
    const given = image('https://example.com/cat.png');
    view.push(given);
    (given.content as { image: unknown }[])[0].image = new Uint8Array([1, 2, 3]);
    (given as { role: string }).role = 'robot';
    expect(state.messages).toEqual([image('https://example.com/cat.png')]);
  });

  it('so does a part set inside a message, a message assigned by index, and a transcript given to setMessages', () => {
    const { state, view, writer } = setup([image('https://example.com/a.png')]);
    const part = { type: 'image', image: 'https://example.com/b.png' };
    (view[0].content as unknown[])[1] = part;
    const second = image('https://example.com/c.png');
    view[1] = second;
    part.image = 'still checked?';
    (second.content as { image: unknown }[])[0].image = 12345;
    expect(state.messages).toEqual([
      { role: 'user', content: [{ type: 'image', image: 'https://example.com/a.png' }, { type: 'image', image: 'https://example.com/b.png' }] },
      image('https://example.com/c.png'),
    ]);
    const list = [image('https://example.com/d.png')];
    writer.setMessages(list);
    (list[0].content as { image: unknown }[])[0].image = 12345;
    expect(state.messages).toEqual([image('https://example.com/d.png')]);
  });

  it('outside content and tool calls (metadata) a value set is kept as given, so `(m.metadata ??= {}).seen = true` changes the run', () => {
    const { state, view, at } = setup([{ role: 'tool', toolCallId: 'c1', name: 't', content: 'ok' }]);
    ((view[0] as { metadata?: Record<string, unknown> }).metadata ??= {}).seen = true;
    expect(state.messages[0]).toEqual({ role: 'tool', toolCallId: 'c1', name: 't', content: 'ok', metadata: { seen: true } });
    expect(at()).toEqual([0]);
  });

  it('copies thousands of levels (a tool call\'s arguments) without overflowing the stack, a `__proto__` key kept a key', () => {
    const { state, view } = setup([]);
    const args: Record<string, unknown> = JSON.parse('{"__proto__": {"polluted": true}}');
    let deep = args;
    for (let i = 0; i < 20_000; i++) deep = deep.next = {};
    view.push({ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'deep', args }] });
    deep.leaf = 'added later';
    const kept = (state.messages[0] as { toolCalls: { args: Record<string, unknown> }[] }).toolCalls[0].args;
    expect(kept === args).toBe(false);
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.keys(kept)).toEqual(['__proto__', 'next']);
    let leaf = kept;
    while (leaf.next !== undefined) leaf = leaf.next as Record<string, unknown>;
    expect(leaf).toEqual({});
  });
});

describe('plainValue', () => {
  it('leaves plain data as it is, and copies only the containers that hold a view', () => {
    const { view } = setup();
    const plain = { a: [1, { b: 2 }] };
    expect(plainValue(plain)).toBe(plain);
    const mixed = { keep: { same: true }, inner: [view[0]] };
    const out = plainValue(mixed);
    expect(out).not.toBe(mixed);
    expect(out.keep).toBe(mixed.keep);
    expect(unwrap(out.inner[0])).toBe(out.inner[0]);
    expect(mixed.inner[0]).toBe(view[0]);
  });

  it('walks thousands of levels without overflowing the stack', () => {
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let i = 0; i < 20_000; i++) deep = deep.next = {};
    expect(plainValue(top)).toBe(top);
  });
});

describe('jsonOf', () => {
  it('is the text JSON.stringify gives: of the transcript, of a message, of a plain value holding views, of plain data', () => {
    const { view, state } = setup([user('one'), { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: [2, 3] } }] }]);
    const marked = { ...view[1], providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } };
    for (const value of [view, view[0], (view[1] as { toolCalls: unknown }).toolCalls, [view[0], marked], { keep: 1, inner: [view[1]] }, state.messages, 'text', 7, undefined]) {
      expect(jsonOf(value)).toBe(JSON.stringify(value));
    }
  });

  it('sees a change made in place through the view', () => {
    const { view } = setup([{ role: 'user', content: [{ type: 'text', text: 'one' }] }]);
    const before = jsonOf(view);
    (view[0].content as { text: string }[])[0].text = 'uno';
    expect(jsonOf(view)).not.toBe(before);
    expect(jsonOf(view)).toBe(JSON.stringify(view));
  });
});

describe('the state view (ctx.state)', () => {
  it('reads through, and refuses every change, its transcript included', () => {
    const { state, writer } = setup();
    const view = stateView(state, transcriptView(writer, true));
    expect(view.messages).toEqual(state.messages);
    expect(view.usage.toolCalls).toBe(0);
    expect(() => ((view as { steps: number }).steps = 3)).toThrow(/ctx.state is a read-only view/);
    expect(() => ((view.usage as { toolCalls: number }).toolCalls = 3)).toThrow(/read-only/);
    expect(() => view.messages.push(user('x'))).toThrow(/read-only \(ctx.state.messages\)/);
    expect(() => ((view.messages[0] as { content: string }).content = 'x')).toThrow(/read-only/);
    expect(state.messages).toHaveLength(3);
  });

  it('shows a decided end over the state\'s own fields, to reads, `in`, keys and JSON, read-only, while the state itself is unchanged', () => {
    const { state, writer } = setup();
    state.status = 'running';
    let ending: EndingFields | undefined;
    const view = stateView(state, transcriptView(writer, true), () => ending);
    expect([view.status, 'stopReason' in view, JSON.parse(JSON.stringify(view)).stopReason]).toEqual(['running', false, undefined]);
    ending = { status: 'completed', stopReason: 'hook_end', output: { verdict: 'ok' }, error: undefined };
    expect([view.status, view.stopReason, view.output, 'stopReason' in view, 'error' in view]).toEqual(['completed', 'hook_end', { verdict: 'ok' }, true, false]);
    expect(JSON.parse(JSON.stringify(view))).toMatchObject({ status: 'completed', stopReason: 'hook_end', output: { verdict: 'ok' } });
    expect(Object.keys(view)).toContain('stopReason');
    expect(() => (((view.output as { verdict: string }).verdict = 'changed'))).toThrow(/read-only view/);
    expect(() => (((view as { status: string }).status = 'failed'))).toThrow(/read-only view/);
    expect([state.status, 'stopReason' in state, state.output]).toEqual(['running', false, undefined]);
    ending = undefined;
    expect(view.status).toBe('running');
  });
});

describe('moving stored messages', () => {
  // A PNG's first bytes, labelled JPEG: a state stored before labels were checked may hold one,
  // and resume accepts it (it does not judge labels again).
  const mislabelled: Message = { role: 'user', content: [{ type: 'image', image: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB', mediaType: 'image/jpeg' }] };

  it('places a message of the transcript where a splice or shift moves it, as it is: it was checked when it entered', () => {
    const { state, view } = setup([user('one'), mislabelled, user('three')]);
    const stored = state.messages[1];
    view.shift();
    view.unshift(user('zero'));
    expect(state.messages).toEqual([user('zero'), mislabelled, user('three')]);
    expect(state.messages[1]).toBe(stored);
  });

  it('still checks a message that is new to the transcript, wherever it is put', () => {
    const { view } = setup();
    expect(() => view.unshift(mislabelled)).toThrow(/labelled image\/jpeg/);
  });
});
