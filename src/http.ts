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
// The `koagent/http` entry: the handler, its options and who asks. Hono is loaded by this entry
// alone. The rest (the handler's type, `authorize`'s, the workers' client by its shape, a refused
// decision) is read from these: `ReturnType<typeof createHandler>`, `HandlerOptions['authorize']`.
/** @category HTTP */
export { createHandler } from './http/handler.js';
/** @category HTTP */
export type { HandlerOptions, HttpIdentity } from './http/options.js';
