// What both providers say when a content part cannot go on their wire.

/** A URL short enough to quote in an error. */
export function shortUrl(url: string): string {
  return url.length > 60 ? `${url.slice(0, 57)}...` : url;
}

/**
 * The error for a part a provider cannot send: what, where, why, and what to do instead.
 *
 * @example throw unsendable('openai', 'messages[1].content[0]', 'a file given by URL', 'Chat Completions takes files as data only');
 */
export function unsendable(provider: string, path: string, what: string, why: string, fix?: string): TypeError {
  return new TypeError(`${provider} cannot send ${path}, ${what}: ${why}${fix === undefined ? '' : `; ${fix}`}`);
}
