// The Chat Completions wire format, both ways: koagent's transcript and request to the JSON a
// server expects, and its replies (whole, or as streamed chunks) back to koagent's types.
import type { AssistantMessage, AssistantToolCall } from '../core/vocabulary/messages.js';
import type { FinishReason, GenerateOptions, GenerateResult, StreamPart, TokenUsage, ToolSpec } from '../core/vocabulary/model.js';
import { ReplyAssembler } from '../features/streaming/reply-assembler.js';
import { wireMessages, type ReasoningField } from './openai-messages.js';

export interface WireTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** `cached_tokens`: prompt tokens read from the server's prompt cache (OpenAI caches long prompts by itself). */
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

/** Which body field carries `maxTokens`: OpenAI's current one, or the older one many servers know. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

/** A reply that does not have the protocol's shape; the provider turns it into a `ProviderError`. */
export class MalformedReply extends Error {}

export function wireTools(tools: readonly ToolSpec[]): WireTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/** Request fields koagent knows in camelCase, and their names on the wire. */
const PASSED_THROUGH: Array<[keyof GenerateOptions & string, string]> = [
  ['topP', 'top_p'], ['stop', 'stop'], ['seed', 'seed'], ['presencePenalty', 'presence_penalty'],
  ['frequencyPenalty', 'frequency_penalty'], ['parallelToolCalls', 'parallel_tool_calls'], ['user', 'user'],
  ['reasoningEffort', 'reasoning_effort'],
];

export interface BodySettings {
  model: string;
  maxTokensField: MaxTokensField;
  stream: boolean;
  /** The provider's name, for errors about parts it cannot send. */
  provider?: string;
  /** Send reasoning parts back in this assistant field; left out when undefined. */
  reasoningField?: ReasoningField;
  /** Whether the server takes `json_schema` response formats (else `json_object`). Default true. */
  structuredOutputs?: boolean;
  /** `strict` of a `json_schema` response format. */
  strictJsonSchema?: boolean;
  /** Fields added to every request body as they are (the provider's `extraBody`). */
  extraBody?: Record<string, unknown>;
}

/**
 * The JSON body of one request. Unknown request fields are not sent (they may be meant for
 * another provider); `extraBody` (provider, then request) carries anything else, last, as is.
 */
export function requestBody(request: GenerateOptions, settings: BodySettings): Record<string, unknown> {
  const { temperature, maxTokens } = request;
  if (temperature !== undefined && (typeof temperature !== 'number' || !Number.isFinite(temperature))) {
    throw new TypeError(`request.temperature must be a number (got ${JSON.stringify(temperature)}); set it in modelSettings or a model middleware`);
  }
  if (maxTokens !== undefined && (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)) {
    throw new TypeError(`request.maxTokens must be a whole number ≥ 1 (got ${JSON.stringify(maxTokens)})`);
  }
  const messages = wireMessages(request.messages, { provider: settings.provider ?? 'openai', ...(settings.reasoningField ? { reasoningField: settings.reasoningField } : {}) });
  const body: Record<string, unknown> = { model: settings.model, messages };
  // OpenAI rejects an empty `tools` array, so it is left out when there is nothing to offer.
  if (request.tools?.length) body.tools = wireTools(request.tools);
  if (temperature !== undefined) body.temperature = temperature;
  if (maxTokens !== undefined) body[settings.maxTokensField] = maxTokens;
  for (const [ours, theirs] of PASSED_THROUGH) if (request[ours] !== undefined) body[theirs] = request[ours];
  if (request.toolChoice !== undefined) body.tool_choice = toolChoice(request.toolChoice);
  const format = responseFormat(request.responseFormat, settings);
  if (format !== undefined) body.response_format = format;
  if (settings.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  Object.assign(body, settings.extraBody, extraBodyOf(request));
  return body;
}

function extraBodyOf(request: GenerateOptions): Record<string, unknown> | undefined {
  const extra = request.extraBody;
  if (extra === undefined) return undefined;
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) throw new TypeError('request.extraBody must be an object of fields to add to the request body');
  return extra as Record<string, unknown>;
}

/**
 * `responseFormat` on the wire: JSON with a schema as `json_schema` (when the server takes it),
 * JSON without one as `json_object`, text as nothing (the default). The wire's own forms
 * (`{ type: 'json_object' }`, `{ type: 'json_schema', json_schema }`) pass as they are.
 */
function responseFormat(format: unknown, settings: BodySettings): Record<string, unknown> | undefined {
  if (format === undefined) return undefined;
  const f = format as { type?: unknown; schema?: unknown; name?: unknown; description?: unknown };
  if (typeof f !== 'object' || f === null || Array.isArray(f)) throw new TypeError(badFormat(format));
  if (f.type === 'json_object' || f.type === 'json_schema') return f as Record<string, unknown>;
  if (f.type === 'text') return undefined;
  if (f.type !== 'json') throw new TypeError(badFormat(format));
  if (f.schema !== undefined && (typeof f.schema !== 'object' || f.schema === null || Array.isArray(f.schema))) {
    throw new TypeError(`request.responseFormat.schema must be a JSON schema object (got ${JSON.stringify(f.schema)})`);
  }
  if (f.schema === undefined || settings.structuredOutputs === false) return { type: 'json_object' };
  // The wire allows letters, digits, `_` and `-`, at most 64 of them.
  const name = typeof f.name === 'string' && f.name !== '' ? f.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) : 'response';
  const jsonSchema: Record<string, unknown> = { name, schema: f.schema };
  if (typeof f.description === 'string') jsonSchema.description = f.description;
  if (settings.strictJsonSchema !== undefined) jsonSchema.strict = settings.strictJsonSchema;
  return { type: 'json_schema', json_schema: jsonSchema };
}

function badFormat(format: unknown): string {
  return `request.responseFormat must be { type: 'text' } or { type: 'json', schema?, name?, description? } (got ${JSON.stringify(format)})`;
}

/** `'auto' | 'none' | 'required'`, a tool's name as `{ name }`, or the wire form as is. */
function toolChoice(choice: unknown): unknown {
  if (typeof choice === 'object' && choice !== null && typeof (choice as { name?: unknown }).name === 'string' && !('type' in choice)) {
    return { type: 'function', function: { name: (choice as { name: string }).name } };
  }
  return choice;
}

export function usageOf(usage: WireUsage | null | undefined): TokenUsage {
  const result: TokenUsage = { inputTokens: count(usage?.prompt_tokens), outputTokens: count(usage?.completion_tokens) };
  // Reported when some were read: servers that cache nothing send 0, or no field at all. The wire
  // has no count of cache writes (OpenAI's caching is automatic and free to write).
  const cached = count(usage?.prompt_tokens_details?.cached_tokens);
  if (cached > 0) result.cachedInputTokens = cached;
  return result;
}

const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : 0);

/**
 * The server's `finish_reason` in koagent's terms. A reply that carries tool calls is
 * `tool_calls` even when a server says `stop` (several OpenAI-compatible servers do).
 */
export function finishReasonOf(reason: unknown, hasToolCalls: boolean): FinishReason {
  switch (reason) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'stop':
      return hasToolCalls ? 'tool_calls' : 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return hasToolCalls ? 'tool_calls' : 'other';
  }
}

/**
 * Tool call arguments as the model wrote them: an object when they are a JSON object, else the
 * raw text (the tool stack turns that into a `validation` error the model can read and fix).
 */
export function parseArguments(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : text;
  } catch {
    return text;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A whole `chat.completion` object to koagent's reply. */
export function completionResult(json: unknown): GenerateResult {
  if (!isObject(json)) throw new MalformedReply('the body is not a JSON object');
  const choice = Array.isArray(json.choices) ? json.choices[0] : undefined;
  if (!isObject(choice)) throw new MalformedReply('the body has no choices[0]; expected a chat.completion object');
  const wire = choice.message;
  if (!isObject(wire)) throw new MalformedReply('choices[0].message is missing');
  // The assembler a stream uses: reasoning and text in order, a text-only reply a plain string.
  const assembler = new ReplyAssembler();
  for (const part of messageParts(wire, 'choices[0].message')) assembler.add(part);
  const message: AssistantMessage = assembler.message();
  if (wire.tool_calls !== undefined && wire.tool_calls !== null) {
    if (!Array.isArray(wire.tool_calls)) throw new MalformedReply('choices[0].message.tool_calls is not an array');
    const calls = wire.tool_calls.map((c, i): AssistantToolCall => {
      const fn = isObject(c) ? c.function : undefined;
      if (!isObject(fn) || typeof fn.name !== 'string') throw new MalformedReply(`choices[0].message.tool_calls[${i}] has no function.name`);
      const args = typeof fn.arguments === 'string' ? parseArguments(fn.arguments) : isObject(fn.arguments) ? fn.arguments : '';
      return { id: typeof (c as { id?: unknown }).id === 'string' ? (c as { id: string }).id : '', name: fn.name, args };
    });
    if (calls.length > 0) message.toolCalls = calls;
  }
  return { message, usage: usageOf(json.usage as WireUsage), finishReason: finishReasonOf(choice.finish_reason, message.toolCalls !== undefined) };
}

/**
 * The reasoning and text of a message or a delta, as stream parts in order: reasoning from
 * `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama), then `content`, or
 * `refusal` when there is no content.
 */
function* messageParts(wire: Record<string, unknown>, path: string): Generator<Extract<StreamPart, { type: 'text' | 'reasoning' }>> {
  const reasoning = reasoningOf(wire);
  if (reasoning !== '') yield { type: 'reasoning', delta: reasoning };
  if (wire.content === undefined || wire.content === null) {
    if (typeof wire.refusal === 'string' && wire.refusal !== '') yield { type: 'text', delta: wire.refusal };
    return;
  }
  yield* contentParts(wire.content, `${path}.content`);
}

function reasoningOf(wire: Record<string, unknown>): string {
  if (typeof wire.reasoning_content === 'string' && wire.reasoning_content !== '') return wire.reasoning_content;
  return typeof wire.reasoning === 'string' ? wire.reasoning : '';
}

/**
 * `content` as a string, or as an array of parts, as Mistral's reasoning models send it (whole
 * and in deltas): `{ type: 'text', text }` and `{ type: 'thinking', thinking: [{ type: 'text', text }] }`.
 * A shape not read here is a `MalformedReply`: text is never dropped in silence.
 */
function* contentParts(content: unknown, path: string): Generator<Extract<StreamPart, { type: 'text' | 'reasoning' }>> {
  if (typeof content === 'string') {
    if (content !== '') yield { type: 'text', delta: content };
    return;
  }
  if (!Array.isArray(content)) throw new MalformedReply(`${path} is ${shapeOf(content)}; expected a string or an array of text and thinking parts`);
  for (let j = 0; j < content.length; j++) {
    const part: unknown = content[j];
    const where = `${path}[${j}]`;
    if (isObject(part) && part.type === 'text' && typeof part.text === 'string') {
      if (part.text !== '') yield { type: 'text', delta: part.text };
    } else if (isObject(part) && part.type === 'thinking') {
      const text = thinkingText(part.thinking, `${where}.thinking`);
      if (text !== '') yield { type: 'reasoning', delta: text };
    } else {
      const what = isObject(part) ? `a part of type ${JSON.stringify(part.type)}${part.type === 'text' ? ' without a string text' : ''}` : shapeOf(part);
      throw new MalformedReply(`${where} is ${what}, which cannot be read; expected { type: 'text', text } or { type: 'thinking', thinking: [{ type: 'text', text }] }`);
    }
  }
}

/** A thinking part's text: its own list of text parts (a plain string is taken too). */
function thinkingText(thinking: unknown, path: string): string {
  if (typeof thinking === 'string') return thinking;
  if (!Array.isArray(thinking)) throw new MalformedReply(`${path} is ${shapeOf(thinking)}; expected an array of { type: 'text', text } parts`);
  return thinking.map((part: unknown, k) => {
    if (isObject(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
    throw new MalformedReply(`${path}[${k}] is ${isObject(part) ? `a part of type ${JSON.stringify(part.type)}` : shapeOf(part)}, which cannot be read; expected { type: 'text', text }`);
  }).join('');
}

/** What a value is, for an error: `a number 3`, `an object {"a":1}`, `null`. */
function shapeOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  const json = JSON.stringify(value) ?? String(value);
  const shown = json.length > 80 ? `${json.slice(0, 80)}…` : json;
  if (Array.isArray(value)) return `an array ${shown}`;
  const type = typeof value;
  return `${type === 'object' ? 'an' : 'a'} ${type} ${shown}`;
}

interface PartialCall {
  id: string;
  name: string;
  args: string;
}

/**
 * Turns `chat.completion.chunk` objects into stream parts: reasoning and text at once, each tool call whole
 * once the server says the choice finished (its argument fragments concatenated), and one
 * `finish` part at the end, after the usage chunk that follows the finish reason.
 */
export class ChunkAssembler {
  readonly #calls = new Map<number, PartialCall>();
  #lastIndex = -1;
  #reason: unknown;
  #finished = false;
  #callsOut = false;
  #usage: TokenUsage | undefined;

  /** Whether the server has said why the reply ended (so the reply is complete). */
  get finished(): boolean {
    return this.#finished;
  }

  *accept(chunk: unknown): Generator<StreamPart> {
    if (!isObject(chunk)) throw new MalformedReply('a stream event is not a JSON object');
    if (isObject(chunk.usage)) this.#usage = usageOf(chunk.usage as WireUsage);
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isObject(choice)) return; // the usage chunk has no choices
    const delta = isObject(choice.delta) ? choice.delta : {};
    yield* messageParts(delta, 'choices[0].delta');
    if (Array.isArray(delta.tool_calls)) for (const fragment of delta.tool_calls) this.#addFragment(fragment);
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.#reason = choice.finish_reason;
      this.#finished = true;
      yield* this.#toolCalls();
    }
  }

  /** The parts still owed when the stream is over: any tool calls, then `finish`. */
  *end(): Generator<StreamPart> {
    yield* this.#toolCalls();
    yield { type: 'finish', usage: this.#usage ?? { inputTokens: 0, outputTokens: 0 }, finishReason: finishReasonOf(this.#reason, this.#calls.size > 0) };
  }

  #addFragment(fragment: unknown): void {
    if (!isObject(fragment)) throw new MalformedReply('delta.tool_calls holds something that is not an object');
    const fn = isObject(fragment.function) ? fragment.function : {};
    const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : undefined;
    // Some servers leave out `index` and send each call whole: a new id then means a new call.
    let index = typeof fragment.index === 'number' ? fragment.index : this.#lastIndex;
    if (typeof fragment.index !== 'number' && (index === -1 || (id !== undefined && this.#calls.get(index)?.id !== id))) index = this.#lastIndex + 1;
    let call = this.#calls.get(index);
    if (call === undefined) {
      call = { id: '', name: '', args: '' };
      this.#calls.set(index, call);
    }
    this.#lastIndex = index;
    if (id !== undefined && call.id === '') call.id = id;
    // The name comes whole in a call's first fragment; some servers repeat it in later ones.
    if (typeof fn.name === 'string' && call.name === '') call.name = fn.name;
    if (typeof fn.arguments === 'string') call.args += fn.arguments;
  }

  *#toolCalls(): Generator<StreamPart> {
    if (this.#callsOut || this.#calls.size === 0) return;
    this.#callsOut = true;
    const ordered = [...this.#calls.entries()].sort(([a], [b]) => a - b);
    for (const [index, call] of ordered) {
      if (call.name === '') throw new MalformedReply(`the streamed tool call at index ${index} never got a function name`);
      yield { type: 'tool-call', id: call.id, name: call.name, args: parseArguments(call.args) };
    }
  }
}
