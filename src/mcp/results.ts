// What an MCP tool's result becomes in koagent: `structuredContent` is the result where the
// server gave one; otherwise the content blocks become content parts (text alone becomes text).
// `isError: true` is the tool's own failure, which the model reads as a `tool_error`.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mediaSource, sniffMediaType, ToolError, type ToolContentPart } from '../api.js';

type Block = CallToolResult['content'][number];

/** The koagent result of a successful call: the structured content, the text, or the parts. */
export function resultOf(result: CallToolResult, tool: string): unknown {
  if (result.isError === true) {
    const text = textOf(partsOf(result.content ?? []));
    throw new ToolError(text === '' ? `${tool} reported an error without saying what` : text);
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  const parts = partsOf(result.content ?? []);
  return parts.every((part) => part.type === 'text') ? textOf(parts) : parts;
}

/**
 * What the model reads of an MCP tool's result (what the layers settled on): parts as parts,
 * text as text, anything else as JSON.
 */
export function modelOutputOf(result: unknown): string | ToolContentPart[] {
  if (typeof result === 'string') return result;
  if (Array.isArray(result) && result.length > 0 && result.every(isPart)) return result;
  return JSON.stringify(result) ?? 'null';
}

function isPart(value: unknown): value is ToolContentPart {
  const type = (value as { type?: unknown } | null)?.type;
  return typeof value === 'object' && value !== null && (type === 'text' || type === 'image' || type === 'file');
}

function textOf(parts: ToolContentPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** MCP content blocks as koagent parts: binary data stays base64, as the transcript is JSON. */
export function partsOf(blocks: readonly Block[]): ToolContentPart[] {
  return blocks.map((block): ToolContentPart => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'image':
        return mediaPart(block.data, block.mimeType);
      case 'audio':
        return { type: 'file', data: block.data, mediaType: typeOf(block.data, block.mimeType) };
      case 'resource': {
        const { resource } = block;
        if ('text' in resource && typeof resource.text === 'string') return { type: 'text', text: resource.text };
        const blob = (resource as { blob: string }).blob;
        const mediaType = typeOf(blob, resource.mimeType ?? 'application/octet-stream');
        if (mediaType.startsWith('image/')) return { type: 'image', image: blob, mediaType };
        return { type: 'file', data: blob, mediaType, filename: fileName(resource.uri) };
      }
      case 'resource_link':
        return { type: 'text', text: `Resource link: ${block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? `: ${block.description}` : ''}` };
      default:
        // A block of a newer protocol version: the model still reads what it holds.
        return { type: 'text', text: JSON.stringify(block) };
    }
  });
}

/**
 * A server's data labelled with the type its first bytes say, where they say one: a server's
 * `mimeType` can be wrong, and koagent refuses content whose label lies (the model's API would).
 */
function typeOf(data: string, mimeType: string): string {
  return sniffMediaType(data) ?? mimeType;
}

/** An image block: an image part, or a file part when its bytes are no image (a PDF). */
function mediaPart(data: string, mimeType: string): ToolContentPart {
  const mediaType = typeOf(data, mimeType);
  return mediaType.startsWith('image/') ? { type: 'image', image: data, mediaType } : { type: 'file', data, mediaType };
}

function fileName(uri: string): string {
  const last = uri.split(/[/\\]/).filter(Boolean).at(-1) ?? uri;
  return last.replace(/^[a-z][a-z0-9+.-]*:/i, '') || uri;
}

/** What koagent's tool message content becomes for an MCP client: text, images, audio, files as embedded resources. */
export function mcpContentOf(content: string | readonly ToolContentPart[]): CallToolResult['content'] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part): Block => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    const source = mediaSource(part);
    const mimeType = source.mediaType ?? (part.type === 'image' ? 'image/png' : part.mediaType);
    // A part that points at a URL is a link to it; data travels as base64, as MCP carries it.
    if ('url' in source) return { type: 'resource_link', uri: source.url, name: part.type === 'file' ? part.filename ?? source.url : source.url, mimeType };
    const base64 = source.data;
    if (part.type === 'image') return { type: 'image', data: base64, mimeType };
    if (mimeType.startsWith('audio/')) return { type: 'audio', data: base64, mimeType };
    return { type: 'resource', resource: { uri: `koagent:file/${encodeURIComponent(part.filename ?? 'file')}`, mimeType, blob: base64 } };
  });
}
