/**
 * Agents over HTTP: a web-standard fetch handler (`(request: Request) => Promise<Response>`) that
 * starts runs, sends to sessions, streams a run's events as Server-Sent Events that resume after
 * a reconnect, answers approvals bound to what the human saw, cancels runs wherever they run, and
 * speaks the AI SDK's UI message stream protocol (`useChat`). Needs `hono` 4, an optional peer
 * dependency. See docs/http.md.
 *
 * @example
 * ```ts
 * import { createHandler } from 'koagent/http';
 * ```
 *
 * @packageDocumentation
 * @module koagent/http
 */
// The `koagent/http` entry: the handler and its options. Hono is loaded by this entry alone.
/** @category HTTP */
export { createHandler, type KoagentHandler } from './http/handler.js';
/** @category HTTP */
export type { Authorize, HandlerOptions, HttpIdentity, HttpQueue } from './http/options.js';
/** @category HTTP */
export type { RefusedDecision, RefusalReason } from './http/decisions.js';
