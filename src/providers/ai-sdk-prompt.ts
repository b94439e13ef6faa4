// A koagent request in the AI SDK's call-options format (spec V2 and V3; they differ only in
// the parts a tool result's `content` output may hold).
import { isUrl, parseDataUrl, sniffMediaType, type ContentPart, type FilePart, type ImagePart, type ProviderOptions } from '../core/vocabulary/content.js';
import type { AssistantToolCall, Message, ToolMessage } from '../core/vocabulary/messages.js';
import type { GenerateOptions } from '../core/vocabulary/model.js';
import { shortUrl, unsendable } from './parts.js';
import { parseArguments } from './openai-wire.js';

// `any` for provider options: koagent's are plain JSON objects, which each spec version types as
// its own JSONObject, and a model's doGenerate must accept ours whichever version it was built
// against. `any[]` for a tool result's content: V3 holds `image-data`, `image-url`, `file-data`
// and `file-url` parts there, V2 `media`.
/**
 * The AI SDK prompt koagent produces (the parts of the V2 and V3 specifications it uses): text,
 * files (images are files with an image media type; a URL as a `URL` object), reasoning and
 * tool calls with their `providerOptions`, and tool results whose `output` is text, an error
 * text, or `content` with images and files.
 *
 * @example const m: AiSdkPromptMessage = { role: 'user', content: [{ type: 'text', text: 'Hi' }] };
 *
 * @inline
 */
export type AiSdkPromptMessage = (
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<{ type: 'text'; text: string; providerOptions?: any } | { type: 'file'; data: string | URL; mediaType: string; filename?: string; providerOptions?: any }> }
  | {
      role: 'assistant';
      content: Array<
        | { type: 'text' | 'reasoning'; text: string; providerOptions?: any }
        | { type: 'file'; data: string | URL; mediaType: string; filename?: string; providerOptions?: any }
        | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown; providerOptions?: any }
      >;
    }
  | {
      role: 'tool';
      content: Array<{ type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'text' | 'error-text'; value: string } | { type: 'content'; value: any[] }; providerOptions?: any }>;
    }
) & { providerOptions?: any };

type Options = { providerOptions?: ProviderOptions };
type AssistantPart = Extract<AiSdkPromptMessage, { role: 'assistant' }>['content'][number];
type FileData = Extract<AssistantPart, { type: 'file' }>;
type TextOrReasoning = Extract<AssistantPart, { type: 'text' | 'reasoning' }>;
type ToolResult = Extract<AiSdkPromptMessage, { role: 'tool' }>['content'][number];
type ToolOutputPart =
  | ({ type: 'text'; text: string } & Options)
  | { type: 'media'; data: string; mediaType: string }
  | ({ type: 'image-data'; data: string; mediaType: string } & Options)
  | ({ type: 'image-url'; url: string } & Options)
  | ({ type: 'file-data'; data: string; mediaType: string; filename?: string } & Options)
  | ({ type: 'file-url'; url: string; mediaType?: string } & Options);

/**
 * The call options koagent passes to an AI SDK model's `doGenerate` / `doStream`.
 *
 * @example const model: AiSdkLanguageModel = { specificationVersion: 'v3', provider: 'x', modelId: 'y', doGenerate: async (options: AiSdkCallOptions) => callMyServer(options.prompt), doStream: async () => { throw new Error('no streaming'); } };
 *
 * @inline
 */
export interface AiSdkCallOptions {
  prompt: AiSdkPromptMessage[];
  // `any`: each spec version types these with its own JSONSchema7 / provider-options types, and a
  // model's doGenerate must accept ours whichever version it was built against.
  tools?: Array<{ type: 'function'; name: string; description?: string; inputSchema: any }>;
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  responseFormat?: { type: 'text' } | { type: 'json'; schema?: any; name?: string; description?: string };
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

/** What the prompt mapping needs to know of the model. */
export interface PromptTarget {
  /** `ai-sdk:<provider>`, for errors. */
  name: string;
  version: 'v2' | 'v3';
  /** The model's `supportedUrls`, resolved: URL patterns by media type that it fetches itself. */
  supportedUrls: Record<string, RegExp[]>;
}

/** A koagent request as AI SDK call options. */
export function callOptions(request: GenerateOptions, target: PromptTarget): AiSdkCallOptions {
  const options: AiSdkCallOptions = { prompt: aiSdkPrompt(request.messages, target) };
  if (request.tools?.length) options.tools = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.parameters }));
  const choice = request.toolChoice;
  if (choice === 'auto' || choice === 'none' || choice === 'required') options.toolChoice = { type: choice };
  else if (typeof choice === 'object' && choice !== null && typeof (choice as { name?: unknown }).name === 'string') options.toolChoice = { type: 'tool', toolName: (choice as { name: string }).name };
  if (request.responseFormat !== undefined) options.responseFormat = responseFormat(request.responseFormat);
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

/** The same shape in the AI SDK: passed as it is, once checked. */
function responseFormat(format: unknown): NonNullable<AiSdkCallOptions['responseFormat']> {
  const f = format as { type?: unknown; schema?: unknown } | null;
  const schemaOk = f?.schema === undefined || (typeof f.schema === 'object' && f.schema !== null && !Array.isArray(f.schema));
  if (typeof f !== 'object' || f === null || !(f.type === 'text' || (f.type === 'json' && schemaOk))) {
    throw new TypeError(`request.responseFormat must be { type: 'text' } or { type: 'json', schema?, name?, description? } (got ${JSON.stringify(format)})`);
  }
  return f as NonNullable<AiSdkCallOptions['responseFormat']>;
}

/**
 * koagent's transcript in the AI SDK's prompt format, part for part; each run of tool messages
 * becomes one `tool` message of `tool-result` parts, as the AI SDK itself groups them.
 */
function aiSdkPrompt(messages: readonly Message[], target: PromptTarget): AiSdkPromptMessage[] {
  const prompt: AiSdkPromptMessage[] = [];
  messages.forEach((m, i) => {
    const path = `messages[${i}].content`;
    // A message's own provider options (a cache breakpoint) go on the message; a tool message's
    // on its result part, as tool messages in a row become one AI SDK message.
    if (m.role === 'system') prompt.push(withOptions({ role: 'system', content: m.content }, m.providerOptions));
    else if (m.role === 'user') prompt.push(withOptions({ role: 'user', content: typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : parts(m.content, path, target, 'user') as Extract<AiSdkPromptMessage, { role: 'user' }>['content'] }, m.providerOptions));
    else if (m.role === 'assistant') {
      const content: Extract<AiSdkPromptMessage, { role: 'assistant' }>['content'] = typeof m.content === 'string' ? (m.content === '' ? [] : [{ type: 'text', text: m.content }]) : parts(m.content, path, target, 'assistant');
      for (const call of m.toolCalls ?? []) content.push(toolCall(call));
      prompt.push(withOptions({ role: 'assistant', content }, m.providerOptions));
    } else {
      const result = withOptions(toolResult(m, path, target), m.providerOptions);
      const last = prompt[prompt.length - 1];
      if (last?.role === 'tool') last.content.push(result);
      else prompt.push({ role: 'tool', content: [result] });
    }
  });
  return prompt;
}

function parts(content: readonly ContentPart[], path: string, target: PromptTarget, role: 'user' | 'assistant'): Array<TextOrReasoning | FileData> {
  return content.map((part, j) => {
    if (part.type === 'reasoning' && role === 'user') throw unsendable(target.name, `${path}[${j}]`, 'a reasoning part in a user message', 'only assistant messages hold reasoning');
    if (part.type === 'text' || part.type === 'reasoning') return withOptions({ type: part.type, text: part.text }, part.providerOptions);
    return filePart(part, `${path}[${j}]`, target);
  });
}

function toolCall(call: AssistantToolCall): Extract<AiSdkPromptMessage, { role: 'assistant' }>['content'][number] {
  const input = typeof call.args === 'string' ? parseArguments(call.args) : call.args;
  return withOptions({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input }, call.providerOptions);
}

/** An image or a file as a `file` part: base64 data, or a URL the model fetches itself. */
function filePart(part: ImagePart | FilePart, path: string, target: PromptTarget): FileData {
  const { data, mediaType } = media(part, path, target);
  const file: FileData = { type: 'file', data, mediaType };
  if (part.type === 'file' && part.filename !== undefined) file.filename = part.filename;
  return withOptions(file, part.providerOptions);
}

/** The data (base64, or a `URL`) and media type of an image or file part. */
function media(part: ImagePart | FilePart, path: string, target: PromptTarget): { data: string | URL; mediaType: string } {
  const raw = part.type === 'image' ? part.image : part.data;
  const dataUrl = raw.startsWith('data:') ? parseDataUrl(raw) : undefined;
  if (dataUrl !== undefined) return { data: dataUrl.data, mediaType: part.mediaType ?? dataUrl.mediaType };
  if (isUrl(raw)) {
    // A URL of unknown type is "some image" to the spec (a wildcard the provider resolves).
    const mediaType = part.mediaType ?? 'image/*';
    if (!urlSupported(raw, mediaType, target.supportedUrls)) {
      throw unsendable(target.name, path, `${noun(part)} given by URL (${shortUrl(raw)}, ${mediaType})`,
        'the model does not fetch such URLs itself (see its supportedUrls), and koagent does not download them',
        "pass the bytes as base64 with their mediaType (Buffer.from(bytes).toString('base64'))");
    }
    return { data: new URL(raw), mediaType };
  }
  return { data: raw, mediaType: part.mediaType ?? imageType(raw, path, target) };
}

function imageType(data: string, path: string, target: PromptTarget): string {
  const sniffed = sniffMediaType(data);
  if (sniffed !== undefined) return sniffed;
  throw unsendable(target.name, path, 'an image given as base64 without a mediaType', 'its bytes are not PNG, JPEG, GIF or WebP, so its type cannot be told',
    "set mediaType, e.g. { type: 'image', image, mediaType: 'image/png' }");
}

/** The AI SDK's rule: a pattern `*` or `*\/*` covers every type, `image/*` every image type; the URL is matched lower-cased. */
function urlSupported(url: string, mediaType: string, supported: Record<string, RegExp[]>): boolean {
  const type = mediaType.toLowerCase();
  const lower = url.toLowerCase();
  return Object.entries(supported).some(([pattern, regexes]) => {
    const p = pattern.toLowerCase();
    const covers = p === '*' || p === '*/*' || p === type || (p.endsWith('/*') && type.startsWith(p.slice(0, -1)));
    return covers && regexes.some((regex) => regex.test(lower));
  });
}

function toolResult(m: ToolMessage, path: string, target: PromptTarget): ToolResult {
  const base = { type: 'tool-result' as const, toolCallId: m.toolCallId, toolName: m.name };
  if (typeof m.content === 'string') return { ...base, output: { type: m.metadata?.error !== undefined ? 'error-text' : 'text', value: m.content } };
  return { ...base, output: { type: 'content', value: m.content.map((part, j) => toolOutputPart(part, `${path}[${j}]`, target)) } };
}

/** A part of a tool result: V3 names images and files apart (data or URL); V2 knows only base64 `media`. */
function toolOutputPart(part: ContentPart, path: string, target: PromptTarget): ToolOutputPart {
  if (part.type === 'text') return target.version === 'v2' ? { type: 'text', text: part.text } : withOptions({ type: 'text', text: part.text }, part.providerOptions);
  if (part.type !== 'image' && part.type !== 'file') throw unsendable(target.name, path, `a ${part.type} part in a tool result`, 'a tool result holds text, images and files');
  const raw = part.type === 'image' ? part.image : part.data;
  const dataUrl = raw.startsWith('data:') ? parseDataUrl(raw) : undefined;
  const url = dataUrl === undefined && isUrl(raw);
  if (target.version === 'v2') {
    if (url) throw unsendable(target.name, path, `${noun(part)} given by URL in a tool result`, 'a v2 (AI SDK 5) tool result holds media as base64 data only', 'return the bytes as base64 with their mediaType');
    return { type: 'media', data: dataUrl?.data ?? raw, mediaType: part.mediaType ?? dataUrl?.mediaType ?? imageType(raw, path, target) };
  }
  if (part.type === 'image') {
    if (url) return withOptions({ type: 'image-url', url: raw }, part.providerOptions);
    return withOptions({ type: 'image-data', data: dataUrl?.data ?? raw, mediaType: part.mediaType ?? dataUrl?.mediaType ?? imageType(raw, path, target) }, part.providerOptions);
  }
  if (url) return withOptions({ type: 'file-url', url: raw, mediaType: part.mediaType }, part.providerOptions);
  const file: ToolOutputPart = { type: 'file-data', data: dataUrl?.data ?? raw, mediaType: part.mediaType };
  if (part.filename !== undefined) file.filename = part.filename;
  return withOptions(file, part.providerOptions);
}

function withOptions<T extends object>(value: T, options: ProviderOptions | undefined): T & Options {
  return options === undefined ? value : Object.assign(value, { providerOptions: options });
}

const noun = (part: ImagePart | FilePart) => (part.type === 'image' ? 'an image' : 'a file');
