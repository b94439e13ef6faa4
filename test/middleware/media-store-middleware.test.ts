// The media store: large base64 images and files leave the run state for a store, by reference,
// and reach the provider whole; a resumed run in another agent object reads them back.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent, defineTool, type Message } from '../../src/index.js';
import { fileMediaStore, mediaStoreMiddleware, type MediaStore } from '../../src/middleware.js';
import type { ImagePart } from '../../src/types.js';
import { MEDIA_REF } from '../../src/middleware/media-store-middleware.js';
import { mockModel } from '../../src/testing/index.js';

const big = Buffer.alloc(100_000, 7).toString('base64'); // ~133 KB of base64
const small = Buffer.from('tiny').toString('base64');

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'koagent-media-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

const imageOf = (m: Message | undefined) => (Array.isArray(m?.content) ? (m.content.find((p) => p.type === 'image') as ImagePart | undefined) : undefined);

describe('large media leave the run state', () => {
  it('stores a large image by reference in the transcript and sends the provider the data', async () => {
    const model = mockModel(['A grey square.']);
    const input: Message = { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: big, mediaType: 'image/png' }] };
    const result = await createAgent({ model, middleware: [mediaStoreMiddleware({ store: fileMediaStore(dir) })] }).run(input);
    const stored = imageOf(result.messages[0])!;
    expect(stored.image.startsWith(MEDIA_REF)).toBe(true);
    expect(stored.mediaType).toBe('image/png');
    expect(JSON.stringify(result.state).length).toBeLessThan(2_000);
    expect(imageOf(model.calls[0].messages[0])?.image).toBe(big);
    expect(await readdir(dir)).toHaveLength(1);
  });

  it('leaves small parts, URLs and strings inline, and reads a data URL\'s media type', async () => {
    const model = mockModel(['ok']);
    const input: Message = { role: 'user', content: [
      { type: 'image', image: small, mediaType: 'image/png' },
      { type: 'image', image: 'https://example.com/cat.png' },
      { type: 'file', data: `data:application/pdf;base64,${big}`, mediaType: 'application/pdf', filename: 'r.pdf' },
    ] };
    const result = await createAgent({ model, middleware: [mediaStoreMiddleware({ store: fileMediaStore(dir) })] }).run(input);
    const parts = result.messages[0].content as unknown as Array<Record<string, string>>;
    expect(parts[0].image).toBe(small);
    expect(parts[1].image).toBe('https://example.com/cat.png');
    expect(parts[2]).toMatchObject({ type: 'file', mediaType: 'application/pdf', filename: 'r.pdf', data: expect.stringMatching(new RegExp(`^${MEDIA_REF}[0-9a-f]{64}$`)) });
    expect((model.calls[0].messages[0].content as unknown as Array<Record<string, string>>)[2].data).toBe(big);
  });

  it('gives an image stored without a media type the one its bytes say, as the providers would', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100_000, 7)]).toString('base64');
    const model = mockModel(['ok']);
    const input: Message = { role: 'user', content: [{ type: 'image', image: png }] };
    const result = await createAgent({ model, middleware: [mediaStoreMiddleware({ store: fileMediaStore(dir) })] }).run(input);
    expect(imageOf(result.messages[0])).toMatchObject({ image: expect.stringMatching(new RegExp(`^${MEDIA_REF}`)), mediaType: 'image/png' });
    expect(imageOf(model.calls[0].messages[0])).toMatchObject({ image: png, mediaType: 'image/png' });
  });

  it('stores an image a tool returned before the next model call, and resolves it in a resumed run elsewhere', async () => {
    const shot = defineTool({ name: 'screenshot', description: 'Takes a screenshot', input: z.object({}), needsApproval: true, execute: () => ({ ok: true }), toModelOutput: () => [{ type: 'text', text: 'the screen' }, { type: 'image', image: big, mediaType: 'image/png' }] });
    const script = () => mockModel([{ toolCalls: [{ name: 'screenshot', args: {} }] }, 'I see the screen.']);
    const first = createAgent({ model: script(), tools: [shot], middleware: [mediaStoreMiddleware({ store: fileMediaStore(dir) })] });
    const suspended = await first.run('Look');
    const state = JSON.parse(JSON.stringify(suspended.state));
    const model = mockModel(['I see the screen.']);
    const second = createAgent({ model, tools: [shot], middleware: [mediaStoreMiddleware({ store: fileMediaStore(dir) })] });
    const done = await second.resume(state, { [suspended.pendingApprovals[0].toolCallId]: true });
    const toolMessage = done.messages.find((m) => m.role === 'tool');
    expect(imageOf(toolMessage)?.image.startsWith(MEDIA_REF)).toBe(true);
    expect(imageOf(model.calls[0].messages.find((m) => m.role === 'tool'))?.image).toBe(big);
  });

  it('puts each piece of media once, however many model calls follow', async () => {
    let puts = 0;
    const inner = fileMediaStore(dir);
    const counting: MediaStore = { put: (media) => { puts++; return inner.put(media); }, get: (key) => inner.get(key) };
    const echo = defineTool({ name: 'echo', description: 'Echoes', input: z.object({ n: z.number() }), execute: ({ n }) => n });
    const model = mockModel([{ toolCalls: [{ name: 'echo', args: { n: 1 } }] }, { toolCalls: [{ name: 'echo', args: { n: 2 } }] }, 'done']);
    await createAgent({ model, tools: [echo], middleware: [mediaStoreMiddleware({ store: counting })] }).run({ role: 'user', content: [{ type: 'image', image: big, mediaType: 'image/png' }] });
    expect(puts).toBe(1);
    expect(model.calls.every((c) => imageOf(c.messages[0])?.image === big)).toBe(true);
  });
});

describe('media store: failures and options', () => {
  it('fails the run naming the media when the store cannot give it back, keeping the reference in the state', async () => {
    const broken: MediaStore = { put: () => 'k1', get: () => { throw new Error('bucket gone'); } };
    const error = await createAgent({ model: mockModel(['x']), middleware: [mediaStoreMiddleware({ store: broken })] })
      .run({ role: 'user', content: [{ type: 'image', image: big, mediaType: 'image/png' }] }).catch((e) => e);
    expect(error.message).toMatch(/the media "k1" of messages\[0\] could not be read from the store: bucket gone/);
    expect(imageOf(error.state.messages[0])?.image).toBe(`${MEDIA_REF}k1`);
  });

  it('refuses a bad key from put, a bad store and a misspelled option', async () => {
    const bad: MediaStore = { put: () => '', get: () => '' };
    const error = await createAgent({ model: mockModel(['x']), middleware: [mediaStoreMiddleware({ store: bad })] })
      .run({ role: 'user', content: [{ type: 'image', image: big, mediaType: 'image/png' }] }).catch((e) => e);
    expect(error.message).toMatch(/store\.put returned ""; it must return a non-empty key/);
    expect(() => mediaStoreMiddleware({ store: {} as never })).toThrow(/must be a media store/);
    expect(() => mediaStoreMiddleware({ store: fileMediaStore(dir), threshold: 10 } as never)).toThrow(/did you mean `minBytes`\?/);
    await expect(fileMediaStore(dir).get('../etc/passwd')).rejects.toThrow(/is not a key this store made/);
  });
});
