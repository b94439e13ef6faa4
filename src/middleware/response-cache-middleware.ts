import { createHash } from 'node:crypto';
import { z } from 'zod';
import { functionSchema, jsonOf, optionsSchema, parseOptions, type FinishReason, type GenerateOptions, type GenerateResult, type Middleware, type ModelContext } from '../api.js';
import { keyValuesOf, type KeyValueSource } from '../stores/key-values.js';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'cache.hit': { step: number; key: string; savedTokens: number };
  }
}

/**
 * Options of `responseCacheMiddleware`.
 *
 * @example responseCacheMiddleware({ ttlMs: 10 * 60_000, store: sqliteStore({ path: 'runs.db' }), scope: (ctx) => ctx.sessionId })
 *
 * @inline
 */
export interface ResponseCacheOptions {
  /** Where replies are kept: a key-value store or a run store (default: this instance's memory). A SQLite or PostgreSQL store shares them between processes. */
  store?: KeyValueSource;
  /** How long a reply is served from the cache (default one hour). */
  ttlMs?: number;
  /**
   * Keeps caches apart that must not share replies (a user, a tenant): its string becomes part
   * of the key. Default: one cache for every run using the instance.
   */
  scope?: (ctx: ModelContext) => string;
  /** Told of each hit, with the key and the usage the stored reply cost when it was made. */
  onHit?: (info: { key: string; step: number; usage: GenerateResult['usage'] }) => void;
}

const responseCacheSchema = optionsSchema({
  store: z.custom<KeyValueSource>((value) => typeof value === 'object' && value !== null, { error: 'must be a key-value store or a run store (memoryKeyValues(), sqliteStore(…), postgresStore(…))' }).optional(),
  ttlMs: z.number({ error: 'must be a positive number of milliseconds' }).positive({ error: 'must be a positive number of milliseconds' }).refine(Number.isFinite, { error: 'must be a positive number of milliseconds' }).optional(),
  scope: functionSchema('a function (ctx) => string').optional(),
  onHit: functionSchema('a function (info) => void').optional(),
}, { noun: 'a response-cache option', aliases: { ttl: 'ttlMs', maxAgeMs: 'ttlMs', maxAge: 'ttlMs', keyValues: 'store', cache: 'store', partition: 'scope', namespace: 'scope' } });

/** Only a reply that finished as the model meant is worth serving again (not a cut-off or a failure). */
const CACHEABLE: ReadonlySet<FinishReason> = new Set(['stop', 'tool_calls']);

/** What a cache entry holds. */
interface Entry {
  message: GenerateResult['message'];
  usage: GenerateResult['usage'];
  finishReason: FinishReason;
}

/**
 * A `model` middleware that serves a model call from a cache when the same request was answered
 * before: the key is a hash of the normalised request (the provider, the messages with their
 * tool-call ids renumbered and without their metadata, the tools, every setting — not the signal or the headers — with keys
 * in a stable order). A hit returns the stored reply without calling the model: it counts no
 * model call and no tokens, adds 1 to `usage.cacheHits` (and the tokens it saved to
 * `usage.cacheSavedTokens`), and emits `cache.hit`. Only replies that finished with `stop` or
 * `tool_calls` are kept. Put it outside the layers that spend (retry, fallback, rate limiting), so
 * a hit costs nothing else, and outside PII redaction, so it stores the redacted reply.
 *
 * @example createAgent({ model, middleware: [responseCacheMiddleware({ ttlMs: 3_600_000 }), retryMiddleware()] });
 */
export function responseCacheMiddleware(options: ResponseCacheOptions = {}): Middleware & { name: 'response-cache' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('responseCacheMiddleware(options): options must be an object');
  parseOptions(responseCacheSchema, options, 'responseCacheMiddleware');
  const { ttlMs = 3_600_000, scope, onHit } = options;
  const values = keyValuesOf(options.store);
  // Per run (its `ctx.state`): runs sharing the instance at once do not push each other's messages out.
  const keys = new WeakMap<object, RequestKeys>();
  return {
    name: 'response-cache',
    model: async function responseCache(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      // Before next(): the request's messages are the live transcript, which the reply joins.
      let runKeys = keys.get(ctx.state);
      if (runKeys === undefined) keys.set(ctx.state, (runKeys = new RequestKeys()));
      const key = `response-cache:${runKeys.keyOf(ctx.request, ctx.provider, scope?.(ctx))}`;
      const stored = await values.get(key);
      if (isEntry(stored)) {
        const saved = stored.usage.inputTokens + stored.usage.outputTokens;
        ctx.countUsage('cacheHits', 1);
        if (saved > 0) ctx.countUsage('cacheSavedTokens', saved);
        onHit?.({ key, step: ctx.step, usage: stored.usage });
        ctx.emit?.({ type: 'cache.hit', step: ctx.step, key, savedTokens: saved });
        // The loop keeps the reply the outermost layer returns: returning it places it, once.
        return { message: stored.message, usage: { inputTokens: 0, outputTokens: 0 }, finishReason: stored.finishReason };
      }
      const result = await next();
      if (CACHEABLE.has(result.finishReason) && !ctx.ended) {
        const entry: Entry = { message: result.message, usage: result.usage, finishReason: result.finishReason };
        await values.set(key, entry, { ttlMs });
      }
      return result;
    },
  };
}

function isEntry(value: unknown): value is Entry {
  const entry = value as Entry | undefined;
  return typeof entry === 'object' && entry !== null && entry.message?.role === 'assistant' && typeof entry.finishReason === 'string' && typeof entry.usage?.inputTokens === 'number';
}

/**
 * The cache key of a request: a SHA-256 of its canonical JSON. Tool-call ids are renumbered in
 * order of appearance (providers make new ones each time, and they say nothing of the
 * conversation); the signal and headers are left out (they do not change the answer).
 *
 * @example const key = requestKey(ctx.request, ctx.provider);
 */
export function requestKey(request: GenerateOptions, provider: { name?: string; modelId?: string }, scope?: string): string {
  return new RequestKeys().keyOf(request, provider, scope);
}

/** A tool-call id in a message's canonical text, renumbered when the text is written. */
class IdSlot {
  constructor(readonly id: string) {}
}

/** A message's canonical text in pieces, its tool-call ids left out (`slots`, between the `texts`), and those ids in the order the request numbers them. */
interface MessageText {
  texts: string[];
  slots: string[];
  order: string[];
}

/**
 * `requestKey` for the model calls of one run: each message's canonical text is made once and
 * kept by the message's JSON, so a message read again unchanged (the older part of a
 * growing transcript) costs its JSON only. Keyed by the JSON itself, a message changed in place
 * has other JSON and is made again. Only the last request's messages are kept.
 *
 * @example const keys = new RequestKeys(); const key = keys.keyOf(ctx.request, ctx.provider);
 */
export class RequestKeys {
  #kept = new Map<string, MessageText>();

  keyOf(request: GenerateOptions, provider: { name?: string; modelId?: string }, scope?: string): string {
    const { messages, tools, signal: _signal, headers: _headers, ...settings } = request;
    // Each id's new name as JSON text (`"#0"`: nothing in it to escape).
    const ids = new Map<string, string>();
    const kept = new Map<string, MessageText>();
    // `messages` sorts first among the fields: the rest is canonical's text after `"messages":[`.
    const rest = canonical({ provider: { name: provider.name ?? null, modelId: provider.modelId ?? null }, scope: scope ?? null, messages: [], tools, settings });
    let text = '{"messages":[';
    for (let i = 0; i < messages.length; i++) {
      const json = jsonOf(messages[i]) as string;
      const message = kept.get(json) ?? this.#kept.get(json) ?? messageText(json);
      kept.set(json, message);
      for (const id of message.order) if (!ids.has(id)) ids.set(id, `"#${ids.size}"`);
      text += i === 0 ? message.texts[0] : `,${message.texts[0]}`;
      for (let j = 0; j < message.slots.length; j++) text += ids.get(message.slots[j])! + message.texts[j + 1];
    }
    this.#kept = kept;
    text += rest.slice('{"messages":['.length);
    return createHash('sha256').update(text).digest('hex');
  }
}

/** A message's canonical text (from its JSON), without its metadata (koagent's, not the model's: timestamps, ids), its tool-call ids as slots. */
function messageText(json: string): MessageText {
  const plain = JSON.parse(json) as Record<string, unknown>;
  delete plain.metadata;
  const order: string[] = [];
  const slot = (value: unknown) => {
    if (typeof value !== 'string') return value;
    order.push(value);
    return new IdSlot(value);
  };
  if (Array.isArray(plain.toolCalls)) plain.toolCalls = plain.toolCalls.map((call: Record<string, unknown>) => ({ ...call, id: slot(call.id) }));
  if (plain.role === 'tool') plain.toolCallId = slot(plain.toolCallId);
  const text: MessageText = { texts: [], slots: [], order };
  const last = write(plain, '', text);
  text.texts.push(last);
  return text;
}

/** JSON with every object's keys sorted and undefined fields left out: equal requests, equal text. */
export function canonical(value: unknown): string {
  return write(value, '', undefined);
}

/** `canonical`'s text of `value` after `before`; an id slot closes a piece of `into` there. */
function write(value: unknown, before: string, into: MessageText | undefined): string {
  if (value instanceof IdSlot && into !== undefined) {
    into.texts.push(before);
    into.slots.push(value.id);
    return '';
  }
  if (value === null || typeof value !== 'object') return before + (JSON.stringify(value) ?? 'null');
  let text = before;
  if (Array.isArray(value)) {
    text += '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      // A hole writes nothing between its commas, as `map(…).join(',')` does.
      if (!(i in value)) continue;
      const item: unknown = value[i];
      text = item === undefined ? `${text}null` : write(item, text, into);
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const fields = Object.keys(record).filter((k) => record[k] !== undefined && typeof record[k] !== 'function').sort();
  text += '{';
  fields.forEach((k, i) => {
    text = write(record[k], `${text}${i > 0 ? ',' : ''}${JSON.stringify(k)}:`, into);
  });
  return `${text}}`;
}
