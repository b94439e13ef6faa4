import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { mediaSource, optionsSchema, parseOptions, wholeNumberSchema, type ContentPart, type Message, type Middleware, type ModelContext } from '../api.js';

/**
 * Where large media of a transcript are kept, so the run state holds a short reference instead
 * of their base64 data. `put` returns a key (any string without a newline); `get` gives the data
 * back for that key, in this or another process.
 *
 * @example const store: MediaStore = { put: async ({ data }) => s3.put(data), get: (key) => s3.get(key) };
 */
export interface MediaStore {
  /** Keep `media` (base64 `data`); return the key to find it by. */
  put(media: { data: string; mediaType: string }): Promise<string> | string;
  /** The base64 data kept under `key`. */
  get(key: string): Promise<string> | string;
}

/**
 * Options of `mediaStoreMiddleware`.
 *
 * @example mediaStoreMiddleware({ store: fileMediaStore('.media'), minBytes: 32 * 1024 })
 *
 * @inline
 */
export interface MediaStoreOptions {
  store: MediaStore;
  /** Base64 data at least this long is stored by reference (default 64 KiB); smaller parts stay inline. */
  minBytes?: number;
}

/**
 * The scheme of a stored part's reference: `koagent-media:<key>`, in `image` or `data`.
 *
 * @example const stored = typeof part.image === 'string' && part.image.startsWith(MEDIA_REF);
 */
export const MEDIA_REF = 'koagent-media:';

const isStore = (value: unknown) => typeof (value as MediaStore | null)?.put === 'function' && typeof (value as MediaStore).get === 'function';
const mediaStoreOptionsSchema = optionsSchema({
  store: z.custom<MediaStore>(isStore, { error: 'must be a media store { put(media), get(key) }, e.g. fileMediaStore(dir)' }),
  minBytes: wholeNumberSchema(0).optional(),
}, { noun: 'an option of mediaStoreMiddleware', aliases: { threshold: 'minBytes', minSize: 'minBytes', maxInlineBytes: 'minBytes' } });

/** Inline base64 data of a part (an image's `image`, a file's `data`), with its media type, or undefined for a URL. */
function inlineData(part: ContentPart): { data: string; mediaType: string } | undefined {
  if (part.type !== 'image' && part.type !== 'file') return undefined;
  const source = mediaSource(part);
  if ('url' in source) return undefined;
  return { data: source.data, mediaType: source.mediaType ?? 'application/octet-stream' };
}

const referenceOf = (part: ContentPart): string | undefined => {
  const given = part.type === 'image' ? part.image : part.type === 'file' ? part.data : undefined;
  return given?.startsWith(MEDIA_REF) ? given.slice(MEDIA_REF.length) : undefined;
};

function withData(part: ContentPart, data: string, mediaType: string): ContentPart {
  if (part.type === 'image') return { ...part, image: data, mediaType };
  if (part.type === 'file') return { ...part, data, mediaType };
  return part;
}

/** A message's content as parts (or undefined when it is a string: nothing to store). */
const partsOf = (m: Message): readonly ContentPart[] | undefined => (typeof m.content === 'string' ? undefined : m.content as readonly ContentPart[]);

/**
 * A `model` layer that keeps large images and files out of the run state: before each model
 * call it moves base64 data of at least `minBytes` into the store, leaving `koagent-media:<key>`
 * references in the transcript (so what is checkpointed or sent to `resume` stays small), and it
 * gives the provider the data back in the request. Messages are read once each as they arrive;
 * a call whose transcript holds references pays a shallow copy of the message list, and reads
 * the referenced data from the store.
 *
 * @example agent.use(mediaStoreMiddleware({ store: fileMediaStore('/var/lib/agent/media') }));
 */
export function mediaStoreMiddleware(options: MediaStoreOptions): Middleware & { name: string } {
  parseOptions(mediaStoreOptionsSchema, options, 'mediaStoreMiddleware(options)');
  const { store, minBytes = 64 * 1024 } = options;
  // Per transcript: how far it has been scanned, so each message is read once.
  const scanned = new WeakMap<Message[], { length: number; last: Message | undefined }>();

  async function storeLarge(ctx: ModelContext): Promise<void> {
    const messages = ctx.messages;
    const mark = scanned.get(messages);
    const from = mark !== undefined && mark.length <= messages.length && (mark.length === 0 || messages[mark.length - 1] === mark.last) ? mark.length : 0;
    let replaced: Message[] | undefined;
    for (let i = from; i < messages.length; i++) {
      const parts = partsOf(messages[i]);
      if (parts === undefined) continue;
      let changed: ContentPart[] | undefined;
      for (let j = 0; j < parts.length; j++) {
        const inline = inlineData(parts[j]);
        if (inline === undefined || inline.data.length < minBytes) continue;
        const key = await store.put(inline);
        if (typeof key !== 'string' || key === '' || key.includes('\n')) throw new TypeError(`mediaStoreMiddleware: store.put returned ${JSON.stringify(key)}; it must return a non-empty key without a newline`);
        (changed ??= parts.slice())[j] = withData(parts[j], MEDIA_REF + key, inline.mediaType);
      }
      if (changed !== undefined) (replaced ??= messages.slice())[i] = { ...messages[i], content: changed } as Message;
    }
    if (replaced !== undefined) ctx.setMessages(replaced);
    scanned.set(messages, { length: messages.length, last: messages[messages.length - 1] });
  }

  async function resolved(messages: readonly Message[]): Promise<Message[] | undefined> {
    let copy: Message[] | undefined;
    for (let i = 0; i < messages.length; i++) {
      const parts = partsOf(messages[i]);
      if (parts === undefined || !parts.some((p) => referenceOf(p) !== undefined)) continue;
      const content = await Promise.all(parts.map(async (part) => {
        const key = referenceOf(part);
        if (key === undefined) return part;
        let data: string;
        try {
          data = await store.get(key);
        } catch (error) {
          throw new Error(`mediaStoreMiddleware: the media ${JSON.stringify(key)} of messages[${i}] could not be read from the store: ${(error as Error).message}`, { cause: error });
        }
        return withData(part, data, (part as { mediaType?: string }).mediaType ?? 'application/octet-stream');
      }));
      (copy ??= messages.slice())[i] = { ...messages[i], content } as Message;
    }
    return copy;
  }

  return {
    name: 'media-store',
    async model(ctx, next) {
      await storeLarge(ctx);
      const forProvider = await resolved(ctx.request.messages);
      if (forProvider !== undefined) ctx.request.messages = forProvider;
      return next();
    },
  };
}

/**
 * A media store in a directory: one file per distinct piece of data, named by its SHA-256 (the
 * same image stored twice is one file). Keys are the file names.
 *
 * @example agent.use(mediaStoreMiddleware({ store: fileMediaStore('./media') }));
 */
export function fileMediaStore(directory: string): MediaStore {
  if (typeof directory !== 'string' || directory === '') throw new TypeError('fileMediaStore(directory): give the directory to keep media in');
  return {
    async put({ data }) {
      const key = createHash('sha256').update(data).digest('hex');
      await mkdir(directory, { recursive: true });
      await writeFile(join(directory, key), Buffer.from(data, 'base64'));
      return key;
    },
    async get(key) {
      if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`fileMediaStore: ${JSON.stringify(key)} is not a key this store made`);
      return (await readFile(join(directory, key))).toString('base64');
    },
  };
}
