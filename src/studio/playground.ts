// The playground's API: koagent/http's handler, mounted under /api/play, behind the studio's own
// guards. The studio server has already checked the Host, the token and (for a change) the
// Origin and the JSON body before a request reaches it; the handler checks the token again
// (its `authorize`) and adds its own CSRF and content-type checks. It is loaded on the first
// request, since it needs `hono` (an optional peer): a studio without it serves everything else.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { Agent } from '../agent/agent.js';
import { hasEventLog, type RunStore } from '../stores/run-store.js';
import type { KoagentHandler } from '../http/handler.js';
import type { HttpQueue } from '../http/options.js';
import { HttpError } from './guards.js';

/** Where the playground's routes are mounted in the studio. */
export const PLAY_BASE = '/api/play';

const BODY_LIMIT = 1_000_000;

/** The actor the playground's decisions are recorded with: whoever holds the studio's token. */
const ACTOR = { id: 'studio', name: 'studio playground' };

/**
 * The playground's handler, made on first use over the studio's store, agents and queue.
 *
 * @example const play = new Playground(store, agents, undefined, token); await play.serve(request, response, host);
 */
export class Playground {
  #handler: Promise<KoagentHandler> | undefined;

  constructor(private readonly store: RunStore, private readonly agents: readonly Agent<any, any>[], private readonly queue: unknown, private readonly token: string) {}

  /** Answer `request` (a path under PLAY_BASE) with the handler. */
  async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const handler = await this.#made();
    const url = `http://${request.headers.host ?? 'studio.invalid'}${request.url ?? '/'}`;
    const method = request.method ?? 'GET';
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      else if (value !== undefined) headers.set(name, value);
    }
    const body = method === 'GET' || method === 'HEAD' ? undefined : await read(request);
    const controller = new AbortController();
    response.on('close', () => controller.abort());
    const answer = await handler(new Request(url, { method, headers, ...(body !== undefined ? { body } : {}), signal: controller.signal }));
    const outgoing: Record<string, string> = { 'cache-control': 'no-store' };
    answer.headers.forEach((value, name) => (outgoing[name] = value));
    response.writeHead(answer.status, outgoing);
    if (answer.body === null) return void response.end();
    // Streamed as it comes (the run's events); a page that goes away stops the reading, never the run.
    const reader = answer.body.getReader();
    response.on('close', () => void reader.cancel().catch(() => undefined));
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        response.write(value);
      }
    } catch {
      // The page went away mid-stream.
    }
    response.end();
  }

  /** Let go of the handler, waiting for the runs it started here. */
  async close(): Promise<void> {
    const handler = await this.#handler?.catch(() => undefined);
    await handler?.close();
  }

  #made(): Promise<KoagentHandler> {
    this.#handler ??= this.#make().catch((error: unknown) => {
      this.#handler = undefined; // the next request tries again (hono installed meanwhile)
      throw error;
    });
    return this.#handler;
  }

  async #make(): Promise<KoagentHandler> {
    if (this.agents.length === 0) throw new HttpError(409, 'the playground talks to the studio\'s agents, and this studio has none: start it with --agents (or agents in startStudio)');
    if (!hasEventLog(this.store)) throw new HttpError(501, `the playground follows runs through the store's event log, and this ${this.store.kind} store keeps none: use memoryStore(), sqliteStore() or postgresStore()`);
    let createHandler: typeof import('../http/handler.js').createHandler;
    try {
      ({ createHandler } = await import('../http/handler.js'));
    } catch (error) {
      throw new HttpError(501, `the playground needs hono, an optional peer dependency of koagent (npm i hono): ${(error as Error)?.message ?? String(error)}`);
    }
    // With the workers' queue, runs go to the workers as the studio's answers do.
    const client = isHttpQueue(this.queue) ? this.queue : undefined;
    return createHandler({
      agents: [...this.agents],
      store: this.store,
      ...(client !== undefined ? { client } : {}),
      basePath: PLAY_BASE,
      authorize: (request) => (carriesToken(request, this.token) ? { actor: ACTOR, surface: 'studio' } : null),
    });
  }
}

/** Whether `queue` is the workers' client as the handler takes it (a `WorkerClient` is). */
function isHttpQueue(queue: unknown): queue is HttpQueue {
  const q = queue as Partial<Record<keyof HttpQueue, unknown>> | undefined;
  return typeof q === 'object' && q !== null && typeof q.start === 'function' && typeof q.status === 'function' && typeof q.answer === 'function' && typeof q.cancel === 'function';
}

/** The handler's own check of the studio's token: the header, or (a read) the query, as the studio's guard takes it. */
function carriesToken(request: Request, token: string): boolean {
  const url = new URL(request.url);
  const given = request.headers.get('x-koagent-token') ?? (request.method === 'GET' ? url.searchParams.get('token') : null) ?? '';
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function read(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) {
    text += chunk;
    if (text.length > BODY_LIMIT) throw new HttpError(413, 'the request body is over 1 MB');
  }
  return text;
}
