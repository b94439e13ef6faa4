import { z } from 'zod';
import type { ProviderOptions } from './content.js';
import type { AssistantMessage, Message } from './messages.js';
import { wholeNumberSchema } from './options.js';

/**
 * A tool as the model is told about it: its JSON schema is derived from the tool's zod schema.
 *
 * @example const names = request.tools.map((spec: ToolSpec) => spec.name);
 */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * One model request. Middleware on the `model` stack may change any field before `next()`.
 * `messages` is the run's live transcript (not a copy).
 *
 * @example model: (ctx, next) => { ctx.request.maxTokens = 512; return next(); }
 */
export interface GenerateOptions {
  messages: Message[];
  tools: ToolSpec[];
  temperature?: number;
  maxTokens?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Ask for a reply of JSON (fitting `schema`, when given) instead of free text; see `ResponseFormat`. */
  responseFormat?: ResponseFormat;
  /** Anything else a provider understands (e.g. `topP`, `stop`, `toolChoice`). */
  [option: string]: unknown;
}

/**
 * What kind of reply a request asks for (the AI SDK's shape): free text, or JSON — fitting a JSON
 * schema when one is given. The agent's `output` option sets it for you; providers translate it
 * (`response_format` on the Chat Completions wire).
 *
 * @example model: (ctx, next) => { ctx.request.responseFormat = { type: 'json', schema: { type: 'object' } }; return next(); }
 *
 * @inline
 */
export type ResponseFormat = { type: 'text' } | { type: 'json'; schema?: Record<string, unknown>; name?: string; description?: string };

/**
 * The agent's `modelSettings`: any field a provider understands, with the common ones checked.
 * `messages`, `tools` and `signal` are the run's own, set on every request.
 */
export const modelSettingsSchema = z.looseObject({
  temperature: z.number({ error: 'must be a number' }).optional(),
  maxTokens: wholeNumberSchema(1).optional(),
  headers: z.record(z.string(), z.string(), { error: 'must be an object of header names to string values' }).optional(),
  messages: z.undefined({ error: "is the run's own transcript; add messages with instructions or input instead" }).optional(),
  tools: z.undefined({ error: "is made from the agent's tools; give tools to createAgent instead" }).optional(),
  signal: z.undefined({ error: "is the run's own; pass a signal to run(input, { signal }) instead" }).optional(),
}, { error: 'must be an object of request fields' });

/**
 * Token counts of one model call.
 *
 * @example const cost = (u: TokenUsage) => u.inputTokens * 0.15e-6 + u.outputTokens * 0.6e-6;
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache (part of `inputTokens`), when it says. */
  cachedInputTokens?: number;
  /** Input tokens written to the provider's prompt cache (part of `inputTokens`, billed above fresh input by some providers), when it says. */
  cacheWriteInputTokens?: number;
}

/**
 * Why the model stopped: `tool_calls` when it asks for tools, `hook_end` for a reply `ctx.end()` made.
 *
 * @example if (result.finishReason === 'length') console.warn('the reply was cut off');
 */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'error' | 'hook_end' | 'other';

/**
 * What a provider's `generate` resolves to, and what the `model` stack's `next()` resolves to.
 *
 * @example const reply: GenerateResult = { message: { role: 'assistant', content: 'Hi' }, usage: { inputTokens: 3, outputTokens: 1 }, finishReason: 'stop' };
 */
export interface GenerateResult {
  message: AssistantMessage;
  usage: TokenUsage;
  finishReason: FinishReason;
}

/**
 * A piece of a streamed reply (see `ModelProvider.stream`): text and reasoning deltas, whole
 * files and tool calls, then the finish. Reasoning deltas in a row form one reasoning part
 * (a new `id` starts another); their `providerOptions` are merged into it, as providers often
 * send a signature only at the end.
 *
 * @example async function* stream() { yield { type: 'text', delta: 'Hi' } as StreamPart; yield { type: 'finish', usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' } as StreamPart; }
 */
export type StreamPart =
  | { type: 'text'; delta: string; /** Which text part the delta continues (streams that interleave parts say so). */ id?: string; /** Provider data the text must be sent back with (an item id); it makes the content a list of parts. */ providerOptions?: ProviderOptions }
  | { type: 'reasoning'; delta: string; id?: string; providerOptions?: ProviderOptions }
  | { type: 'file'; data: string; mediaType: string; providerOptions?: ProviderOptions }
  | { type: 'tool-call'; id: string; name: string; args: unknown; providerOptions?: ProviderOptions }
  | { type: 'finish'; usage: TokenUsage; finishReason: FinishReason };

/**
 * A model. Any object with `generate` is one, so a provider is five lines:
 *
 * @example const echo: ModelProvider = { async generate(req) {
 *   return { message: { role: 'assistant', content: 'hi' }, usage: { inputTokens: 0, outputTokens: 0 }, finishReason: 'stop' };
 * } };
 */
export interface ModelProvider {
  /** Shown in events, errors and spans. */
  readonly name?: string;
  /** The model id, when the provider has one (e.g. `gpt-5-mini`). */
  readonly modelId?: string;
  /**
   * Whether the provider can hold a reply to a JSON schema (`request.responseFormat`). `false`
   * makes an agent's `output` use a final-answer tool instead; unset counts as true.
   */
  readonly structuredOutputs?: boolean;
  /** Ask the model for one reply to `request`. */
  generate(request: GenerateOptions): Promise<GenerateResult>;
  /** Optional: the same reply as parts, so runs can stream text as it arrives. */
  stream?(request: GenerateOptions): AsyncIterable<StreamPart>;
}

export function isModelProvider(value: unknown): value is ModelProvider {
  return typeof value === 'object' && value !== null && typeof (value as ModelProvider).generate === 'function';
}
