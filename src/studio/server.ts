// The studio's server: the page's files, and a JSON API over one run store (runs, one run with
// its transcript, ledger and layer trace, the pending approvals and their answers, exports, and
// live updates). Node's own http: a dozen routes need no router. The API answers only requests
// that carry the token printed in the studio's URL, since answering an approval runs a tool; the
// guards against other sites' pages (Host, Origin, content type) are in ./guards.ts.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import type { Agent } from '../agent/agent.js';
import type { RunStatus } from '../api.js';
import { z } from 'zod';
import { optionsSchema, parseOptions } from '../core/vocabulary/options.js';
import { assertStore, type RunStore } from '../stores/run-store.js';
import { Approvals, type DecisionRequest, type StudioQueue } from './approvals.js';
import { studioAssets } from './assets.js';
import { RunCatalog } from './catalog.js';
import { acceptedHosts, changeRefused, decodedPath, hostRefused, HttpError, tokenRefused } from './guards.js';
import { LiveRuns } from './live.js';
import { Playground } from './playground.js';
import { LabWork, labRoute } from './lab.js';
import { traceToOtlp } from '../features/layer-trace/otlp.js';
import { traceOf } from '../features/layer-trace/record.js';

/**
 * Options of `startStudio`.
 *
 * @example await startStudio({ store: sqliteStore({ path: 'runs.db' }), agents: [teller] });
 *
 * @inline
 */
export interface StudioOptions {
  /** The run store the studio shows. */
  store: RunStore;
  /** Default 127.0.0.1: only this machine reaches it. */
  host?: string;
  /**
   * More host names the studio answers to (a name of this machine, a reverse proxy's), besides
   * those it listens on: a request naming any other host in its `Host` header is refused.
   */
  allowedHosts?: readonly string[];
  /** Default 0: a free port. */
  port?: number;
  /** The agents whose runs the studio may resume when a human answers an approval (by agent name). */
  agents?: readonly Agent<any, any>[];
  /**
   * Send approvals' answers to the workers' queue instead of resuming runs here: a worker runs
   * the next segment. A `WorkerClient` (`createClient` of `koagent/worker`) is one; `agents` then
   * only check edited arguments against the tool's schema.
   */
  queue?: StudioQueue;
  /** The API's token (default: 24 random bytes, base64url). */
  token?: string;
  /** How often live updates poll the store's list, in ms (default 500). */
  pollMs?: number;
  /** Serve the page from this folder instead of the package's own bundle. */
  assetsDir?: string;
}

/**
 * A running studio: its URL (with the token), the token, and `close`.
 *
 * @example const studio = await startStudio({ store }); console.log(studio.url); await studio.close();
 */
export interface Studio {
  /** Where the page is, its token in the query: `http://127.0.0.1:PORT/?token=…`. */
  readonly url: string;
  /** What every API request must carry (the `x-koagent-token` header; a GET may put it in the query, `?token=`). */
  readonly token: string;
  /** Stop serving: the event streams end, and the resumes, forks and replays the studio started are waited for. */
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json', '.ico': 'image/x-icon', '.woff2': 'font/woff2',
};
const STATUSES = new Set<RunStatus>(['running', 'completed', 'suspended', 'failed']);
const BODY_LIMIT = 1_000_000;

const STUDIO_OPTIONS = optionsSchema({
  store: z.unknown(),
  host: z.string().min(1).optional(),
  allowedHosts: z.array(z.string().min(1)).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  agents: z.array(z.unknown()).optional(),
  queue: z.unknown().optional(),
  token: z.unknown().optional(),
  pollMs: z.number().positive().optional(),
  assetsDir: z.string().optional(),
}, { noun: 'an option of startStudio', aliases: { allowedHost: 'allowedHosts', hosts: 'allowedHosts', agent: 'agents' } });

/** A misspelt option is refused, naming the one meant: a studio never starts with a guard quietly off. */
function checkStudioOptions(options: StudioOptions): void {
  assertStore(options?.store, 'startStudio: store');
  parseOptions(STUDIO_OPTIONS, options, 'startStudio');
}

/**
 * Serve the studio over `store`: the runs, each run as its transcript, ledger and onion, and the
 * pending approvals, which it answers by resuming runs with `agents`.
 *
 * @example const studio = await startStudio({ store: sqliteStore({ path: 'runs.db' }), agents: [teller] }); console.log(`Open ${studio.url}`);
 */
export async function startStudio(options: StudioOptions): Promise<Studio> {
  checkStudioOptions(options);
  const { store, host = '127.0.0.1', port = 0, agents = [], pollMs = 500 } = options;
  const token = options.token ?? randomBytes(24).toString('base64url');
  if (typeof token !== 'string' || token.length < 8) throw new TypeError('startStudio: token must be a string of 8 characters or more (leave it out for a random one)');
  const catalog = new RunCatalog(store);
  const live = new LiveRuns(store, catalog, pollMs);
  const approvals = new Approvals(store, agents, options.queue);
  const playground = new Playground(store, agents, options.queue, token);
  const lab = new LabWork();
  const assets = options.assetsDir === undefined ? studioAssets : () => Promise.resolve(options.assetsDir!);
  // The `host:port` names requests may carry, known once the server listens (and its port is).
  let hosts: ReadonlySet<string> = new Set();

  const api = async (request: IncomingMessage, response: ServerResponse, url: URL, parts: string[]): Promise<void> => {
    const method = request.method ?? 'GET';
    const [, resource, id, sub, callId] = parts; // ['api', 'runs', id, 'approvals', callId]
    if (method === 'GET' && resource === 'info' && parts.length === 2) return json(response, 200, { store: store.kind, agents: agents.map((agent) => agent.name), queue: options.queue !== undefined, pollMs });
    if (method === 'GET' && resource === 'events' && parts.length === 2) return live.add(response);
    if (method === 'GET' && resource === 'approvals' && parts.length === 2) return json(response, 200, await approvals.list());
    if (await labRoute({ store, catalog, agents, body: () => body(request), send: (status, value) => json(response, status, value), track: (work) => lab.track(work) }, method, parts.slice(1))) return;
    if (resource !== 'runs') throw new HttpError(404, `no API route ${method} ${url.pathname}`);
    if (method === 'GET' && id === undefined) {
      const status = (url.searchParams.get('status') ?? '').split(',').filter((s): s is RunStatus => STATUSES.has(s as RunStatus));
      const filter = { agent: url.searchParams.get('agent') ?? undefined, session: url.searchParams.get('session') ?? undefined, text: url.searchParams.get('text') ?? undefined, status };
      return json(response, 200, await catalog.rows(filter));
    }
    if (method === 'POST' && sub === 'approvals' && callId !== undefined && parts.length === 5) {
      const answer = await approvals.decide(id!, callId, (await body(request)) as DecisionRequest);
      return json(response, answer.status, answer.body);
    }
    if (method !== 'GET' || id === undefined || parts.length > 4) throw new HttpError(404, `no API route ${method} ${url.pathname}`);
    const state = await store.loadRun(id);
    if (state === undefined) throw new HttpError(404, `there is no run ${id} in the store`);
    const trace = traceOf(state) ?? null;
    if (sub === 'export') return download(response, `${id}.json`, state);
    if (sub === 'otlp') {
      if (trace === null) throw new HttpError(404, `run ${id} has no layer trace: run its agent with layerTrace: true`);
      return download(response, `${id}.otlp.json`, traceToOtlp(state));
    }
    if (sub !== undefined) throw new HttpError(404, `no API route ${method} ${url.pathname}`);
    const summaries = await store.listRuns({ agentName: state.agentName, sessionId: state.sessionId, limit: 500 });
    const summary = summaries.find((s) => s.runId === id);
    const row = summary === undefined ? undefined : (await catalog.entry(summary))?.row;
    const tools = new Map<string, string>();
    for (const message of state.messages) if (message.role === 'assistant') for (const call of message.toolCalls ?? []) tools.set(call.id, call.name);
    const ledger = state.ledger.map((call) => ({ ...call, toolName: tools.get(call.id), idempotencyKey: `${state.runId}:${call.id}` }));
    return json(response, 200, { row, state, trace, ledger });
  };

  const serveFile = async (response: ServerResponse, pathname: string): Promise<void> => {
    const dir = await assets();
    const relative = normalize(decodedPath(pathname === '/' ? '/index.html' : pathname)).replace(/^([/\\])+/, '');
    const file = join(dir, relative);
    if (!file.startsWith(dir.endsWith(sep) ? dir : dir + sep)) throw new HttpError(404, 'not found');
    let content: Buffer;
    try {
      content = await readFile(file);
    } catch {
      throw new HttpError(404, `not found: ${pathname}`);
    }
    const immutable = relative.startsWith(`assets${sep}`) || relative.startsWith('assets/');
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-store', 'x-content-type-options': 'nosniff' });
    response.end(content);
  };

  const server = createServer((request, response) => {
    // Everything a request carries is read inside the promise: what cannot be read is a 4xx, never a throw out of the server.
    const handle = async () => {
      const wrongHost = hostRefused(request, hosts);
      if (wrongHost) throw wrongHost;
      const url = new URL(request.url ?? '/', 'http://studio.invalid');
      const parts = url.pathname.split('/').filter(Boolean).map(decodedPath);
      if (parts[0] === 'api') {
        const refused = tokenRefused(request, url, token) ?? changeRefused(request, hosts);
        if (refused) throw refused;
        // The playground (start a run, follow it, answer it): koagent/http's routes, behind these guards.
        if (parts[1] === 'play') return playground.serve(request, response);
        return api(request, response, url, parts);
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'the page\'s files are read with GET');
      return serveFile(response, url.pathname);
    };
    handle().catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      if (response.headersSent) return void response.end();
      json(response, status, { error: (error as Error)?.message ?? String(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  hosts = acceptedHosts(host, address.port, options.allowedHosts ?? []);
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/?token=${encodeURIComponent(token)}`,
    token,
    async close() {
      live.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await approvals.close();
      await playground.close();
      await lab.close();
    },
  };
}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(value));
}

function download(response: ServerResponse, name: string, value: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-disposition': `attachment; filename="${name}"`, 'cache-control': 'no-store' });
  response.end(JSON.stringify(value, null, 2));
}

async function body(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) {
    text += chunk;
    if (text.length > BODY_LIMIT) throw new HttpError(413, 'the request body is over 1 MB');
  }
  try {
    return JSON.parse(text || 'null');
  } catch {
    throw new HttpError(400, 'the request body is not JSON');
  }
}
