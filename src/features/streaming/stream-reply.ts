// Streaming, as two layers of a streaming segment's stacks: one in the `provider` stack asks the
// model through `provider.stream` and shows text as it arrives; one outermost in the `model`
// stack makes what the consumer saw equal the reply the transcript keeps.
import type { Layer } from '../../core/vocabulary/layer.js';
import type { ModelContext } from '../../core/vocabulary/contexts.js';
import type { AssistantMessage } from '../../core/vocabulary/messages.js';
import type { FinishReason, GenerateResult, TokenUsage } from '../../core/vocabulary/model.js';
import { ReplyAssembler } from './reply-assembler.js';
import type { NamedMiddleware } from '../../core/vocabulary/middleware.js';
import type { ProviderCall } from '../../core/run/agent-core.js';
import { providerName } from '../../core/run/model-call.js';
import { markProviderError } from '../../core/vocabulary/errors.js';

// The middleware field only streaming reads: declared here, on the public `Middleware`, so it is
// streaming's own data (the entry point imports this module, so the field reaches its users).
declare module '../../core/vocabulary/middleware.js' {
  interface Middleware<C> {
    /**
     * `model` layers only: hold streamed text until this layer has returned the reply, so a
     * consumer never sees text this layer would change (redaction, output guardrails).
     */
    holdStream?: boolean;
  }
}

/** Whether some model layer holds streamed text (`holdStream`): then a streamed turn shows nothing until its reply is final. */
export function holdsStream(layers: readonly NamedMiddleware[]): boolean {
  return layers.some((mw) => mw.holdStream === true && mw.model !== undefined);
}

/** What a stream consumer has seen of a model call (and not had retracted): its text and its reasoning. */
interface Shown {
  text: string;
  reasoning: string;
}

/** Where a streamed model call keeps what the consumer saw of it (in `ctx.var`). */
const SHOWN: unique symbol = Symbol('koagent.shown');

declare module '../../core/vocabulary/contexts.js' {
  interface CallVariables {
    /** @internal koagent's own slot. */
    [SHOWN]?: Shown;
  }
}

function shownOf(turn: ModelContext): Shown {
  return (turn.var[SHOWN] ??= { text: '', reasoning: '' });
}

/**
 * A turn streamed and assembled into the same reply `generate` would give, so every layer sees
 * a streamed call exactly as a plain one. Text and reasoning deltas go to the listeners at once, unless a
 * `holdStream` layer is on the stack (`hold`): then nothing shows until the reply is final.
 * A retry's earlier attempt is retracted before the new text flows. Side calls, and providers
 * without `stream`, are asked as usual.
 */
export function streamingProviderLayer(hold: boolean): Layer<ProviderCall, GenerateResult> {
  return {
    name: 'koagent:stream',
    async fn(call, next) {
      const { turn, provider, request, emit } = call;
      if (turn === undefined || provider.stream === undefined) return next();
      retract(emit, turn);
      const reply = new ReplyAssembler();
      let usage: TokenUsage | undefined;
      let finishReason: FinishReason | undefined;
      try {
        for await (const part of provider.stream(request)) {
          request.signal?.throwIfAborted();
          if (part.type === 'finish') {
            usage = part.usage;
            finishReason = part.finishReason;
            continue;
          }
          reply.add(part);
          if (hold || (part.type !== 'text' && part.type !== 'reasoning') || part.delta === '') continue;
          const seen = shownOf(turn);
          if (part.type === 'text') {
            seen.text += part.delta;
            emit?.({ type: 'text.delta', delta: part.delta, step: turn.step });
          } else {
            seen.reasoning += part.delta;
            emit?.({ type: 'reasoning.delta', delta: part.delta, step: turn.step });
          }
        }
      } catch (error) {
        // What the stream throws is the provider's, as a plain call's rejection is.
        throw markProviderError(error, providerName(provider));
      }
      return { message: reply.message(), usage: usage ?? { inputTokens: 0, outputTokens: 0 }, finishReason: finishReason ?? (reply.hasToolCalls ? 'tool_calls' : 'stop') };
    },
  };
}

/**
 * Outermost in the `model` stack: once the stack is done, what the consumer saw becomes the
 * reply the transcript keeps — held text is released, text a layer changed after it streamed
 * is retracted and replaced, and a failed call's text is retracted. So deltas minus
 * retractions always spell the transcript's reply.
 */
export const streamReleaseLayer: Layer<ModelContext, GenerateResult> = {
  name: 'koagent:stream-release',
  async fn(ctx, next) {
    const { emit } = ctx;
    let result: GenerateResult;
    try {
      result = await next();
    } catch (error) {
      retract(emit, ctx);
      throw error;
    }
    // A layer that ended the run without calling the model leaves no reply to show.
    if (ctx.ended && ctx.reply === undefined) return result;
    const { text, reasoning } = spelled(result.message);
    const seen = ctx.var[SHOWN] ?? { text: '', reasoning: '' };
    if (seen.text !== text || seen.reasoning !== reasoning) {
      retract(emit, ctx);
      const now = shownOf(ctx);
      if (reasoning !== '') {
        now.reasoning = reasoning;
        emit?.({ type: 'reasoning.delta', delta: reasoning, step: ctx.step });
      }
      if (text !== '') {
        now.text = text;
        emit?.({ type: 'text.delta', delta: text, step: ctx.step });
      }
    }
    return result;
  },
};

/** The text and the reasoning a reply spells, as its deltas would. */
function spelled(message: AssistantMessage): Shown {
  const { content } = message;
  if (typeof content === 'string') return { text: content, reasoning: '' };
  let text = '';
  let reasoning = '';
  for (const part of content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') reasoning += part.text;
  }
  return { text, reasoning };
}

/** Take back what a call showed (a retry replaces it, or the call failed and left no reply). */
function retract(emit: ModelContext['emit'], call: ModelContext): void {
  const seen = call.var[SHOWN];
  if (seen === undefined) return;
  if (seen.reasoning !== '') emit?.({ type: 'reasoning.retract', text: seen.reasoning, step: call.step });
  if (seen.text !== '') emit?.({ type: 'text.retract', text: seen.text, step: call.step });
  delete call.var[SHOWN];
}
