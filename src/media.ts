/**
 * Helpers for a layer or a provider that handles images and files itself.
 *
 * @example
 * ```ts
 * import { mediaSource, sniffMediaType } from 'koagent/media';
 * ```
 *
 * @packageDocumentation
 * @module koagent/media
 */
// The `koagent/media` entry: helpers for code that handles images and files itself — a
// middleware that stores or rewrites them, a provider that puts them on the wire. They are the
// pieces koagent's own providers and its media store middleware are written with.
/** @category Messages */
export { isUrl, MEDIA_TOKENS, mediaSource, parseDataUrl, sniffMediaType } from './api.js';
/** @category Messages */
export { MEDIA_REF } from './middleware/media-store-middleware.js';
