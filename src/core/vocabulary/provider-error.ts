import { KoagentError } from './errors.js';

/**
 * What went wrong between koagent and a model server: `http` (the server answered with an error
 * status), `network` (no answer, or the connection broke mid-reply), `malformed` (a success
 * status with a body that is not the protocol's shape), `stream` (the server reported an error
 * inside a reply it had started to stream).
 *
 * @example if (ProviderError.is(error) && error.kind === 'network') scheduleRetry();
 *
 * @inline
 */
export type ProviderErrorKind = 'http' | 'network' | 'malformed' | 'stream';

/**
 * The fields of a `ProviderError`; `message` is built from them.
 *
 * @example throw new ProviderError({ provider: 'acme', kind: 'http', status: 503, providerMessage: 'overloaded', retryable: true });
 *
 * @inline
 */
export interface ProviderErrorDetails {
  /** The provider's `name` (e.g. `openai`), and the model id when there is one. */
  provider: string;
  modelId?: string;
  kind: ProviderErrorKind;
  /** The HTTP status, when the server answered. */
  status?: number;
  /** The server's own error message, kept verbatim (e.g. OpenAI's `error.message`). */
  providerMessage: string;
  /** The server's error code or type, when it gave one (e.g. `rate_limit_exceeded`). */
  providerCode?: string;
  /** Whether the same request may succeed later: 408, 409, 429, 5xx and network failures. */
  retryable: boolean;
  /** How long the server asked us to wait (`Retry-After` / `retry-after-ms`), in milliseconds. */
  retryAfterMs?: number;
  /** What to do about it, when we know (e.g. which variable to set for a 401). */
  hint?: string;
  cause?: unknown;
}

/**
 * The one error a koagent model provider throws for a failed request. Its `code` is
 * `model_error`; a run it fails rejects with a `RunFailedError` whose `cause` is this error.
 * The built-in `retryMiddleware` retries exactly the errors whose `retryable` is true.
 *
 * @example if (ProviderError.is(err.cause) && err.cause.status === 429) console.log(err.cause.retryAfterMs);
 */
export class ProviderError extends KoagentError {
  readonly provider: string;
  readonly modelId?: string;
  readonly kind: ProviderErrorKind;
  readonly status?: number;
  readonly providerMessage: string;
  readonly providerCode?: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;

  constructor(details: ProviderErrorDetails) {
    super('model_error', describeFailure(details), 'cause' in details ? { cause: details.cause } : {});
    this.name = 'ProviderError';
    this.provider = details.provider;
    this.kind = details.kind;
    this.providerMessage = details.providerMessage;
    this.retryable = details.retryable;
    if (details.modelId !== undefined) this.modelId = details.modelId;
    if (details.status !== undefined) this.status = details.status;
    if (details.providerCode !== undefined) this.providerCode = details.providerCode;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    Object.defineProperty(this, PROVIDER_MARK, { value: true });
  }

  /** True for a `ProviderError` from any copy of koagent (a marker, not `instanceof`). */
  static override is(value: unknown): value is ProviderError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PROVIDER_MARK] === true;
  }
}

const PROVIDER_MARK = Symbol.for('koagent.provider-error');

function describeFailure(d: ProviderErrorDetails): string {
  const who = d.modelId === undefined ? d.provider : `${d.provider} (${d.modelId})`;
  const what = { http: `HTTP ${d.status}`, network: 'network failure', malformed: 'malformed response', stream: 'error event in the stream' }[d.kind];
  const retry = d.retryable ? `retryable${d.retryAfterMs !== undefined ? `, the server asks to wait ${d.retryAfterMs} ms` : ''}` : 'not retryable';
  return `${who}: ${what}: ${d.providerMessage} (${retry})${d.hint !== undefined ? `. ${d.hint}` : ''}`;
}

/** Statuses worth trying again: timeouts, conflicts, rate limits and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Statuses a retry policy tries again: timeouts, conflicts, rate limits and server errors (5xx only). */
const RETRYABLE_STATUS = (status: number) => status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);

/** Error codes of connections that broke or timed out on the way, in Node and undici. */
const NETWORK_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Whether the same request may succeed later (the default of `retryMiddleware`'s `shouldRetry`
 * and of `modelFallbackMiddleware`'s `shouldFallback`). An error says so by being a
 * `ProviderError` (or `TimeoutError`) with `retryable`, by `retryable: true` or the AI SDK's
 * `isRetryable: true`, by an HTTP `status` (or `statusCode`, or `response.status`) of 408, 409,
 * 429 or 5xx, or by a network error `code` (`ECONNRESET`, `ETIMEDOUT` …) — on itself or on its
 * `cause`. A plain `Error('503 Service Unavailable')` says none of this: give it a `status`.
 *
 *
 * @example retryMiddleware({ shouldRetry: (error) => isRetryableError(error) || isMyGatewayHiccup(error) })
 */
export function isRetryableError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    if (ProviderError.is(current)) return current.retryable;
    const e = current as { retryable?: unknown; isRetryable?: unknown; status?: unknown; statusCode?: unknown; response?: { status?: unknown }; code?: unknown; cause?: unknown };
    if (e.retryable === true || e.isRetryable === true) return true;
    if (e.retryable === false || e.isRetryable === false) return false;
    const status = [e.status, e.statusCode, e.response?.status].find((s) => typeof s === 'number');
    if (typeof status === 'number') return RETRYABLE_STATUS(status);
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
    current = e.cause;
  }
  return false;
}
