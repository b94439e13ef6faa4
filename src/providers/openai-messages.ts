// koagent's transcript as Chat Completions messages: text, images and files as content parts,
// reasoning only when the provider is told to send it, and the images and files of tool results
// in a user message after the tool messages (a tool message holds text only on this wire).
import { isUrl, parseDataUrl, sniffMediaType, type ContentPart, type FilePart, type ImagePart, type ProviderOptions } from '../core/vocabulary/content.js';
import type { AssistantToolCall, Message, ToolMessage } from '../core/vocabulary/messages.js';
import { shortUrl, unsendable } from './parts.js';

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A part of a user message's content array. */
export type WireUserPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'file'; file: { file_data: string; filename: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' } };

export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | WireUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[]; reasoning_content?: string; reasoning?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Which assistant field carries reasoning back to the server, if any. */
export type ReasoningField = 'reasoning_content' | 'reasoning';

export interface MessageSettings {
  /** The provider's name, for errors. */
  provider: string;
  /** Send reasoning parts back in this field; left out when undefined. */
  reasoningField?: ReasoningField;
}

/** koagent messages to Chat Completions messages; a part the wire cannot carry is a `TypeError` naming it. */
export function wireMessages(messages: readonly Message[], settings: MessageSettings = { provider: 'openai' }): WireMessage[] {
  const out: WireMessage[] = [];
  // Images and files of a run of tool messages wait for its end: the server wants every tool
  // message straight after the assistant turn that called the tools.
  let attachments: WireUserPart[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== 'tool' && attachments.length > 0) {
      out.push({ role: 'user', content: attachments });
      attachments = [];
    }
    switch (m.role) {
      case 'system':
        out.push({ role: 'system', content: m.content });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(m.content, `messages[${i}].content`, settings) });
        break;
      case 'assistant':
        out.push(assistantMessage(m.content, m.toolCalls, i, settings));
        break;
      case 'tool': {
        const { text, media } = toolContent(m, i, settings);
        out.push({ role: 'tool', tool_call_id: m.toolCallId, content: text });
        if (media.length > 0) attachments.push({ type: 'text', text: `Attachments of the result of ${m.name} (tool call ${m.toolCallId}):` }, ...media);
        break;
      }
      default:
        throw new TypeError(`messages[${i}] has role ${JSON.stringify((m as { role: unknown }).role)}; expected system, user, assistant or tool`);
    }
  }
  if (attachments.length > 0) out.push({ role: 'user', content: attachments });
  return out;
}

/** A string when every part is text (what every server accepts), else a content array. */
function userContent(content: string | readonly ContentPart[], path: string, settings: MessageSettings): string | WireUserPart[] {
  if (typeof content === 'string') return content;
  if (content.every((p) => p.type === 'text')) return content.map((p) => (p as { text: string }).text).join('');
  return content.map((part, j): WireUserPart => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image' || part.type === 'file') return mediaPart(part, `${path}[${j}]`, settings);
    throw unsendable(settings.provider, `${path}[${j}]`, `a ${part.type} part`, 'a user message holds text, images and files');
  });
}

function assistantMessage(content: string | readonly ContentPart[], calls: AssistantToolCall[] | undefined, i: number, settings: MessageSettings): WireMessage {
  let text = '';
  let reasoning: string | undefined;
  if (typeof content === 'string') text = content;
  else {
    content.forEach((part, j) => {
      if (part.type === 'text') text += part.text;
      // Left out unless asked for: most servers reject reasoning in a request, or ignore it.
      else if (part.type === 'reasoning') {
        if (settings.reasoningField !== undefined) reasoning = (reasoning ?? '') + part.text;
      } else {
        throw unsendable(settings.provider, `messages[${i}].content[${j}]`, `a ${part.type} part${'mediaType' in part ? ` (${part.mediaType})` : ''} in an assistant message`,
          'an assistant turn holds text and tool calls on the Chat Completions wire', 'remove the part from the transcript (a model middleware can), or use a provider that takes it back');
      }
    });
  }
  const message: Extract<WireMessage, { role: 'assistant' }> = { role: 'assistant', content: text };
  if (calls !== undefined && calls.length > 0) {
    // With tool calls, "no text" is null on the wire, as OpenAI itself sends it.
    message.content = text === '' ? null : text;
    message.tool_calls = calls.map(wireToolCall);
  }
  if (reasoning !== undefined && settings.reasoningField !== undefined) message[settings.reasoningField] = reasoning;
  return message;
}

function toolContent(m: ToolMessage, i: number, settings: MessageSettings): { text: string; media: WireUserPart[] } {
  if (typeof m.content === 'string') return { text: m.content, media: [] };
  let text = '';
  const media: WireUserPart[] = [];
  m.content.forEach((part, j) => {
    if (part.type === 'text') text += part.text;
    else media.push(mediaPart(part, `messages[${i}].content[${j}]`, settings));
  });
  if (text === '' && media.length > 0) text = `(the result is ${media.length === 1 ? 'an attachment' : `${media.length} attachments`}, sent in the next user message)`;
  return { text, media };
}

function wireToolCall(call: AssistantToolCall): WireToolCall {
  // Raw text the model wrote (even invalid JSON) goes back verbatim, so the model sees its own call.
  const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {});
  return { id: call.id, type: 'function', function: { name: call.name, arguments: args } };
}

const AUDIO_FORMATS: Record<string, 'wav' | 'mp3'> = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3' };

/** An image or a file as a content part: `image_url` (images), `input_audio` (wav, mp3), `file` (anything else). */
function mediaPart(part: ImagePart | FilePart, path: string, settings: MessageSettings): WireUserPart {
  const data = part.type === 'image' ? part.image : part.data;
  const mediaType = part.mediaType;
  if (part.type === 'image' || mediaType?.startsWith('image/')) return imagePart(data, mediaType, part.providerOptions, path, settings);
  const file = part as FilePart;
  const dataUrl = data.startsWith('data:') ? parseDataUrl(data) : undefined;
  if (dataUrl === undefined && isUrl(data)) {
    throw unsendable(settings.provider, path, `a file given by URL (${shortUrl(data)})`, 'Chat Completions takes files as data only',
      "fetch the file and pass its bytes as base64 in `data` (Buffer.from(bytes).toString('base64'))");
  }
  const base64 = dataUrl?.data ?? data;
  const format = AUDIO_FORMATS[file.mediaType];
  if (format !== undefined) return { type: 'input_audio', input_audio: { data: base64, format } };
  return { type: 'file', file: { filename: file.filename ?? defaultFilename(file.mediaType), file_data: `data:${file.mediaType};base64,${base64}` } };
}

function imagePart(data: string, mediaType: string | undefined, options: ProviderOptions | undefined, path: string, settings: MessageSettings): WireUserPart {
  let url: string;
  if (data.startsWith('data:') || /^https?:\/\//i.test(data)) url = data;
  else if (isUrl(data)) {
    throw unsendable(settings.provider, path, `an image given by a ${data.slice(0, data.indexOf(':') + 1)} URL`, 'the server can fetch only http(s) URLs',
      'pass an https: URL, or the bytes as base64 with their mediaType');
  } else {
    const type = mediaType ?? sniffMediaType(data);
    if (type === undefined) {
      throw unsendable(settings.provider, path, 'an image given as base64 without a mediaType', 'its bytes are not PNG, JPEG, GIF or WebP, so its type cannot be told',
        "set mediaType, e.g. { type: 'image', image, mediaType: 'image/png' }");
    }
    url = `data:${type};base64,${data}`;
  }
  // The AI SDK's convention for OpenAI's image detail level.
  const detail = options?.openai?.imageDetail;
  return { type: 'image_url', image_url: typeof detail === 'string' ? { url, detail } : { url } };
}

/** OpenAI refuses a file part without a filename. */
function defaultFilename(mediaType: string): string {
  const subtype = mediaType.split('/')[1]?.split(/[;+]/)[0];
  return subtype !== undefined && /^[a-z0-9.-]+$/i.test(subtype) ? `file.${subtype}` : 'file';
}
