// Streaming, as two layers of a streaming segment's stacks: one in the `provider` stack asks the
// model through `provider.stream` and shows text as it arrives; one outermost in the `model`
// stack makes what the consumer saw equal the reply the transcript keeps.
import { segmentOf } from '../../core/base-context.js';
import type { Layer } from '../../core/compose.js';
import type { ModelContext } from '../../core/contexts.js';
import type { AssistantMessage, AssistantToolCall } from '../../core/messages.js';
import type { FinishReason, GenerateResult, TokenUsage } from '../../core/model.js';
import type { ProviderCall, Segment } from '../../core/segment.js';

/** Text of each model call a stream consumer has seen (and not had retracted). */
const shown = new WeakMap<ModelContext, string>();

/**
 * A turn streamed and assembled into the same reply `generate` would give, so every layer sees
 * a streamed call exactly as a plain one. Text deltas go to the listeners at once, unless a
 * `holdStream` layer is on the stack (`hold`): then nothing shows until the reply is final.
 * A retry's earlier attempt is retracted before the new text flows. Side calls, and providers
 * without `stream`, are asked as usual.
 */
export function streamingProviderLayer(hold: boolean): Layer<ProviderCall, GenerateResult> {
  return {
    name: 'koagent:stream',
    trusted: true,
    async fn(call, next) {
      const { turn, provider, request, segment } = call;
      if (turn === undefined || provider.stream === undefined) return next(call);
      retract(segment, turn);
      let content = '';
      const toolCalls: AssistantToolCall[] = [];
      let usage: TokenUsage | undefined;
      let finishReason: FinishReason | undefined;
      for await (const part of provider.stream(request)) {
        request.signal?.throwIfAborted();
        if (part.type === 'text') {
          content += part.delta;
          if (!hold && part.delta !== '') {
            shown.set(turn, (shown.get(turn) ?? '') + part.delta);
            segment.publish({ type: 'text.delta', delta: part.delta, step: turn.step });
          }
        } else if (part.type === 'tool-call') {
          toolCalls.push({ id: part.id, name: part.name, args: part.args });
        } else if (part.type === 'finish') {
          usage = part.usage;
          finishReason = part.finishReason;
        }
      }
      const message: AssistantMessage = { role: 'assistant', content };
      if (toolCalls.length > 0) message.toolCalls = toolCalls;
      return { message, usage: usage ?? { inputTokens: 0, outputTokens: 0 }, finishReason: finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop') };
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
  trusted: true,
  async fn(ctx, next) {
    const segment = segmentOf(ctx);
    let result: GenerateResult;
    try {
      result = await next(ctx);
    } catch (error) {
      retract(segment, ctx);
      throw error;
    }
    // A layer that ended the run without calling the model leaves no reply to show.
    if (ctx.ended && ctx.reply === undefined) return result;
    const reply = result.message.content;
    if ((shown.get(ctx) ?? '') !== reply) {
      retract(segment, ctx);
      if (reply !== '') {
        shown.set(ctx, reply);
        segment.publish({ type: 'text.delta', delta: reply, step: ctx.step });
      }
    }
    return result;
  },
};

/** Take back what a call showed (a retry replaces it, or the call failed and left no reply). */
function retract(segment: Segment, call: ModelContext): void {
  const text = shown.get(call);
  if (text === undefined || text === '') return;
  segment.publish({ type: 'text.retract', text, step: call.step });
  shown.delete(call);
}
