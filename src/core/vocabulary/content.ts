// Content parts: what a message holds besides plain text. The shapes are the AI SDK's message
// parts (the convention TypeScript users already know), restricted to what stays plain JSON:
// binary data is a base64 string, never bytes, so a transcript can be stored and resumed as is.

/**
 * Provider-specific data on a part or a tool call, keyed by provider, kept exactly as the
 * provider gave it and sent back to it on the next call — e.g. Anthropic's thinking signature
 * (`{ anthropic: { signature } }`), OpenAI's reasoning item id, Gemini's thought signature.
 * The AI SDK calls it `providerOptions` on prompt parts; so does koagent.
 *
 * @example const part: ReasoningPart = { type: 'reasoning', text: '…', providerOptions: { anthropic: { signature: 'EqQB…' } } };
 */
export type ProviderOptions = Record<string, Record<string, unknown>>;

/**
 * Text.
 *
 * @example const part: TextPart = { type: 'text', text: 'What is in this picture?' };
 */
export interface TextPart {
  type: 'text';
  text: string;
  providerOptions?: ProviderOptions;
}

/**
 * An image: an `https:` (or `http:`) URL, a `data:` URL, or base64 data with its `mediaType`
 * (`image/png`, `image/jpeg` …). A URL the model's server cannot fetch should be sent as data.
 *
 * @example const part: ImagePart = { type: 'image', image: readFileSync('chart.png').toString('base64'), mediaType: 'image/png' };
 */
export interface ImagePart {
  type: 'image';
  image: string;
  mediaType?: string;
  providerOptions?: ProviderOptions;
}

/**
 * A file (a PDF, audio, an image the model produced): base64 data or a URL, its media type, and
 * an optional file name.
 *
 * @example const part: FilePart = { type: 'file', data: pdf.toString('base64'), mediaType: 'application/pdf', filename: 'invoice.pdf' };
 */
export interface FilePart {
  type: 'file';
  data: string;
  mediaType: string;
  filename?: string;
  providerOptions?: ProviderOptions;
}

/**
 * The model's reasoning (assistant messages only). Providers that check it when it comes back
 * (Anthropic's signed thinking, OpenAI's encrypted reasoning items) put what they need in
 * `providerOptions`; koagent keeps it and sends it back unchanged. `text` may be empty
 * (redacted reasoning).
 *
 * @example const thoughts = message.content.filter((p): p is ReasoningPart => typeof p !== 'string' && p.type === 'reasoning');
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: ProviderOptions;
}

/**
 * Any content part.
 *
 * @example const parts: ContentPart[] = [{ type: 'text', text: 'Describe it' }, { type: 'image', image: 'https://example.com/cat.png' }];
 */
export type ContentPart = TextPart | ImagePart | FilePart | ReasoningPart;

/**
 * What a user message may hold: text, images and files.
 *
 * @example const content: UserContentPart[] = [{ type: 'text', text: 'Summarise' }, { type: 'file', data: pdf, mediaType: 'application/pdf' }];
 *
 * @inline
 */
export type UserContentPart = TextPart | ImagePart | FilePart;

/**
 * What an assistant message may hold: text, reasoning and files (an image the model made).
 *
 * @example const reply: AssistantContentPart[] = [{ type: 'reasoning', text: 'The user wants…' }, { type: 'text', text: 'Done.' }];
 */
export type AssistantContentPart = TextPart | ReasoningPart | FilePart;

/**
 * What a tool result may hold for the model: text, images and files (a screenshot, a chart).
 *
 * @example toModelOutput: (shot) => [{ type: 'text', text: shot.title }, { type: 'image', image: shot.png, mediaType: 'image/png' }]
 */
export type ToolContentPart = TextPart | ImagePart | FilePart;

/**
 * The text of a message's content: the string itself, or its text parts joined (reasoning,
 * images and files left out).
 *
 * @example const answer = textOf(result.messages.at(-1)!.content);
 */
export function textOf(content: string | readonly ContentPart[]): string {
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}

/**
 * The same content with `fn` applied to its text: to the string, or to each text part (the
 * other parts kept as they are). What a redaction layer uses, so it redacts text parts too.
 *
 * @example const masked = mapText(reply.message.content, (text) => text.replace(CARD, '[card]'));
 */
export function mapText<C extends string | readonly ContentPart[]>(content: C, fn: (text: string) => string): C {
  if (typeof content === 'string') return fn(content) as C;
  return content.map((part) => (part.type === 'text' ? { ...part, text: fn(part.text) } : part)) as unknown as C;
}

/** Which part types each role's content may hold. */
export const PART_TYPES = {
  user: ['text', 'image', 'file'],
  assistant: ['text', 'reasoning', 'file'],
  tool: ['text', 'image', 'file'],
} as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What is wrong with `content` as the content of a `role` message, naming it by `path`;
 * undefined when it is fine. A string always is; parts must be of the role's types, with their
 * data as strings (base64 or a URL: bytes would not survive JSON), and an image or a file whose
 * bytes are of a known type (PNG, JPEG, GIF, WebP, PDF) must not be labelled another — by its
 * `mediaType` or its `data:` URL — unless `labels` is false (resume: a state stored before this
 * check was made stays resumable).
 */
export function contentProblem(content: unknown, role: 'system' | 'user' | 'assistant' | 'tool', path: string, labels = true): string | undefined {
  if (typeof content === 'string') return undefined;
  if (role === 'system') return `${path} must be a string (system messages hold text only)`;
  if (!Array.isArray(content)) return `${path} must be a string or an array of content parts ({ type: 'text', text } …)`;
  const allowed: readonly string[] = PART_TYPES[role];
  for (let i = 0; i < content.length; i++) {
    const problem = partProblem(content[i], allowed, role, `${path}[${i}]`, labels);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function partProblem(part: unknown, allowed: readonly string[], role: string, path: string, labels: boolean): string | undefined {
  if (!isObject(part) || typeof part.type !== 'string') return `${path} is not a content part: expected { type: ${allowed.map((t) => `'${t}'`).join(' | ')}, … }`;
  if (!allowed.includes(part.type)) return `${path} is a ${JSON.stringify(part.type)} part, which a ${role} message cannot hold (it may hold ${allowed.join(', ')})`;
  if (part.providerOptions !== undefined && !isObject(part.providerOptions)) return `${path}.providerOptions must be an object keyed by provider`;
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return typeof part.text === 'string' ? undefined : `${path}.text must be a string`;
    case 'image':
      if (typeof part.image !== 'string') return `${path}.image must be a string: a URL or base64 data${bytesHint(part.image)}`;
      if (part.mediaType !== undefined && typeof part.mediaType !== 'string') return `${path}.mediaType must be a string such as 'image/png'`;
      return labels ? labelProblem(part.image, part.mediaType, 'image', path) : undefined;
    case 'file':
      if (typeof part.data !== 'string') return `${path}.data must be a string: a URL or base64 data${bytesHint(part.data)}`;
      if (typeof part.mediaType !== 'string' || part.mediaType === '') return `${path}.mediaType must be the file's media type, e.g. 'application/pdf'`;
      if (part.filename !== undefined && typeof part.filename !== 'string') return `${path}.filename must be a string`;
      return labels ? labelProblem(part.data, part.mediaType, 'data', path) : undefined;
    default:
      return undefined;
  }
}

function bytesHint(value: unknown): string {
  if (value instanceof Uint8Array) return " (got bytes: a transcript is JSON, so pass Buffer.from(bytes).toString('base64'))";
  if (value instanceof URL) return ' (got a URL object: pass url.href)';
  return '';
}

/**
 * Whether `data` (an image's `image`, a file's `data`) is a URL rather than base64 data (which has no `:`).
 *
 * @example if (isUrl(part.image)) console.log('the provider fetches', part.image);
 */
export function isUrl(data: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(data);
}

/**
 * The media type and base64 data of a `data:` URL, or undefined when it is not one.
 *
 * @example parseDataUrl('data:image/png;base64,iVBOR…') // { mediaType: 'image/png', data: 'iVBOR…' }
 */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(url);
  if (match === null || !(match[2] ?? '').includes('base64')) return undefined;
  return { mediaType: match[1] || 'application/octet-stream', data: match[3] };
}

/**
 * Where an image's or a file's bytes are: a URL to fetch, or base64 data with its media type
 * (the part's own, else a `data:` URL's, else read from the data's first bytes).
 *
 * @example const source = mediaSource(part); if ('url' in source) console.log('fetch', source.url); else console.log(source.mediaType);
 */
export function mediaSource(part: ImagePart | FilePart): { url: string; mediaType?: string } | { data: string; mediaType?: string } {
  const given = part.type === 'image' ? part.image : part.data;
  const dataUrl = given.startsWith('data:') ? parseDataUrl(given) : undefined;
  if (dataUrl !== undefined) return { data: dataUrl.data, mediaType: part.mediaType ?? dataUrl.mediaType };
  if (isUrl(given)) return part.mediaType === undefined ? { url: given } : { url: given, mediaType: part.mediaType };
  const mediaType = part.mediaType ?? sniffMediaType(given);
  return mediaType === undefined ? { data: given } : { data: given, mediaType };
}

const SIGNATURES: Array<[string, string]> = [
  ['iVBORw0KGgo', 'image/png'], ['/9j/', 'image/jpeg'], ['R0lGOD', 'image/gif'], ['JVBERi0', 'application/pdf'],
];

/**
 * The media type of base64 `data` read from its first bytes (PNG, JPEG, GIF, WebP, PDF), for an
 * image given without one; undefined when the bytes say nothing.
 *
 * @example const mediaType = part.mediaType ?? sniffMediaType(part.image) ?? 'image/png';
 */
export function sniffMediaType(data: string): string | undefined {
  return sniffAt(data, 0);
}

/** `sniffMediaType` of the base64 that starts at `at` (after a data URL's comma), with no copy of it. */
function sniffAt(data: string, at: number): string | undefined {
  for (const [prefix, type] of SIGNATURES) if (data.startsWith(prefix, at)) return type;
  // WebP is a RIFF file ("UklGR") whose bytes 8 to 11 are "WEBP" ("RUJQ" at 12 is "EBP"); WAV and AVI are RIFF too.
  if (data.startsWith('UklGR', at) && data.startsWith('RUJQ', at + 12)) return 'image/webp';
  return undefined;
}

/** Other names of the types `sniffMediaType` tells, as a label may give them. */
const SAME_TYPE: Record<string, string> = {
  'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'image/x-png': 'image/png', 'image/apng': 'image/png', 'application/x-pdf': 'application/pdf',
};

/**
 * What is wrong with the media type an image's or a file's data is labelled with (the part's
 * `mediaType`, its `data:` URL's type), when the data's first bytes say it is of another type:
 * a provider would send the label, and the model's API refuse the part or misread it. A label
 * that says nothing (`application/octet-stream`, `image/*`) and bytes of a type not told are fine.
 */
function labelProblem(data: string, mediaType: string | undefined, field: string, path: string): string | undefined {
  let start = 0;
  let urlType: string | undefined;
  if (data.startsWith('data:')) {
    const comma = data.indexOf(',');
    const header = comma === -1 ? '' : data.slice(5, comma);
    if (!header.includes(';base64')) return undefined;
    start = comma + 1;
    urlType = header.slice(0, header.indexOf(';'));
  } else if (isUrl(data)) return undefined;
  const bytes = sniffAt(data, start);
  if (bytes === undefined) return undefined;
  for (const [label, by] of [[mediaType, 'its mediaType'], [urlType, 'its data: URL']] as const) {
    if (label === undefined || fits(label, bytes)) continue;
    const fix = field === 'image' && !bytes.startsWith('image/') ? `; data of type ${bytes} belongs in a file part: { type: 'file', data, mediaType: '${bytes}' }` : `; label it '${bytes}'`;
    return `${path}.${field} is labelled ${label} (${by}), but its bytes are ${bytes}${fix}`;
  }
  return undefined;
}

function fits(label: string, bytes: string): boolean {
  const type = label.split(';')[0].trim().toLowerCase();
  if (type === '' || type === 'application/octet-stream' || type === '*/*') return true;
  if (type.endsWith('/*')) return bytes.startsWith(type.slice(0, -1));
  return (SAME_TYPE[type] ?? type) === bytes;
}

/**
 * What an image or a file counts for in `estimateTokens`: about what vision models charge for a mid-sized image.
 *
 * @example const budget = 20 * MEDIA_TOKENS; // room for about twenty screenshots
 */
export const MEDIA_TOKENS = 1000;

/**
 * A rough token count of a message's content, for budgets and compaction: text and reasoning at
 * four characters a token, each image or file as `MEDIA_TOKENS` (its base64 data is not text
 * the model reads).
 *
 * @example const tokens = messages.reduce((sum, m) => sum + estimateTokens(m.content), 0);
 */
export function estimateTokens(content: string | readonly ContentPart[]): number {
  if (typeof content === 'string') return Math.ceil(content.length / 4);
  let tokens = 0;
  for (const part of content) tokens += part.type === 'text' || part.type === 'reasoning' ? Math.ceil(part.text.length / 4) : MEDIA_TOKENS;
  return tokens;
}
