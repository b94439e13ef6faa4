import { estimateTokens, optionsSchema, parseOptions, textOf, type Message, type Middleware, type ModelContext, type ModelProvider } from '../api.js';
import { z } from 'zod';

/**
 * When and how to compact. Give `maxMessages`, `maxTokens` or both; tokens are estimated as
 * `estimateTokens` does (four characters of text a token, an image or a file as `MEDIA_TOKENS`).
 *
 * @example createAgent({ model, compaction: { maxMessages: 40, keepRecent: 10 } })
 *
 * @inline
 */
export interface CompactionOptions {
  /** Compact before a model call when the transcript has more messages than this. */
  maxMessages?: number;
  /** Compact before a model call when the transcript's estimated tokens exceed this. */
  maxTokens?: number;
  /** Messages at the end that are always kept as they are (default: half of `maxMessages`, else 6). */
  keepRecent?: number;
  /** The model that writes summaries (default: the agent's). */
  model?: ModelProvider;
  /** Instructions for the summary. */
  prompt?: string;
}

const whole = z.number({ error: 'must be a whole number ≥ 1' }).int({ error: 'must be a whole number ≥ 1' }).min(1, { error: 'must be a whole number ≥ 1' });

/** The shape of the compaction options, described once. */
const compactionOptionsSchema = optionsSchema({
  maxMessages: whole.optional(),
  maxTokens: whole.optional(),
  keepRecent: whole.optional(),
  model: z.custom<ModelProvider>((v) => typeof (v as ModelProvider | null)?.generate === 'function', { error: 'must be a model provider (an object with generate)' }).optional(),
  prompt: z.string({ error: 'must be a string' }).optional(),
}, { noun: 'a compaction option', aliases: { keep: 'keepRecent', keepLast: 'keepRecent', recent: 'keepRecent', tokens: 'maxTokens', messages: 'maxMessages', summarizer: 'model', provider: 'model', instructions: 'prompt' } });

const DEFAULT_PROMPT =
  'Summarise the conversation below for an assistant that will continue it without seeing it. ' +
  'Keep every fact, decision, open question, tool result and number that may matter later. Be brief.';

export const SUMMARY_PREFIX = 'Summary of the earlier conversation:\n';

const estimate = (m: Message) => estimateTokens(m.content) + (m.role === 'assistant' && m.toolCalls ? Math.ceil(JSON.stringify(m.toolCalls).length / 4) : 0);

/** A running token estimate per transcript, so checking the budget costs O(new messages). */
const tallies = new WeakMap<Message[], { length: number; last: Message | undefined; tokens: number }>();

export function transcriptTokens(messages: Message[]): number {
  let tally = tallies.get(messages);
  if (tally === undefined || messages.length < tally.length || (tally.length > 0 && messages[tally.length - 1] !== tally.last)) {
    tally = { length: 0, last: undefined, tokens: 0 };
    tallies.set(messages, tally);
  }
  for (let i = tally.length; i < messages.length; i++) tally.tokens += estimate(messages[i]);
  tally.length = messages.length;
  tally.last = messages[messages.length - 1];
  return tally.tokens;
}

/**
 * A message as a line of the summary request. Images and files are named, not sent: the summary
 * is text, and the summariser need not read a screenshot to note that one was there.
 */
function contentText(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => {
    if (part.type === 'text') return part.text;
    if (part.type === 'image') return '[image]';
    if (part.type === 'file') return `[file${part.filename ? ` ${part.filename}` : ''}, ${part.mediaType}]`;
    return ''; // reasoning is the model's own scratch work, not part of the conversation
  }).filter((text) => text !== '').join(' ');
}

function render(messages: Message[]): string {
  return messages.map((m) => {
    const content = contentText(m.content);
    if (m.role === 'tool') return `tool result (${m.name}, call ${m.toolCallId}): ${content}`;
    if (m.role === 'assistant' && m.toolCalls?.length) {
      const calls = m.toolCalls.map((c) => `${c.name}(${typeof c.args === 'string' ? c.args : JSON.stringify(c.args)})`).join(', ');
      return `assistant: ${content}${content ? ' ' : ''}[called ${calls}]`;
    }
    return `${m.role}: ${content}`;
  }).join('\n');
}

/**
 * Where the kept tail may start: never on a tool result, so no result is parted from the call
 * that asked for it. Returns `head` when nothing can be cut.
 */
function cutPoint(messages: Message[], head: number, keep: number): number {
  let cut = Math.max(head, messages.length - keep);
  while (cut > head && messages[cut].role === 'tool') cut--;
  return cut;
}

/**
 * A `model` layer that keeps the transcript under a budget: before a model call, the older
 * messages are summarised through `ctx.generate(…, 'compaction')` and replaced, in place, by one
 * summary message. Leading system messages and the most recent messages stay as they are.
 * Emits `compaction.start` and `compaction.done` (with counts before and after). It is
 * `lead-only`: sub-agents of this agent do not inherit it. The agent's `compaction` option
 * installs it innermost.
 *
 * @example agent.use(compactionMiddleware({ maxTokens: 60_000, keepRecent: 8 }));
 */
export function compactionMiddleware(options: CompactionOptions): Middleware & { name: string } {
  const { maxMessages, maxTokens, prompt = DEFAULT_PROMPT } = options ?? {};
  if (typeof options !== 'object' || options === null) throw new TypeError('compaction: give maxMessages, maxTokens or both');
  parseOptions(compactionOptionsSchema, options, 'compaction');
  if (maxMessages === undefined && maxTokens === undefined) throw new TypeError('compaction: give maxMessages, maxTokens or both');
  const keep = options.keepRecent ?? (maxMessages !== undefined ? Math.max(1, Math.floor(maxMessages / 2)) : 6);
  return {
    name: 'compaction',
    // A budget belongs to one agent's transcript: a sub-agent has its own `compaction` option,
    // and an inherited copy would run outermost there, before the sub-agent's own layers.
    scope: 'lead-only',
    async model(ctx: ModelContext, next) {
      const messages = ctx.messages;
      const tokens = maxTokens === undefined ? 0 : transcriptTokens(messages);
      const over = (maxMessages !== undefined && messages.length > maxMessages) || (maxTokens !== undefined && tokens > maxTokens);
      if (!over) return next();
      let head = 0;
      while (head < messages.length && messages[head].role === 'system') head++;
      const cut = cutPoint(messages, head, keep);
      if (cut - head < 2) return next(); // nothing worth folding into a summary
      const before = messages.length;
      const tokensBefore = tokens || transcriptTokens(messages);
      ctx.emit?.({ type: 'compaction.start', messages: before, tokens: tokensBefore });
      // Without a model of its own, the summary is written by the agent's.
      const reply = await ctx.generate({
        ...(options.model !== undefined ? { provider: options.model } : {}),
        messages: [{ role: 'system', content: prompt }, { role: 'user', content: render(messages.slice(head, cut)) }],
      }, 'compaction');
      ctx.setMessages([...messages.slice(0, head), { role: 'user', content: SUMMARY_PREFIX + textOf(reply.message.content) }, ...messages.slice(cut)]);
      ctx.emit?.({ type: 'compaction.done', before, after: messages.length, tokensBefore, tokensAfter: transcriptTokens(messages) });
      return next();
    },
  };
}
