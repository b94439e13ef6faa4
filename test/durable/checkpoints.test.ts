// The checkpoints of a durable segment: written one at a time and in order, coalesced while a
// write is under way, and never again after one failed.
import { describe, expect, it } from 'vitest';
import { Checkpoints, type CheckpointSink } from '../../src/durable/checkpoints.js';
import { StateJournal } from '../../src/durable/journal.js';
import { StateWriter } from '../../src/core/state/state-writer.js';
import type { Checkpoint } from '../../src/stores/run-store.js';
import { newState } from '../../src/core/vocabulary/state.js';
import { KoagentError } from '../../src/index.js';

function setup(write: (cp: Checkpoint, final: boolean) => Promise<void>) {
  const state = newState('r', 's', { name: 'a', id: 'a', toolsFingerprint: 'f' }, []);
  const sink: CheckpointSink = { write };
  const checkpoints = new Checkpoints(new StateJournal(state), sink);
  return { state, writer: new StateWriter(state, checkpoints), checkpoints };
}

/** A sink whose writes finish when the test says; `started(n)` resolves once the nth write began. */
function gated() {
  const writes: { cp: Checkpoint; final: boolean; done: () => void; fail: (e: unknown) => void }[] = [];
  const waiting: { n: number; tell: () => void }[] = [];
  const write = (cp: Checkpoint, final: boolean) => new Promise<void>((done, fail) => {
    writes.push({ cp, final, done, fail });
    for (const w of waiting.filter((w) => writes.length >= w.n)) w.tell();
  });
  const started = (n: number) => new Promise<void>((tell) => (writes.length >= n ? tell() : waiting.push({ n, tell })));
  return { writes, write, started };
}

describe('Checkpoints', () => {
  it('writes nothing when nothing changed', async () => {
    const { writes, write } = gated();
    const { checkpoints } = setup(write);
    await checkpoints.flush();
    expect(writes).toEqual([]);
  });

  it('writes one at a time; flushes asked for meanwhile share the next write, which holds all they changed', async () => {
    const { writes, write } = gated();
    const { writer, checkpoints } = setup(write);
    writer.append({ role: 'user', content: 'one' });
    const first = checkpoints.flush();
    writer.append({ role: 'user', content: 'two' });
    const second = checkpoints.flush();
    writer.append({ role: 'user', content: 'three' });
    const third = checkpoints.flush();
    expect(second).toBe(third);
    expect(writes).toHaveLength(1);
    writes[0].done();
    await first;
    await Promise.resolve();
    expect(writes).toHaveLength(2);
    expect(writes[1].cp.messages).toEqual({ from: 1, items: ['{"role":"user","content":"two"}', '{"role":"user","content":"three"}'] });
    writes[1].done();
    await third;
  });

  it('finishes with the failure when a write fails while a flush waits behind it, and never hangs', async () => {
    const { writes, write } = gated();
    const { writer, checkpoints } = setup(write);
    writer.append({ role: 'user', content: 'one' });
    const first = checkpoints.flush().catch((e: unknown) => e);
    writer.append({ role: 'user', content: 'two' });
    const queued = checkpoints.flush().catch((e: unknown) => e);
    const finished = checkpoints.finish().catch((e: unknown) => e);
    writes[0].fail(new Error('disk full'));
    const error = await first;
    expect(KoagentError.is(error) && error.code).toBe('store_error');
    expect(await queued).toBe(error);
    expect(await finished).toBe(error);
    expect(writes).toHaveLength(1);
  });

  it('after a failed write, refuses every later one with the same error: no checkpoint may follow a lost one', async () => {
    const { writes, write } = gated();
    const { writer, checkpoints } = setup(write);
    writer.append({ role: 'user', content: 'one' });
    const first = checkpoints.flush();
    writes[0].fail(new Error('disk full'));
    const error = await first.catch((e: unknown) => e);
    expect(KoagentError.is(error) && error.code).toBe('store_error');
    writer.append({ role: 'user', content: 'two' });
    await expect(checkpoints.flush()).rejects.toBe(error);
    await expect(checkpoints.finish()).rejects.toBe(error);
    expect(writes).toHaveLength(1);
  });

  it('keeps a store error of koagent (lease_lost) as it is', async () => {
    const lost = new KoagentError('lease_lost', 'gone');
    const { writer, checkpoints } = setup(() => Promise.reject(lost));
    writer.append({ role: 'user', content: 'one' });
    await expect(checkpoints.flush()).rejects.toBe(lost);
  });

  it('finishes after the write under way, with a final write, and writes nothing after it', async () => {
    const { writes, write, started } = gated();
    const { writer, checkpoints } = setup(write);
    writer.append({ role: 'user', content: 'one' });
    void checkpoints.flush();
    const finished = checkpoints.finish();
    await Promise.resolve();
    expect(writes).toHaveLength(1);
    writes[0].done();
    await started(2);
    expect(writes.map((w) => w.final)).toEqual([false, true]);
    writes[1].done();
    await finished;
    await expect(checkpoints.flush()).rejects.toThrow('koagent: this run segment is over; nothing of it may be stored any more');
  });

  it('stops at once when poisoned (a renewal found the lease lost)', async () => {
    const { writer, checkpoints } = setup(() => Promise.resolve());
    const lost = new KoagentError('lease_lost', 'gone');
    checkpoints.poison(lost);
    writer.append({ role: 'user', content: 'one' });
    await expect(checkpoints.flush()).rejects.toBe(lost);
    expect(checkpoints.failure).toBe(lost);
  });
});
