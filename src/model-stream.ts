import type { AssistantMessage, ToolCallPart } from './messages.js';
import type { FinishReason, GenerateOptions, GenerateResult, ModelProvider, TokenUsage } from './model.js';
import type { Run } from './run.js';

/** What one model call has shown a stream consumer so far (text not yet retracted). */
export interface StreamedText {
  streamed: string;
}

/**
 * A streamed model call, assembled into the same reply `generate` would give, so every layer
 * sees a streamed call exactly as a plain one. Text deltas go to the run's listeners at once,
 * unless a `holdStream` layer is on the stack: then nothing is shown until the reply is final
 * (see `releaseText`). A retry's earlier attempt is retracted before the new text flows.
 */
export async function streamReply(run: Run, call: StreamedText, provider: ModelProvider, request: GenerateOptions, step: number): Promise<GenerateResult> {
  const hold = run.setup.holdsStream;
  retractText(run, call, step);
  let content = '';
  const toolCalls: ToolCallPart[] = [];
  let usage: TokenUsage | undefined;
  let finishReason: FinishReason | undefined;
  for await (const part of provider.stream!(request)) {
    request.signal?.throwIfAborted();
    if (part.type === 'text') {
      content += part.delta;
      if (!hold && part.delta !== '') {
        call.streamed += part.delta;
        run.publish({ type: 'text.delta', delta: part.delta, step });
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
}

/** Take back what a call showed (a retry replaces it, or the call failed and left no reply). */
export function retractText(run: Run, call: StreamedText, step: number): void {
  if (call.streamed === '') return;
  run.publish({ type: 'text.retract', text: call.streamed, step });
  call.streamed = '';
}

/**
 * After the model stack settled: make what the consumer saw equal the reply the transcript
 * keeps. Held text is released now; text a layer changed after it streamed is retracted and
 * replaced — so deltas minus retractions always spell the transcript's reply.
 */
export function releaseText(run: Run, call: StreamedText, reply: AssistantMessage, step: number): void {
  if (call.streamed === reply.content) return;
  retractText(run, call, step);
  if (reply.content !== '') {
    call.streamed = reply.content;
    run.publish({ type: 'text.delta', delta: reply.content, step });
  }
}
