/**
 * Any AI SDK language model (LanguageModelV2 or V3) as a koagent provider. Needs `ai` and an AI
 * SDK provider package, optional peer dependencies.
 *
 * @example
 * ```ts
 * import { aiSdk } from 'koagent/ai-sdk';
 * ```
 *
 * @packageDocumentation
 * @module koagent/ai-sdk
 * @category Providers
 */
// koagent/ai-sdk: any AI SDK language model (LanguageModelV2 or V3) as a koagent provider.
// Nothing here imports `ai` or `@ai-sdk/provider` at run time: the adapter speaks the
// specification's object shapes, declared below, so both stay optional peer dependencies.
import type { ProviderOptions } from '../core/vocabulary/content.js';
import type { AssistantToolCall } from '../core/vocabulary/messages.js';
import type { FinishReason, GenerateOptions, GenerateResult, ModelProvider, StreamPart, TokenUsage } from '../core/vocabulary/model.js';
import { ProviderError } from '../core/vocabulary/provider-error.js';
import { retryAfterMs } from './retry-after.js';
import { ReplyAssembler } from '../features/streaming/reply-assembler.js';
import { callOptions, type AiSdkCallOptions, type PromptTarget } from './ai-sdk-prompt.js';
import { parseArguments } from './openai-wire.js';

// The specification's own shapes spell absent values `T | undefined`: so do these, or a real
// model would not fit them in a program compiled with `exactOptionalPropertyTypes`.
type V2Usage = { inputTokens?: number | undefined; outputTokens?: number | undefined; cachedInputTokens?: number | undefined };
type V3Usage = { inputTokens: { total?: number | undefined; cacheRead?: number | undefined; cacheWrite?: number | undefined }; outputTokens: { total?: number | undefined } };
type AnyFinish = string | { unified: string; raw?: string | undefined };
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
  /**
   * URL patterns by media type that the model fetches itself; an image or file given by a URL
   * that matches none is refused (koagent does not download it).
   */
  readonly supportedUrls?: Record<string, RegExp[]> | PromiseLike<Record<string, RegExp[]>>;
  /** The model's one-shot call, as the AI SDK specification defines it. */
  doGenerate(options: AiSdkCallOptions): PromiseLike<{ content: AnyPart[]; finishReason: AnyFinish; usage: V2Usage | V3Usage; providerMetadata?: unknown }>;
  /** The model's streamed call, as the AI SDK specification defines it. */
  doStream(options: AiSdkCallOptions): PromiseLike<{ stream: ReadableStream<AnyPart> }>;
}

/**
 * Use an AI SDK language model as a koagent provider (content parts, reasoning with its
 * provider metadata, tool calls, streaming and usage included). Import it from `koagent/ai-sdk`.
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
  // Resolved on the first call: some models compute their supported URLs lazily.
  let urls: Promise<Record<string, RegExp[]>> | undefined;
  const options = async (request: GenerateOptions): Promise<AiSdkCallOptions> => {
    urls ??= Promise.resolve(model.supportedUrls ?? {}).then((u) => u ?? {}, () => ({}));
    const target: PromptTarget = { name, version, supportedUrls: await urls };
    return callOptions(request, target);
  };
  return {
    name,
    modelId: model.modelId,
    async generate(request: GenerateOptions): Promise<GenerateResult> {
      const call = await options(request);
      let result: Awaited<ReturnType<AiSdkLanguageModel['doGenerate']>>;
      try {
        result = await model.doGenerate(call);
      } catch (error) {
        throw fail(error, request.signal);
      }
      const reply = new ReplyAssembler();
      result.content.forEach((part, i) => {
        const piece = contentPart(part, i);
        if (piece !== undefined) reply.add(piece);
      });
      return { message: reply.message(), usage: usageOf(result.usage, result.providerMetadata), finishReason: finishReasonOf(result.finishReason, reply.hasToolCalls) };
    },
    async *stream(request: GenerateOptions): AsyncGenerator<StreamPart> {
      const call = await options(request);
      let reader: ReadableStreamDefaultReader<AnyPart>;
      try {
        reader = (await model.doStream(call)).stream.getReader();
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
          if (part.type === 'error') throw fail(part.error, request.signal);
          if (part.type === 'finish') {
            finished = true;
            yield { type: 'finish', usage: usageOf(part.usage, part.providerMetadata), finishReason: finishReasonOf(part.finishReason, calls > 0) };
            continue;
          }
          const piece = streamPart(part);
          if (piece === undefined) continue;
          if (piece.type === 'tool-call') calls++;
          yield piece;
        }
      } finally {
        if (!finished) await reader.cancel().catch(() => undefined);
        reader.releaseLock();
      }
      if (!finished) throw new ProviderError({ provider: name, modelId: model.modelId, kind: 'network', providerMessage: 'the stream ended without a finish part', retryable: true });
    },
  };
}

/**
 * A part of a whole reply as the stream part that builds it; sources and what the provider ran
 * itself (its tool calls and results) are not koagent's to keep. Each reasoning part gets an id,
 * so two in a row stay two.
 */
function contentPart(part: AnyPart, i: number): StreamPart | undefined {
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' ? withOptions({ type: 'text', delta: part.text, ...(hasOptions(part.providerMetadata) ? { id: `text_${i}` } : {}) }, part.providerMetadata) : undefined;
    case 'reasoning':
      return withOptions({ type: 'reasoning', delta: String(part.text ?? ''), id: `reasoning_${i}` }, part.providerMetadata);
    case 'file':
      return withOptions({ type: 'file', data: base64(part.data), mediaType: String(part.mediaType) }, part.providerMetadata);
    case 'tool-call':
      return part.providerExecuted === true ? undefined : { type: 'tool-call', ...toolCall(part) };
    default:
      return undefined;
  }
}

/**
 * A part of a stream as koagent's. Reasoning keeps its id; metadata that arrives on its own
 * (a signature on `reasoning-delta` or `reasoning-end`, redacted data on `reasoning-start`) is an
 * empty delta that carries it onto the part.
 */
function streamPart(part: AnyPart): StreamPart | undefined {
  switch (part.type) {
    case 'text-start':
    case 'text-end':
    case 'text-delta': {
      // Metadata (an item id) may come on any of the three; it rides an empty delta onto its part.
      const delta = part.type === 'text-delta' ? String(part.delta ?? '') : '';
      const marked = hasOptions(part.providerMetadata);
      if (delta === '' && !marked) return undefined;
      return withOptions({ type: 'text', delta, ...(marked || part.id !== undefined ? { id: String(part.id) } : {}) }, part.providerMetadata);
    }
    case 'reasoning-start':
    case 'reasoning-end':
    case 'reasoning-delta': {
      const delta = part.type === 'reasoning-delta' ? String(part.delta ?? '') : '';
      if (delta === '' && !hasOptions(part.providerMetadata)) return undefined;
      return withOptions({ type: 'reasoning', delta, id: String(part.id) }, part.providerMetadata);
    }
    case 'file':
    case 'tool-call':
      // Whole in a stream too: read as in a reply.
      return contentPart(part, 0);
    default:
      return undefined;
  }
}

const hasOptions = (metadata: unknown): metadata is ProviderOptions => typeof metadata === 'object' && metadata !== null && Object.keys(metadata).length > 0;

/** Provider metadata of a reply part becomes the `providerOptions` koagent sends back with it. */
function withOptions<T extends StreamPart>(part: T, metadata: unknown): T {
  return hasOptions(metadata) ? Object.assign(part, { providerOptions: metadata }) : part;
}

/** A generated file's data as base64 (a transcript is JSON): the AI SDK gives base64 or bytes. */
function base64(data: unknown): string {
  if (typeof data === 'string') return data;
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  throw new TypeError(`an AI SDK file part has data of type ${typeof data}; expected base64 text or bytes`);
}

/** An AI SDK tool call (its `input` is the JSON text the model wrote) as koagent's. */
function toolCall(part: AnyPart): AssistantToolCall {
  const input = part.input;
  const call: AssistantToolCall = { id: String(part.toolCallId ?? ''), name: String(part.toolName), args: typeof input === 'string' ? parseArguments(input) : input ?? {} };
  if (hasOptions(part.providerMetadata)) call.providerOptions = part.providerMetadata;
  return call;
}

/**
 * V3 reports `{ total, cacheRead, cacheWrite, … }` per direction, the total counting both; V2
 * plain numbers and `cachedInputTokens`. A missing count is 0; cache counts are reported when
 * above 0. koagent's `inputTokens` includes the cache reads and writes.
 */
function usageOf(usage: V2Usage | V3Usage | undefined, metadata: unknown): TokenUsage {
  const input = usage?.inputTokens;
  if (typeof input === 'object' && input !== null) {
    return withCache({ inputTokens: total(input), outputTokens: total(usage?.outputTokens) }, number(input.cacheRead), number(input.cacheWrite));
  }
  const v2 = usage as V2Usage | undefined;
  const result = { inputTokens: total(input), outputTokens: total(v2?.outputTokens) };
  const anthropic = v2AnthropicCache(metadata, result.inputTokens);
  if (anthropic === undefined) return withCache(result, number(v2?.cachedInputTokens), undefined);
  // Anthropic's v2 provider gives its `input_tokens`, which leave both cache counts out.
  const read = number(v2?.cachedInputTokens) ?? 0;
  return withCache({ ...result, inputTokens: result.inputTokens + read + anthropic.written }, read, anthropic.written);
}

const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const total = (n: unknown) => number(typeof n === 'object' && n !== null ? (n as { total?: unknown }).total : n) ?? 0;

function withCache(usage: TokenUsage, read: number | undefined, written: number | undefined): TokenUsage {
  if (read !== undefined && read > 0) usage.cachedInputTokens = read;
  if (written !== undefined && written > 0) usage.cacheWriteInputTokens = written;
  return usage;
}

/**
 * The cache writes of a v2 Anthropic model (`providerMetadata.anthropic.cacheCreationInputTokens`),
 * when its `inputTokens` is the raw `input_tokens` of the reply (so without the cache counts).
 */
function v2AnthropicCache(metadata: unknown, inputTokens: number): { written: number } | undefined {
  const anthropic = (metadata as { anthropic?: { cacheCreationInputTokens?: unknown; usage?: { input_tokens?: unknown } } } | undefined)?.anthropic;
  if (typeof anthropic !== 'object' || anthropic === null || !('cacheCreationInputTokens' in anthropic)) return undefined;
  if (number(anthropic.usage?.input_tokens) !== inputTokens) return undefined;
  return { written: number(anthropic.cacheCreationInputTokens) ?? 0 };
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
