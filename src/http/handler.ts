// The agent as a web-standard handler, `(request: Request) => Promise<Response>`, built on Hono:
// its router, its CORS and CSRF middleware and its body limit, then who asks (`authorize`, on
// every route), then the routes. Mount it anywhere a fetch handler goes: Node's http (through
// @hono/node-server), Hono itself, Next.js route handlers, Bun, Deno.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { describe } from '../core/vocabulary/errors.js';
import { chatRoutes } from './chat-routes.js';
import { Refusals } from './decisions.js';
import { HttpError, identify } from './identity.js';
import { checkHandlerOptions, type HandlerOptions } from './options.js';
import { runRoutes, type HttpEnv } from './run-routes.js';
import { LocalRunner, QueueRunner } from './runners.js';
import type { Parts } from './views.js';

/**
 * A fetch handler serving agents over HTTP (`createHandler`). `close()` lets go of what it holds
 * and waits for the segments it runs itself to end (they are not stopped: only a cancel does).
 *
 * @example const handler = createHandler({ agents: [teller], store, authorize }); serve({ fetch: handler, port: 3000 });
 */
export interface KoagentHandler {
  (request: Request): Promise<Response>;
  /** Let go of what the handler holds, and wait for the segments it runs itself to end. */
  close(): Promise<void>;
}

/** The routes, for the answer to a path that is none of them. */
const ROUTES = [
  'POST /runs',
  'POST /sessions/:sessionId/messages',
  'GET /sessions/:sessionId',
  'GET /runs/:runId',
  'GET /runs/:runId/events',
  'POST /runs/:runId/decisions',
  'POST /runs/:runId/cancel',
  'POST /chat',
  'GET /chat/:chatId/stream',
];

/**
 * Serve agents over HTTP: start runs, send to sessions, read runs, follow their events as
 * Server-Sent Events (resumed with `Last-Event-ID` or `?from=`), answer approvals bound to what
 * the human saw, cancel runs wherever they run — and the AI SDK's UI message stream protocol
 * (`useChat`) at `/chat`. Every request goes through `authorize`; runs and sessions are the
 * tenant's it names. See docs/http.md.
 *
 * @example
 * ```ts
 * import { serve } from '@hono/node-server';
 * import { createHandler } from 'koagent/http';
 * const handler = createHandler({ agents: [teller], store: sqliteStore({ path: 'runs.db' }), authorize: (request) => users.fromToken(request) });
 * serve({ fetch: handler, port: 3000 });
 * ```
 */
export function createHandler(options: HandlerOptions): KoagentHandler {
  const checked = checkHandlerOptions(options);
  const { store, client, origins } = checked;
  const flags = store.keyValues!;
  const runner = client === undefined ? new LocalRunner(store, flags, checked.cancelPollMs, checked.logger) : new QueueRunner(client);
  const { context } = checked;
  const parts: Parts = {
    store,
    agents: checked.agents,
    ...(client !== undefined ? { client } : {}),
    runner,
    refusals: new Refusals(flags),
    heartbeatMs: checked.heartbeatMs,
    context: (identity, request) => context?.({ actor: identity.actor, tenant: identity.tenant }, request),
  };

  const root = new Hono<HttpEnv>();
  const app = checked.basePath === '' ? root : root.basePath(checked.basePath);
  app.onError((error, c) => {
    if (error instanceof HttpError) return error.response ?? c.json({ error: error.message, ...error.body }, error.status as 400);
    // Hono's own middleware refuse with theirs (the CSRF check: a form of another site).
    if (error instanceof HTTPException) return c.json({ error: error.status === 403 ? 'a form of another site cannot change anything here (CSRF check)' : error.message }, error.status);
    checked.logger.warn(`koagent http: ${c.req.method} ${c.req.path} failed: ${describe(error)}`);
    return c.json({ error: describe(error) }, 500);
  });
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}; the routes are ${ROUTES.join(', ')}${checked.basePath === '' ? '' : `, under ${checked.basePath}`}` }, 404));
  if (origins.length > 0) {
    app.use('*', cors({ origin: origins, credentials: true, allowHeaders: ['authorization', 'content-type', 'last-event-id', 'x-requested-with'], allowMethods: ['GET', 'POST', 'OPTIONS'], maxAge: 600 }));
  }
  // A page of another site may not change anything: a form's request is refused by its Origin…
  app.use('*', csrf({ origin: (origin, c) => origin === new URL(c.req.url).origin || origins.includes(origin) }));
  app.use('*', async (c, next) => {
    if (c.req.method === 'POST') {
      // …and whatever sends it, a request that changes something is JSON, which no form can send.
      const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
      if (type !== 'application/json') throw new HttpError(415, `send the body as JSON (content-type: application/json), not ${type ?? 'without a content type'}`);
      const origin = c.req.header('origin');
      if (origin !== undefined && origin !== new URL(c.req.url).origin && !origins.includes(origin)) {
        throw new HttpError(403, `a page of ${origin} cannot change anything here; give its origin to createHandler({ origins }) to let it`);
      }
    }
    await next();
  });
  app.use('*', bodyLimit({ maxSize: checked.maxBodyBytes, onError: (c) => c.json({ error: `the body is larger than ${checked.maxBodyBytes} bytes (createHandler({ maxBodyBytes }))` }, 413) }));
  app.use('*', async (c, next) => {
    c.set('identity', await identify(checked.authorize, c.req.raw));
    await next();
  });
  runRoutes(app, parts);
  chatRoutes(app, parts);

  const handler = (async (request: Request) => root.fetch(request)) as KoagentHandler;
  handler.close = () => runner.close();
  return handler;
}
