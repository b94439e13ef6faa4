// How long a server asks a client to wait before it tries again (`Retry-After`), read from a response's headers.

/** Something with a `get(name)` for headers: a fetch `Headers`, or a plain lower-case record. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | undefined>;

/**
 * How long the server asked us to wait, from `retry-after-ms` (OpenAI's, in milliseconds) or
 * `Retry-After` (seconds, or an HTTP date). Undefined when neither is there or readable.
 */
export function retryAfterMs(headers: HeaderSource | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const get = (name: string): string | undefined => {
    if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
    const record = headers as Record<string, string | undefined>;
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    return key === undefined ? undefined : record[key];
  };
  const ms = Number(get('retry-after-ms'));
  if (get('retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const value = get('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
