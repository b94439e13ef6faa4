// koagent/ai-sdk: any AI SDK language model (LanguageModelV2 or V3) as a koagent provider.
// Nothing here imports `ai` or `@ai-sdk/provider` at run time: the adapter speaks the
// specification's object shapes, declared below, so both stay optional peer dependencies.
import type { AssistantMessage, Message, ToolCallPart, ToolMessage } from '../messages.js';
import type { FinishReason, GenerateOptions, GenerateResult, ModelProvider, StreamPart, TokenUsage } from '../model.js';
import { parseArguments } from './openai-wire.js';
import { ProviderError, retryAfterMs } from './provider-error.js';

/** The part of the AI SDK's prompt format koagent produces (identical in V2 and V3). */
export type AiSdkPromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<{ type: 'text'; text: string }> }
  | { role: 'assistant'; content: Array<{ type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }> }
  | { role: 'tool'; content: Array<{ type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'text' | 'error-text'; value: string } }> };

/** The call options koagent passes to `doGenerate` / `doStream`. */
export interface AiSdkCallOptions {
  prompt: AiSdkPromptMessage[];
  // `any`: each spec version types these with its own JSONSchema7 / provider-options types, and a
  // model's doGenerate must accept ours whichever version it was built against.
  tools?: Array<{ type: 'function'; name: string; description?: string; inputSchema: any }>;
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
  providerOptions?: any;
}

type V2Usage = { inputTokens?: number; outputTokens?: number };
type V3Usage = { inputTokens: { total?: number }; outputTokens: { total?: number } };
type AnyFinish = string | { unified: string; raw?: string };
type AnyPart = { type: string; [field: string]: any };

/**
 * An AI SDK language model, as far as koagent uses it: `specificationVersion` `'v2'` (AI SDK 5)
 * or `'v3'` (AI SDK 6), `doGenerate` and `doStream`. Models from `@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/google` … and `MockLanguageModelV3` from `ai/test` all fit.
 *
 * @example import { anthropic } from '@ai-sdk/anthropic'; const model: AiSdkLanguageModel = anthropic('claude-sonnet-4-5');
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: 'v2' | 'v3';
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<{ content: AnyPart[]; finishReason: AnyFinish; usage: V2Usage | V3Usage }>;
  doStream(options: AiSdkCallOptions): PromiseLike<{ stream: ReadableStream<AnyPart> }>;
}

/**
 * Use an AI SDK language model as a koagent provider (tool calls, streaming and usage
 * included). Import it from `koagent/ai-sdk`.
 *
 * @example import { openai } from '@ai-sdk/openai';
 *          createAgent({ model: aiSdk(openai('gpt-5-mini')), tools });
 */
export function aiSdk(model: AiSdkLanguageModel): ModelProvider {
  if (typeof model !== 'object' || model === null || typeof model.doGenerate !== 'function' || typeof model.doStream !== 'function') {
    throw new TypeError('aiSdk(model): model must be an AI SDK language model (with doGenerate and doStream), e.g. openai("gpt-5-mini") from @ai-sdk/openai');
  }
  const version = model.specificationVersion;
  if (version !== 'v2' && version !== 'v3') {
    throw new TypeError(`aiSdk(model): ${model.provider}/${model.modelId} implements specification ${JSON.stringify(version)}; koagent supports v2 (AI SDK 5) and v3 (AI SDK 6)`);
  }
  const name = `ai-sdk:${model.provider}`;
  const fail = (error: unknown, signal: AbortSignal | undefined): unknown => (signal?.aborted ? signal.reason : providerError(error, name, model.modelId));
  return {
    name,
    modelId: model.modelId,
    async generate(request: GenerateOptions): Promise<GenerateResult> {
      let result: Awaited<ReturnType<AiSdkLanguageModel['doGenerate']>>;
      try {
        result = await model.doGenerate(callOptions(request));
      } catch (error) {
        throw fail(error, request.signal);
      }
      const message: AssistantMessage = { role: 'assistant', content: '' };
      const calls: ToolCallPart[] = [];
      for (const part of result.content) {
        if (part.type === 'text') message.content += part.text;
        else if (part.type === 'tool-call' && part.providerExecuted !== true) calls.push(toolCall(part));
      }
      if (calls.length > 0) message.toolCalls = calls;
      return { message, usage: usageOf(result.usage), finishReason: finishReasonOf(result.finishReason, calls.length > 0) };
    },
    async *stream(request: GenerateOptions): AsyncGenerator<StreamPart> {
      let reader: ReadableStreamDefaultReader<AnyPart>;
      try {
        reader = (await model.doStream(callOptions(request))).stream.getReader();
      } catch (error) {
        throw fail(error, request.signal);
      }
      let finished = false;
      let calls = 0;
      try {
        for (;;) {
          let read: Awaited<ReturnType<typeof reader.read>>;
          try {
            read = await reader.read();
          } catch (error) {
            throw fail(error, request.signal);
          }
          if (read.done) break;
          const part = read.value;
          if (part.type === 'text-delta' && part.delta !== '') yield { type: 'text', delta: part.delta };
          else if (part.type === 'tool-call' && part.providerExecuted !== true) {
            calls++;
            yield { type: 'tool-call', ...toolCall(part) };
          }
          else if (part.type === 'error') throw fail(part.error, request.signal);
          else if (part.type === 'finish') {
            finished = true;
            yield { type: 'finish', usage: usageOf(part.usage), finishReason: finishReasonOf(part.finishReason, calls > 0) };
          }
        }
      } finally {
        if (!finished) await reader.cancel().catch(() => undefined);
        reader.releaseLock();
      }
      if (!finished) throw new ProviderError({ provider: name, modelId: model.modelId, kind: 'network', providerMessage: 'the stream ended without a finish part', retryable: true });
    },
  };
}

/** A koagent request as AI SDK call options. */
export function callOptions(request: GenerateOptions): AiSdkCallOptions {
  const options: AiSdkCallOptions = { prompt: aiSdkPrompt(request.messages) };
  if (request.tools?.length) options.tools = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.parameters }));
  const choice = request.toolChoice;
  if (choice === 'auto' || choice === 'none' || choice === 'required') options.toolChoice = { type: choice };
  else if (typeof choice === 'object' && choice !== null && typeof (choice as { name?: unknown }).name === 'string') options.toolChoice = { type: 'tool', toolName: (choice as { name: string }).name };
  if (request.maxTokens !== undefined) options.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) options.temperature = request.temperature;
  const stop = request.stop;
  if (stop !== undefined) options.stopSequences = Array.isArray(stop) ? stop : [String(stop)];
  for (const key of ['topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'providerOptions'] as const) {
    if (request[key] !== undefined) (options as unknown as Record<string, unknown>)[key] = request[key];
  }
  if (request.signal !== undefined) options.abortSignal = request.signal;
  if (request.headers !== undefined) options.headers = request.headers;
  return options;
}

/**
 * koagent's transcript in the AI SDK's prompt format: text as text parts, tool calls as
 * `tool-call` parts, and each run of tool messages as one `tool` message of `tool-result`
 * parts (an error outcome as `error-text`), as the AI SDK itself groups them.
 */
export function aiSdkPrompt(messages: readonly Message[]): AiSdkPromptMessage[] {
  const prompt: AiSdkPromptMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') prompt.push({ role: 'system', content: m.content });
    else if (m.role === 'user') prompt.push({ role: 'user', content: [{ type: 'text', text: m.content }] });
    else if (m.role === 'assistant') {
      const content: Extract<AiSdkPromptMessage, { role: 'assistant' }>['content'] = m.content === '' ? [] : [{ type: 'text', text: m.content }];
      for (const call of m.toolCalls ?? []) {
        content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: typeof call.args === 'string' ? parseArguments(call.args) : call.args });
      }
      prompt.push({ role: 'assistant', content });
    } else {
      const result = toolResult(m);
      const last = prompt[prompt.length - 1];
      if (last?.role === 'tool') last.content.push(result);
      else prompt.push({ role: 'tool', content: [result] });
    }
  }
  return prompt;
}

function toolResult(m: ToolMessage): Extract<AiSdkPromptMessage, { role: 'tool' }>['content'][number] {
  const failed = m.metadata?.error !== undefined;
  return { type: 'tool-result', toolCallId: m.toolCallId, toolName: m.name, output: { type: failed ? 'error-text' : 'text', value: m.content } };
}

/** An AI SDK tool call (its `input` is the JSON text the model wrote) as koagent's. */
function toolCall(part: AnyPart): ToolCallPart {
  const input = part.input;
  return { id: String(part.toolCallId ?? ''), name: String(part.toolName), args: typeof input === 'string' ? parseArguments(input) : input ?? {} };
}

/** V3 reports `{ total }` per direction, V2 plain numbers; a missing count is 0. */
function usageOf(usage: V2Usage | V3Usage | undefined): TokenUsage {
  const total = (n: unknown) => {
    const value = typeof n === 'object' && n !== null ? (n as { total?: unknown }).total : n;
    return typeof value === 'number' && Number.isFinite(value) ? value : 0;
  };
  return { inputTokens: total(usage?.inputTokens), outputTokens: total(usage?.outputTokens) };
}

const FINISH: Record<string, FinishReason> = {
  stop: 'stop', length: 'length', 'content-filter': 'content_filter', 'tool-calls': 'tool_calls', error: 'error', other: 'other', unknown: 'other',
};

function finishReasonOf(reason: AnyFinish | undefined, hasToolCalls: boolean): FinishReason {
  const unified = typeof reason === 'object' && reason !== null ? reason.unified : reason;
  const mapped = FINISH[String(unified)] ?? 'other';
  return hasToolCalls && mapped === 'stop' ? 'tool_calls' : mapped;
}

/** An AI SDK `APICallError` (status, retryable, headers) as koagent's `ProviderError`; other errors pass through. */
function providerError(error: unknown, provider: string, modelId: string): unknown {
  const e = error as { name?: unknown; message?: unknown; statusCode?: unknown; isRetryable?: unknown; responseHeaders?: Record<string, string>; data?: unknown };
  if (typeof e !== 'object' || e === null || e.name !== 'AI_APICallError') return error;
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const wait = retryAfterMs(e.responseHeaders);
  const code = (e.data as { error?: { code?: unknown; type?: unknown } } | undefined)?.error;
  const providerCode = typeof code?.code === 'string' ? code.code : typeof code?.type === 'string' ? code.type : undefined;
  return new ProviderError({
    provider, modelId, kind: status === undefined ? 'network' : 'http', providerMessage: String(e.message), retryable: e.isRetryable === true, cause: error,
    ...(status !== undefined ? { status } : {}), ...(wait !== undefined ? { retryAfterMs: wait } : {}), ...(providerCode !== undefined ? { providerCode } : {}),
  });
}
