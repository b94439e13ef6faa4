// The `koagent/media` entry: helpers for code that handles images and files itself — a
// middleware that stores or rewrites them, a provider that puts them on the wire. They are the
// pieces koagent's own providers and its media store middleware are written with.
export { isUrl, MEDIA_TOKENS, mediaSource, parseDataUrl, sniffMediaType } from './api.js';
export { MEDIA_REF } from './middleware/media-store-middleware.js';
