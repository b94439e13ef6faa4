// Context editing: old tool results are most of a long run's transcript, and the model rarely
// needs them again. Past a token threshold, their content gives way to a short placeholder —
// in the kept transcript, as compaction does, so the store holds less too. Calls and results
// stay paired: only what a result says is replaced, never the message.
import { estimateTokens, optionsSchema, parseOptions, wholeNumberSchema, type AssistantMessage, type GenerateResult, type Message, type Middleware, type ModelContext, type ToolMessage } from '../api.js';
import { z } from 'zod';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'context_editing.cleared': { step: number; results: number; tokensBefore: number; tokensAfter: number; tokensCleared: number };
  }
}

/**
 * Options of `contextEditingMiddleware`. Tokens are estimated as `estimateTokens` does (four
 * characters of text a token; an image or a file as `MEDIA_TOKENS`), tool calls' arguments
 * included.
 *
 * @example contextEditingMiddleware({ triggerTokens: 40_000, keep: 3, excludeTools: ['read_plan'], clearArgs: true })
 *
 * @inline
 */
export interface ContextEditingOptions {
  /** Clear before a model call when the transcript's estimated tokens exceed this. */
  triggerTokens: number;
  /** The most recent tool results (of any tool) kept as they are (default 3). */
  keep?: number;
  /** Tools whose results are never cleared. */
  excludeTools?: string[];
  /** Clear the arguments of the calls whose results are cleared too (they become `{}`; default false). */
  clearArgs?: boolean;
  /** What a cleared result reads (default: `[tool result cleared to save context; call the tool again if you need it]`). */
  placeholder?: string;
}

/**
 * What a cleared tool result says to the model by default.
 *
 * @example const cleared = result.messages.filter((m) => m.role === 'tool' && m.content === CLEARED_PLACEHOLDER);
 */
export const CLEARED_PLACEHOLDER = '[tool result cleared to save context; call the tool again if you need it]';

const NAME = 'context-editing';

const optionsShape = optionsSchema({
  triggerTokens: wholeNumberSchema(1),
  keep: wholeNumberSchema(0).optional(),
  excludeTools: z.array(z.string(), { error: 'must be a list of tool names' }).optional(),
  clearArgs: z.boolean({ error: 'must be true or false' }).optional(),
  placeholder: z.string({ error: 'must be a string' }).min(1, { error: 'must be a non-empty string' }).optional(),
}, { noun: 'a context-editing option', aliases: { trigger: 'triggerTokens', maxTokens: 'triggerTokens', threshold: 'triggerTokens', keepLast: 'keep', keepRecent: 'keep', exclude: 'excludeTools', clearInputs: 'clearArgs', clearToolInputs: 'clearArgs', text: 'placeholder' } });

const callTokens = (m: AssistantMessage) => (m.toolCalls ? Math.ceil(JSON.stringify(m.toolCalls).length / 4) : 0);
const tokensOf = (m: Message) => estimateTokens(m.content) + (m.role === 'assistant' ? callTokens(m) : 0);
const isCleared = (m: ToolMessage) => m.metadata?.contextCleared === true;

/**
 * A transcript's running estimate, and how far it has been edited: every result before
 * `scanned` is cleared or excluded. Checking costs O(new messages) per model call.
 */
interface Tally {
  length: number;
  last: Message | undefined;
  tokens: number;
  scanned: number;
}

/**
 * A `model` middleware that, before a model call, clears old tool results once the transcript
 * passes `triggerTokens`: every result but the `keep` most recent (and those of `excludeTools`)
 * reads `placeholder` instead of its content, marked `metadata.contextCleared`; with
 * `clearArgs`, their calls' arguments become `{}`. The assistant message of each call and its
 * tool message both stay, so the conversation a provider gets stays valid. The edit is made in
 * the kept transcript (as compaction's is): it is stored, so the run holds less, and a resume
 * reads less. It counts the tokens it saved in `usage.contextTokensCleared` and emits
 * `context_editing.cleared`. Put it outside compaction: clearing is free, summaries are not.
 *
 * @example agent.use(contextEditingMiddleware({ triggerTokens: 30_000, keep: 3 }));
 */
export function contextEditingMiddleware(options: ContextEditingOptions): Middleware & { name: 'context-editing' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('contextEditingMiddleware(options): options must be an object, e.g. { triggerTokens: 30_000 }');
  parseOptions(optionsShape, options, 'contextEditingMiddleware');
  const { triggerTokens, keep = 3, clearArgs = false, placeholder = CLEARED_PLACEHOLDER } = options;
  const excluded = new Set(options.excludeTools ?? []);
  const placeholderTokens = estimateTokens(placeholder);
  // Per instance, by transcript: nothing shared between runs but this cache of counts.
  const tallies = new WeakMap<Message[], Tally>();

  const tallyOf = (messages: Message[]): Tally => {
    let tally = tallies.get(messages);
    // Someone shortened or replaced the transcript (a compaction): count it again.
    if (tally === undefined || messages.length < tally.length || (tally.length > 0 && messages[tally.length - 1] !== tally.last)) {
      tally = { length: 0, last: undefined, tokens: 0, scanned: 0 };
      tallies.set(messages, tally);
    }
    for (let i = tally.length; i < messages.length; i++) tally.tokens += tokensOf(messages[i]);
    tally.length = messages.length;
    tally.last = messages[messages.length - 1];
    return tally;
  };

  return {
    name: NAME,
    model: function clearOldToolResults(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const messages = ctx.messages;
      const tally = tallyOf(messages);
      if (tally.tokens <= triggerTokens) return next();
      // Results before `end` may go: all but the `keep` most recent.
      let end = messages.length;
      for (let i = messages.length - 1, seen = 0; seen < keep; i--) {
        if (i < tally.scanned) return next();
        if (messages[i].role === 'tool' && ++seen === keep) end = i;
      }
      const tokensBefore = tally.tokens;
      let results = 0;
      let saved = 0;
      const callsOf = new Map<number, Set<string>>();
      const edited = new Set<number>();
      let first = messages.length;
      for (let i = tally.scanned; i < end; i++) {
        const m = messages[i];
        if (m.role !== 'tool' || excluded.has(m.name) || isCleared(m)) continue;
        const tokens = estimateTokens(m.content);
        // A result shorter than the placeholder is cheaper kept.
        if (tokens <= placeholderTokens) continue;
        saved += tokens - placeholderTokens;
        results++;
        ctx.messages[i] = { role: 'tool', toolCallId: m.toolCallId, name: m.name, content: placeholder, metadata: { ...m.metadata, contextCleared: true } };
        edited.add(i);
        first = Math.min(first, i);
        if (clearArgs) {
          // A call's results follow its assistant message directly.
          let at = i - 1;
          while (at >= 0 && messages[at].role === 'tool') at--;
          if (at >= 0) (callsOf.get(at) ?? callsOf.set(at, new Set()).get(at)!).add(m.toolCallId);
        }
      }
      for (const [at, ids] of callsOf) {
        const call = messages[at] as AssistantMessage;
        const withoutArgs: AssistantMessage = { ...call, toolCalls: call.toolCalls!.map((c) => (ids.has(c.id) ? { ...c, args: {} } : c)) };
        saved += callTokens(call) - callTokens(withoutArgs);
        edited.add(at);
        first = Math.min(first, at);
        ctx.messages[at] = withoutArgs;
      }
      // The messages after the first one cleared, anew (the same content): a layer that counts
      // the transcript incrementally by the identity of the last message it saw, as compaction
      // does, then sees that it changed. The store rewrites from the first change anyway.
      for (let i = first + 1; results > 0 && i < messages.length; i++) if (!edited.has(i)) ctx.messages[i] = { ...messages[i] };
      tally.scanned = end;
      tally.tokens -= saved;
      tally.last = messages[messages.length - 1];
      if (results > 0) {
        ctx.countUsage('contextTokensCleared', saved);
        ctx.emit?.({ type: 'context_editing.cleared', step: ctx.step, results, tokensBefore, tokensAfter: tally.tokens, tokensCleared: saved });
      }
      return next();
    },
  };
}
