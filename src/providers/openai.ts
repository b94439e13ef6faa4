import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { z } from 'zod';
import { functionSchema, optionsSchema, parseOptions } from '../core/vocabulary/options.js';
import type { GenerateOptions, GenerateResult, ModelProvider, StreamPart } from '../core/vocabulary/model.js';
import { replyParts } from '../features/streaming/reply-assembler.js';
import { ChunkAssembler, completionResult, MalformedReply, requestBody, type BodySettings, type MaxTokensField } from './openai-wire.js';
import { isRetryableStatus, ProviderError, type ProviderErrorDetails } from '../core/vocabulary/provider-error.js';
import { retryAfterMs } from './retry-after.js';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Options of `openai()`. Only `model` is required when `OPENAI_API_KEY` is set.
 *
 * @example openai({ model: 'llama3.2', baseURL: 'http://localhost:11434/v1', maxTokensField: 'max_tokens' })
 *
 * @inline
 */
export interface OpenAIProviderOptions {
  /** The model id the server knows, e.g. `gpt-5-mini`. */
  model: string;
  /**
   * Sent as `Authorization: Bearer …`. Defaults to `OPENAI_API_KEY`, but only when `baseURL` is
   * not given either, so an OpenAI key is never sent to another server by accident.
   */
  apiKey?: string;
  /** The API root; `/chat/completions` is appended. Default `OPENAI_BASE_URL`, else OpenAI's. */
  baseURL?: string;
  /** Sent with every request; they override the defaults, and a request's `headers` override them. */
  headers?: Record<string, string>;
  /** Shown in errors and events (default `openai`). */
  name?: string;
  /**
   * Where `maxTokens` goes: `max_completion_tokens` (default; what OpenAI's current models
   * require) or `max_tokens` (what older OpenAI-compatible servers understand).
   */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
  /** Fields added as they are to every request body (e.g. `{ reasoning_effort: 'low' }`). */
  extraBody?: Record<string, unknown>;
  /** The `fetch` to use (a proxy agent, a test double); default the global one. */
  fetch?: typeof globalThis.fetch;
  /**
   * Send the reasoning of earlier replies back to the server: `true` or `'reasoning_content'`
   * (DeepSeek's field, which vLLM reads too), or `'reasoning'` (OpenRouter's, Ollama's). Off by
   * default: most servers reject reasoning in a request, or ignore it. Reasoning in replies is
   * always read, from either field.
   */
  sendReasoning?: boolean | 'reasoning_content' | 'reasoning';
  /**
   * Whether the server takes `response_format: { type: 'json_schema' }` (default true). `false`
   * sends a JSON request as `{ type: 'json_object' }`, and tells an agent's `output` to use a
   * final-answer tool instead (`provider.structuredOutputs`).
   */
  structuredOutputs?: boolean;
  /**
   * `strict` of the `json_schema` response format (not sent by default). OpenAI's strict mode
   * refuses schemas with optional properties, which zod's JSON schemas often have.
   */
  strictJsonSchema?: boolean;
}

/** The shape of `openai()`'s options, described once. */
const openaiOptionsSchema = optionsSchema({
  model: z.string({ error: "must be the model id, e.g. 'gpt-5-mini'" }).min(1, { error: "must be the model id, e.g. 'gpt-5-mini'" }),
  apiKey: z.string({ error: 'must be a string' }).optional(),
  baseURL: z.string({ error: "must be a URL string such as 'http://localhost:11434/v1'" }).optional(),
  headers: z.record(z.string(), z.string(), { error: 'must be an object of header names to string values' }).optional(),
  name: z.string({ error: 'must be a string' }).optional(),
  maxTokensField: z.enum(['max_completion_tokens', 'max_tokens'], { error: "must be 'max_completion_tokens' or 'max_tokens'" }).optional(),
  extraBody: z.record(z.string(), z.unknown(), { error: 'must be an object of body fields' }).optional(),
  fetch: functionSchema('a fetch function').optional(),
  sendReasoning: z.union([z.boolean(), z.enum(['reasoning_content', 'reasoning'])], { error: "must be true, false, 'reasoning_content' or 'reasoning'" }).optional(),
  structuredOutputs: z.boolean({ error: 'must be true or false' }).optional(),
  strictJsonSchema: z.boolean({ error: 'must be true or false' }).optional(),
}, { noun: 'an option of openai()', aliases: { key: 'apiKey', api_key: 'apiKey', baseUrl: 'baseURL', url: 'baseURL', endpoint: 'baseURL', modelId: 'model', body: 'extraBody', reasoning: 'sendReasoning', strict: 'strictJsonSchema' } });

/**
 * A model behind the OpenAI Chat Completions API: OpenAI, or any server that speaks it (Ollama,
 * vLLM, llama.cpp, LM Studio, OpenRouter, gateways) through `baseURL`. Streams over SSE.
 *
 * @example const model = openai({ model: 'gpt-5-mini' });   // reads OPENAI_API_KEY
 */
export function openai(options: OpenAIProviderOptions): OpenAIChatModel {
  return new OpenAIChatModel(options);
}

/**
 * What `openai()` returns: a `ModelProvider` for the Chat Completions API.
 *
 * @example const model: OpenAIChatModel = openai({ model: 'gpt-5-mini' }); console.log(model.url);
 */
export class OpenAIChatModel implements ModelProvider {
  readonly name: string;
  readonly modelId: string;
  readonly url: string;
  /** Whether the server takes JSON-schema response formats (the `structuredOutputs` option). */
  readonly structuredOutputs: boolean;
  readonly #apiKey?: string;
  readonly #headers: Record<string, string>;
  readonly #body: Omit<BodySettings, 'stream'>;
  readonly #fetch: typeof globalThis.fetch;

  constructor(options: OpenAIProviderOptions) {
    const where = 'openai(options)';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object { model, apiKey?, baseURL? }`);
    parseOptions(openaiOptionsSchema, options, where);
    const { model, headers = {}, maxTokensField = 'max_completion_tokens', extraBody } = options;
    const fromEnv = options.baseURL === undefined;
    // An empty variable counts as unset, as shells and .env files often leave them.
    const baseURL = options.baseURL ?? (process.env.OPENAI_BASE_URL || OPENAI_BASE_URL);
    const apiKey = options.apiKey ?? (fromEnv ? process.env.OPENAI_API_KEY || undefined : undefined);
    try {
      new URL(baseURL);
    } catch {
      throw new TypeError(`${where}: baseURL ${JSON.stringify(baseURL)} is not a URL; give the API root, e.g. 'https://api.openai.com/v1'`);
    }
    if ((apiKey === undefined || apiKey === '') && baseURL.replace(/\/+$/, '') === OPENAI_BASE_URL) {
      throw new TypeError(`${where}: no API key for ${OPENAI_BASE_URL}; set OPENAI_API_KEY or pass apiKey (for a server that needs no key, pass its baseURL)`);
    }
    this.name = options.name ?? 'openai';
    this.modelId = model;
    this.url = `${baseURL.replace(/\/+$/, '')}/chat/completions`;
    if (apiKey !== undefined && apiKey !== '') this.#apiKey = apiKey;
    this.#headers = { ...headers };
    this.structuredOutputs = options.structuredOutputs ?? true;
    const reasoningField = options.sendReasoning === true ? 'reasoning_content' : options.sendReasoning || undefined;
    this.#body = {
      model, maxTokensField: maxTokensField as MaxTokensField, provider: this.name, structuredOutputs: this.structuredOutputs,
      ...(extraBody !== undefined ? { extraBody } : {}), ...(reasoningField !== undefined ? { reasoningField } : {}),
      ...(options.strictJsonSchema !== undefined ? { strictJsonSchema: options.strictJsonSchema } : {}),
    };
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** One Chat Completions request; a failure is a `ProviderError`. */
  async generate(request: GenerateOptions): Promise<GenerateResult> {
    const response = await this.#post(request, false);
    const text = await this.#read(() => response.text(), request.signal);
    if (!response.ok) throw this.#httpError(response, text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw this.#malformed(`the body is not JSON (${(error as Error).message}): ${snippet(text)}`, response.status);
    }
    try {
      return completionResult(json);
    } catch (error) {
      if (error instanceof MalformedReply) throw this.#malformed(error.message, response.status);
      throw error;
    }
  }

  async *stream(request: GenerateOptions): AsyncGenerator<StreamPart> {
    const { signal } = request;
    const response = await this.#post(request, true);
    if (!response.ok) throw this.#httpError(response, await this.#read(() => response.text(), signal));
    const type = response.headers.get('content-type') ?? '';
    if (!type.includes('text/event-stream')) {
      // A server that ignores `stream: true` answers with one whole completion: stream it as parts.
      yield* this.#wholeAsParts(response, signal);
      return;
    }
    const assembler = new ChunkAssembler();
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => events.push(event) });
    // A streaming decoder keeps a character split across two network reads whole.
    const decoder = new TextDecoder();
    const reader = response.body!.getReader();
    let done = false;
    let eof = false;
    try {
      while (!done) {
        const read = await this.#read(() => reader.read(), signal);
        eof = read.done;
        parser.feed(read.done ? decoder.decode() : decoder.decode(read.value, { stream: true }));
        for (const event of events.splice(0)) {
          if (event.data === '[DONE]') {
            done = true;
            break;
          }
          yield* this.#chunkParts(assembler, event.data, response.status);
        }
        if (read.done && !done) {
          if (!assembler.finished) throw this.#networkError(new Error('the stream ended before the reply was complete (no finish_reason, no [DONE])'));
          done = true;
        }
      }
    } finally {
      // Release the connection if the consumer stopped early, something failed, or bytes follow [DONE].
      if (!eof) await reader.cancel().catch(() => undefined);
    }
    yield* assembler.end();
  }

  *#chunkParts(assembler: ChunkAssembler, data: string, status: number): Generator<StreamPart> {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (error) {
      throw this.#malformed(`a stream event is not JSON (${(error as Error).message}): ${snippet(data)}`, status);
    }
    const reported = (chunk as { error?: unknown } | null)?.error;
    if (reported !== undefined && reported !== null) {
      // An error event inside a 200 stream: the server failed after it started answering.
      const { message, code } = errorFields(chunk, data);
      throw new ProviderError({ ...this.#who(), kind: 'stream', status, providerMessage: message, ...(code !== undefined ? { providerCode: code } : {}), retryable: true });
    }
    try {
      yield* assembler.accept(chunk);
    } catch (error) {
      if (error instanceof MalformedReply) throw this.#malformed(error.message, status);
      throw error;
    }
  }

  async *#wholeAsParts(response: Response, signal: AbortSignal | undefined): AsyncGenerator<StreamPart> {
    const text = await this.#read(() => response.text(), signal);
    let result: GenerateResult;
    try {
      result = completionResult(JSON.parse(text));
    } catch (error) {
      throw this.#malformed(error instanceof MalformedReply ? error.message : `the body is not JSON: ${snippet(text)}`, response.status);
    }
    yield* replyParts(result.message);
    yield { type: 'finish', usage: result.usage, finishReason: result.finishReason };
  }

  /** Send the request; headers: defaults, then the provider's `headers`, then the request's. */
  async #post(request: GenerateOptions, stream: boolean): Promise<Response> {
    const body = requestBody(request, { ...this.#body, stream });
    const headers = new Headers({ 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' });
    if (this.#apiKey !== undefined) headers.set('authorization', `Bearer ${this.#apiKey}`);
    for (const [name, value] of Object.entries(this.#headers)) headers.set(name, value);
    if (request.headers !== undefined && (typeof request.headers !== 'object' || request.headers === null)) {
      throw new TypeError('request.headers must be an object of header names to string values');
    }
    for (const [name, value] of Object.entries(request.headers ?? {})) if (typeof value === 'string') headers.set(name, value);
    const send = this.#fetch; // called unbound: some fetch implementations reject a foreign `this`
    return this.#read(() => send(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal: request.signal }), request.signal);
  }

  /** Await a network step; a cancelled request rethrows the signal's reason, a broken one is a `network` error. */
  async #read<T>(step: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (ProviderError.is(error)) throw error;
      throw this.#networkError(error);
    }
  }

  #who(): Pick<ProviderErrorDetails, 'provider' | 'modelId'> {
    return { provider: this.name, modelId: this.modelId };
  }

  #networkError(error: unknown): ProviderError {
    const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const detail = [(error as Error)?.message ?? String(error), cause?.code ?? cause?.message].filter(Boolean).join(': ');
    return new ProviderError({ ...this.#who(), kind: 'network', providerMessage: `${detail} (POST ${this.url})`, retryable: true, cause: error });
  }

  #malformed(message: string, status: number): ProviderError {
    return new ProviderError({ ...this.#who(), kind: 'malformed', status, providerMessage: message, retryable: false, hint: `Is ${this.url} an OpenAI-compatible Chat Completions endpoint?` });
  }

  #httpError(response: Response, text: string): ProviderError {
    const { message, code } = errorFields(safeJson(text), text || response.statusText);
    const status = response.status;
    const wait = retryAfterMs(response.headers);
    const hint = hintFor(status, this);
    return new ProviderError({
      ...this.#who(), kind: 'http', status, providerMessage: message, retryable: isRetryableStatus(status),
      ...(code !== undefined ? { providerCode: code } : {}), ...(wait !== undefined ? { retryAfterMs: wait } : {}), ...(hint !== undefined ? { hint } : {}),
    });
  }
}

function hintFor(status: number, model: OpenAIChatModel): string | undefined {
  if (status === 401 || status === 403) return model.url.startsWith(OPENAI_BASE_URL) ? 'Check OPENAI_API_KEY (or the apiKey option)' : 'Check the apiKey or headers this server expects';
  if (status === 404) return `Check the model id "${model.modelId}" and that ${model.url} is the server's Chat Completions URL`;
  return undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The message and code of an error body: OpenAI's `{ error: { message, code, type } }`, or looser shapes. */
function errorFields(json: unknown, fallback: string): { message: string; code?: string } {
  const body = json as { error?: unknown; message?: unknown } | undefined;
  const error = body?.error;
  if (typeof error === 'string') return { message: error };
  if (typeof error === 'object' && error !== null) {
    const e = error as { message?: unknown; code?: unknown; type?: unknown };
    const code = typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : undefined;
    return { message: typeof e.message === 'string' ? e.message : snippet(JSON.stringify(error)), ...(code !== undefined ? { code } : {}) };
  }
  if (typeof body?.message === 'string') return { message: body.message };
  return { message: snippet(fallback) || 'no error message' };
}

function snippet(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
