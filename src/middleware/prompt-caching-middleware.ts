import { optionsSchema, parseOptions, type GenerateResult, type Message, type Middleware, type ModelContext, type ProviderOptions } from '../api.js';
import { z } from 'zod';

/**
 * Where a cache breakpoint goes: `instructions` on the last of the system messages that open the
 * transcript (with the tools before it, the part every run of the agent shares), `history` on the
 * last message before the newest user message (the conversation so far), `latest` on the last
 * message of the request (so the next model call of the same run reads all of it from the cache).
 *
 * @example promptCachingMiddleware({ breakpoints: ['instructions', 'history'] })
 *
 * @inline
 */
export type CacheBreakpoint = 'instructions' | 'history' | 'latest';

/**
 * Options of `promptCachingMiddleware`.
 *
 * @example promptCachingMiddleware({ providerOptions: { anthropic: { cacheControl: { type: 'ephemeral', ttl: '1h' } } } })
 *
 * @inline
 */
export interface PromptCachingOptions {
  /** Which breakpoints to mark (default all three; Anthropic allows four per request). */
  breakpoints?: CacheBreakpoint[];
  /**
   * The provider options that mark a breakpoint, merged into the message's own (default
   * `{ anthropic: { cacheControl: { type: 'ephemeral' } } }`; for Bedrock through the AI SDK,
   * `{ bedrock: { cachePoint: { type: 'default' } } }`). Providers ignore other providers' keys.
   */
  providerOptions?: ProviderOptions;
}

const NAME = 'prompt-caching';
const ANTHROPIC: ProviderOptions = { anthropic: { cacheControl: { type: 'ephemeral' } } };

/** The shape of `promptCachingMiddleware`'s options, described once. */
const cachingOptionsSchema = optionsSchema({
  breakpoints: z.array(z.enum(['instructions', 'history', 'latest'], { error: "must be 'instructions', 'history' or 'latest'" }), { error: "must be a list of 'instructions', 'history' and 'latest'" }).optional(),
  providerOptions: z.record(z.string(), z.record(z.string(), z.unknown()), { error: 'must be an object keyed by provider, e.g. { anthropic: { cacheControl: { type: \'ephemeral\' } } }' }).optional(),
}, { noun: 'a prompt caching option', aliases: { cacheControl: 'providerOptions', marks: 'breakpoints', points: 'breakpoints', at: 'breakpoints' } });

/**
 * A `model` middleware that marks the stable prefix of each request as cacheable, for providers
 * whose prompt caching needs to be asked for (Anthropic, through the AI SDK adapter): provider
 * options on the instructions, on the last message before the newest user turn, and on the
 * request's last message. The marks go on a copy of the request's message list, for this call
 * only: the transcript, its store and the other providers never see them. OpenAI (and servers
 * like it) cache long prompts by themselves: this layer changes nothing there. Either way the
 * tokens read from the cache come back in `usage.cachedInputTokens`, and those written to it (by
 * Anthropic, billed above fresh input) in `usage.cacheWriteInputTokens`.
 *
 * Put it after every layer that rewrites the request (compaction, context editing, the todo
 * list), so it marks the request as the provider gets it.
 *
 * @example createAgent({ model: aiSdk(anthropic('claude-sonnet-4-5')), middleware: [promptCachingMiddleware()] });
 */
export function promptCachingMiddleware(options: PromptCachingOptions = {}): Middleware & { name: 'prompt-caching' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('promptCachingMiddleware(options): options must be an object');
  parseOptions(cachingOptionsSchema, options, 'promptCachingMiddleware');
  const breakpoints = new Set<CacheBreakpoint>(options.breakpoints ?? ['instructions', 'history', 'latest']);
  const marks = options.providerOptions ?? ANTHROPIC;
  return {
    name: NAME,
    model: async function promptCaching(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const live = ctx.request.messages;
      // A copy of the list, with copies of the marked messages: the transcript stays as it was.
      // Copied first, in one pass, so the search for the breakpoints reads a plain array, not the transcript's view.
      const sent: Message[] = new Array(live.length);
      for (let i = 0; i < sent.length; i++) sent[i] = live[i];
      const at = breakpointsOf(sent, breakpoints);
      if (at.size === 0) return next();
      for (const i of at) sent[i] = marked(sent[i], marks);
      ctx.request.messages = sent;
      try {
        return await next();
      } finally {
        ctx.request.messages = live;
      }
    },
  };
}

/** The indexes of the messages to mark. */
function breakpointsOf(messages: readonly Message[], wanted: ReadonlySet<CacheBreakpoint>): Set<number> {
  const at = new Set<number>();
  if (wanted.has('instructions')) {
    let last = -1;
    while (messages[last + 1]?.role === 'system') last++;
    if (last >= 0) at.add(last);
  }
  if (wanted.has('history')) {
    let newestUser = messages.length - 1;
    while (newestUser >= 0 && messages[newestUser].role !== 'user') newestUser--;
    // Only a conversation: the instructions alone are the `instructions` breakpoint's.
    if (newestUser > 0 && messages[newestUser - 1].role !== 'system') at.add(newestUser - 1);
  }
  if (wanted.has('latest') && messages.length > 0) at.add(messages.length - 1);
  return at;
}

function marked(message: Message, marks: ProviderOptions): Message {
  const own = message.providerOptions ?? {};
  const providerOptions: ProviderOptions = { ...own };
  for (const [provider, value] of Object.entries(marks)) providerOptions[provider] = { ...own[provider], ...value };
  return { ...message, providerOptions } as Message;
}
