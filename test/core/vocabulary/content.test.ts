// Content parts: what a message's content may hold, how it is checked where it enters, how it
// survives JSON and resume, and the helpers layers use on it.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, mapText, textOf, type Message } from '../../../src/index.js';
import { estimateTokens } from '../../../src/core/vocabulary/content.js';
import { isUrl, MEDIA_TOKENS, mediaSource, parseDataUrl, sniffMediaType } from '../../../src/core/vocabulary/content.js';
import { contentProblem } from '../../../src/core/vocabulary/content.js';
import { checkState } from '../../../src/core/state/state-schema.js';
import { mockModel } from '../../../src/testing/index.js';

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('what each role\'s content may hold', () => {
  it.each([
    ['user', [{ type: 'text', text: 'Look' }, { type: 'image', image: png, mediaType: 'image/png' }, { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' }]],
    ['user', [{ type: 'image', image: 'https://example.com/cat.png' }]],
    ['assistant', [{ type: 'reasoning', text: 'Think', providerOptions: { anthropic: { signature: 'sig' } } }, { type: 'text', text: 'Answer' }]],
    ['tool', [{ type: 'text', text: 'shot' }, { type: 'image', image: `data:image/png;base64,${png}` }]],
  ] as const)('a %s message may hold %j', (role, content) => {
    expect(contentProblem(content, role, 'content')).toBeUndefined();
  });

  it.each([
    ['system', [{ type: 'text', text: 'x' }], 'content must be a string (system messages hold text only)'],
    ['user', [{ type: 'reasoning', text: 'x' }], 'content[0] is a "reasoning" part, which a user message cannot hold (it may hold text, image, file)'],
    ['assistant', [{ type: 'image', image: png }], 'content[0] is a "image" part, which a assistant message cannot hold'],
    ['user', [{ type: 'image', image: new Uint8Array([1, 2]) }], "content[0].image must be a string: a URL or base64 data (got bytes: a transcript is JSON, so pass Buffer.from(bytes).toString('base64'))"],
    ['user', [{ type: 'image', image: new URL('https://example.com/a.png') }], 'content[0].image must be a string: a URL or base64 data (got a URL object: pass url.href)'],
    ['user', [{ type: 'file', data: 'JVBERi0=' }], "content[0].mediaType must be the file's media type, e.g. 'application/pdf'"],
    ['assistant', [{ type: 'text', text: 'x', providerOptions: 'openai' }], 'content[0].providerOptions must be an object keyed by provider'],
    ['tool', [{ type: 'text' }], 'content[0].text must be a string'],
  ] as const)('a %s message refuses %j', (role, content, message) => {
    expect(contentProblem(content, role, 'content')).toContain(message);
  });

  it('refuses bad parts where they enter: run input and a tool\'s model output', async () => {
    await expect(createAgent({ model: mockModel(['x']) }).run({ role: 'user', content: [{ type: 'image' }] } as never)).rejects.toThrow(/input\.content\[0\]\.image must be a string/);
    const bad = defineTool({ name: 'shot', description: 'x', execute: () => 'x', toModelOutput: () => [{ type: 'reasoning', text: 'no' }] as never });
    const result = await createAgent({ model: mockModel([{ toolCalls: [{ name: 'shot' }] }, 'ok']), tools: [bad] }).run('go');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toMatch(/toModelOutput.*reasoning/s);
  });
});

describe('a media type that lies about the bytes', () => {
  // A provider sends the label it is given; the model's API then refuses the part, or reads a
  // PDF as a broken PNG. So the label is checked against the first bytes where content enters.
  const pdf = Buffer.from('%PDF-1.4\n%âãÏÓ\n').toString('base64');
  const webp = Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ').toString('base64');
  const wav = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ').toString('base64');

  it('is refused, naming the part, the label, where it came from, the bytes\' type and the fix', () => {
    expect(contentProblem([{ type: 'image', image: `data:image/png;base64,${pdf}` }], 'user', 'input.content')).toBe(
      "input.content[0].image is labelled image/png (its data: URL), but its bytes are application/pdf; data of type application/pdf belongs in a file part: { type: 'file', data, mediaType: 'application/pdf' }",
    );
    expect(contentProblem([{ type: 'image', image: png, mediaType: 'image/jpeg' }], 'tool', 'content')).toBe("content[0].image is labelled image/jpeg (its mediaType), but its bytes are image/png; label it 'image/png'");
    expect(contentProblem([{ type: 'file', data: `data:application/pdf;base64,${png}`, mediaType: 'application/pdf' }], 'user', 'c')).toMatch(/^c\[0\]\.data is labelled application\/pdf \(its mediaType\), but its bytes are image\/png/);
  });

  it('a label that says nothing, another name of the same type, or bytes of a type not told are fine', () => {
    for (const content of [
      [{ type: 'image', image: `data:application/octet-stream;base64,${png}` }],
      [{ type: 'image', image: png, mediaType: 'image/*' }],
      [{ type: 'image', image: `data:image/jpg;base64,/9j/4AAQ` }],
      [{ type: 'image', image: png, mediaType: 'IMAGE/PNG; charset=binary' }],
      [{ type: 'image', image: webp, mediaType: 'image/webp' }],
      // A WAV is a RIFF file too, but not a WebP one.
      [{ type: 'file', data: wav, mediaType: 'audio/wav' }],
      [{ type: 'image', image: 'aGVsbG8=', mediaType: 'image/png' }],
      [{ type: 'image', image: 'https://example.com/report.pdf', mediaType: 'image/png' }],
    ]) expect(contentProblem(content, 'user', 'c')).toBeUndefined();
    expect(sniffMediaType(webp)).toBe('image/webp');
    expect(sniffMediaType(wav)).toBeUndefined();
  });

  it('fails the run where it enters (run input, a hook\'s write), but does not stop a stored state from resuming', async () => {
    const lying = { role: 'user', content: [{ type: 'image', image: `data:image/png;base64,${pdf}` }] } as Message;
    await expect(createAgent({ model: mockModel(['x']) }).run(lying)).rejects.toThrow(/input\.content\[0\]\.image is labelled image\/png \(its data: URL\), but its bytes are application\/pdf/);
    const error = await createAgent({ model: mockModel(['x']), hooks: [{ name: 'attach', preGenerate: (ctx) => void ctx.messages.push(lying) }] }).run('go').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'hook_failed', layer: 'attach', message: expect.stringMatching(/ctx\.messages\[1\]\.content\[0\]\.image is labelled image\/png/) });
    expect(() => checkState({ ...createState(), messages: [lying] })).not.toThrow();
  });
});

describe('parts in the run state', () => {
  it('survive JSON and a resume, checked by the state schema', async () => {
    const rm = defineTool({ name: 'rm', description: 'Removes', input: z.object({ path: z.string() }), needsApproval: true, execute: () => 'gone' });
    const model = mockModel([{ reasoning: { text: 'Remove it.', providerOptions: { anthropic: { signature: 's1' } } }, toolCalls: [{ name: 'rm', args: { path: '/a' } }] }, 'Done.']);
    const agent = createAgent({ model, tools: [rm] });
    const suspended = await agent.run({ role: 'user', content: [{ type: 'text', text: 'Remove this' }, { type: 'image', image: png, mediaType: 'image/png' }] });
    const state = JSON.parse(JSON.stringify(suspended.state));
    expect(() => checkState(state)).not.toThrow();
    const done = await agent.resume(state, { [suspended.pendingApprovals[0].toolCallId]: true });
    expect(model.calls[1].messages[0].content).toEqual([{ type: 'text', text: 'Remove this' }, { type: 'image', image: png, mediaType: 'image/png' }]);
    expect(model.calls[1].messages[1].content).toEqual([{ type: 'reasoning', text: 'Remove it.', providerOptions: { anthropic: { signature: 's1' } } }]);
    expect(done.text).toBe('Done.');
  });

  it('refuses a state whose part is bad, naming its path', () => {
    const broken = { ...createState(), messages: [{ role: 'user', content: [{ type: 'image', image: 42 }] }] };
    expect(() => checkState(broken)).toThrow(/state\.messages\[0\]\.content\[0\]\.image must be a string/);
  });
});

function createState() {
  return { version: 3, runId: 'r', sessionId: 's', agentName: 'agent', agentId: 'agent', toolsFingerprint: 'f', status: 'completed', segment: 1, messages: [] as Message[], steps: 0,
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, modelCalls: 0, toolCalls: 0 }, pendingApprovals: [], decisions: {}, settled: [], ledger: [], hookState: {}, children: {} };
}

describe('helpers for layers', () => {
  it('textOf joins text parts and leaves reasoning and media out', () => {
    expect(textOf('plain')).toBe('plain');
    expect(textOf([{ type: 'reasoning', text: 'hm' }, { type: 'text', text: 'A' }, { type: 'file', data: 'x', mediaType: 'text/plain' }, { type: 'text', text: 'B' }])).toBe('AB');
  });

  it('mapText changes only the text, in a string or in each text part', () => {
    const mask = (t: string) => t.replace(/\d/g, '#');
    expect(mapText('card 1234', mask)).toBe('card ####');
    const parts = [{ type: 'text' as const, text: 'pin 42' }, { type: 'image' as const, image: png }];
    expect(mapText(parts, mask)).toEqual([{ type: 'text', text: 'pin ##' }, { type: 'image', image: png }]);
    expect(parts[0].text).toBe('pin 42');
  });

  it('estimateTokens counts text at four characters and each image or file as MEDIA_TOKENS', () => {
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(estimateTokens([{ type: 'text', text: 'abcd' }, { type: 'image', image: png.repeat(50) }, { type: 'reasoning', text: 'abcdefgh' }])).toBe(1 + MEDIA_TOKENS + 2);
  });

  it('tells URLs from base64, reads data URLs and sniffs media types', () => {
    expect(isUrl('https://x/y.png')).toBe(true);
    expect(isUrl(png)).toBe(false);
    expect(parseDataUrl(`data:image/png;base64,${png}`)).toEqual({ mediaType: 'image/png', data: png });
    expect(parseDataUrl('data:text/plain,hello')).toBeUndefined();
    expect(sniffMediaType(png)).toBe('image/png');
    expect(sniffMediaType('/9j/4AAQ')).toBe('image/jpeg');
    expect(sniffMediaType('JVBERi0xLjQ=')).toBe('application/pdf');
    expect(sniffMediaType('aGVsbG8=')).toBeUndefined();
  });

  it('says where a part\'s bytes are, with the media type its own field, a data URL or its first bytes give', () => {
    expect(mediaSource({ type: 'image', image: 'https://x/y.png' })).toEqual({ url: 'https://x/y.png' });
    expect(mediaSource({ type: 'image', image: `data:image/jpeg;base64,${png}` })).toEqual({ data: png, mediaType: 'image/jpeg' });
    expect(mediaSource({ type: 'image', image: png })).toEqual({ data: png, mediaType: 'image/png' });
    expect(mediaSource({ type: 'image', image: png, mediaType: 'image/webp' })).toEqual({ data: png, mediaType: 'image/webp' });
    expect(mediaSource({ type: 'image', image: 'aGVsbG8=' })).toEqual({ data: 'aGVsbG8=' });
    expect(mediaSource({ type: 'file', data: `data:application/pdf;base64,JVBERi0`, mediaType: 'application/pdf' })).toEqual({ data: 'JVBERi0', mediaType: 'application/pdf' });
  });
});
