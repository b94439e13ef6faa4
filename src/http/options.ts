// The options of `createHandler`, described once and checked up front: a misspelt key is refused
// naming the one meant, a missing `authorize` is refused saying how to opt out for local use.
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import type { Logger } from '../core/vocabulary/contexts.js';
import type { RunInput } from '../core/vocabulary/messages.js';
import { functionSchema, optionsSchema, parseOptions, wholeNumberSchema } from '../core/vocabulary/options.js';
import type { ApprovalDecision, DecisionActor, PendingApproval, RunStatus } from '../core/vocabulary/state.js';
import { assertStore, hasEventLog, type EventLogStore, type RunStore } from '../stores/run-store.js';

/**
 * Who asks, as `authorize` tells it: the actor (an id, or `{ id, name? }`), and the tenant whose
 * runs and sessions the request may see (none: the runs of no tenant).
 *
 * @example authorize: async (request) => { const user = await users.byToken(request.headers.get('authorization')); return user && { actor: { id: user.id, name: user.name }, tenant: user.orgId }; }
 */
export interface HttpIdentity {
  actor: string | DecisionActor;
  tenant?: string;
  /** The surface its decisions are recorded as coming through (default `'api'`; the studio's playground says `'studio'`). */
  surface?: string;
}

/**
 * Decides who a request comes from: an identity, or a refusal — `null`, `undefined` or `false`
 * (answered 401), or a `Response` of your own (answered as it is). A throw is answered 500.
 *
 * @example const authorize: HandlerOptions['authorize'] = (request) => request.headers.get('authorization') === `Bearer ${process.env.API_TOKEN}` ? { actor: 'ops' } : null;
 *
 * @inline
 */
export type Authorize = (request: Request) => HttpIdentity | Response | null | undefined | false | Promise<HttpIdentity | Response | null | undefined | false>;

/**
 * What the handler needs of the workers' client (`createClient` of `koagent/worker` is one):
 * with it, runs are started, answered and cancelled through the queue, and run on the workers.
 *
 * @example createHandler({ agents: [teller], client: await createClient({ connectionString }), authorize })
 */
export interface HttpQueue {
  /** The run store the workers write: the handler reads runs and events there. */
  readonly store: RunStore;
  /** Queue a run of the agent named `agent`; its id at once. */
  start(agent: string, input: RunInput, options?: { sessionId?: string; tenant?: string; stream?: boolean; context?: unknown; metadata?: Record<string, unknown> }): Promise<string>;
  /** The run as the queue sees it (undefined when the queue never had it). */
  status(runId: string): Promise<{ tenant: string; status: 'queued' | 'running' | RunStatus | 'dead' | 'cancelled'; pendingApprovals?: PendingApproval[] } | undefined>;
  /** Queue the run's resume with these decisions (throws a TypeError when it was answered already). */
  answer(runId: string, decisions: Record<string, ApprovalDecision>): Promise<void>;
  /** Cancel the run wherever it runs. */
  cancel(runId: string): Promise<void>;
}

/**
 * Options of `createHandler`.
 *
 * @example createHandler({ agents: [teller], store: sqliteStore({ path: 'runs.db' }), authorize: (request) => (checkToken(request) ? { actor: 'ada' } : null) })
 */
export interface HandlerOptions {
  /** The agents the handler serves, by their names (`{ "agent": "teller" }` in a request; with one agent, it may be left out). */
  agents: Agent<any, any>[];
  /** Where runs and their event logs are (memoryStore(), sqliteStore(), postgresStore()). With `client`, default the client's. */
  store?: RunStore;
  /** Run on the workers: starts, answers and cancels go through this client's queue. Without it, the handler runs the agents itself. */
  client?: HttpQueue;
  /**
   * Who is asking, for every request: an identity or a refusal (see `Authorize`). `'local'`
   * opts out, for use on one's own machine: every request is the actor `local` of no tenant,
   * and only requests for a loopback host (localhost, 127.0.0.1, [::1]) are answered.
   */
  authorize: Authorize | 'local';
  /** Where the routes are mounted, e.g. `/api/agents` (default: at the root). */
  basePath?: string;
  /** Origins of other sites whose pages may call the handler (CORS; their state-changing requests pass the CSRF check). Default: none. */
  origins?: string[];
  /** The run context of each run the request starts or resumes, made from who asks (default: none). */
  context?: (identity: { actor: DecisionActor; tenant: string }, request: Request) => unknown;
  /** The largest request body, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** How often an idle event stream sends a comment, so proxies keep it open, in ms (default 15000). */
  heartbeatMs?: number;
  /** How often this handler looks for cancels of its runs sent to another process sharing the store, in ms (default 500). */
  cancelPollMs?: number;
  /** Where warnings go (default `console`). */
  logger?: Logger;
}

/** The options as the handler uses them: checked, defaults filled in. */
export interface CheckedOptions {
  agents: Map<string, Agent<any, any>>;
  store: EventLogStore;
  client?: HttpQueue;
  authorize: Authorize | 'local';
  basePath: string;
  origins: string[];
  context?: HandlerOptions['context'];
  maxBodyBytes: number;
  heartbeatMs: number;
  cancelPollMs: number;
  logger: Logger;
}

const WHERE = 'createHandler(options)';

const schema = optionsSchema({
  agents: z.array(z.instanceof(Agent, { error: 'must hold agents made with createAgent' }), { error: 'must be an array of agents made with createAgent' }).min(1, { error: 'must name at least one agent' }),
  store: z.unknown().optional(),
  client: z.unknown().optional(),
  authorize: z.union([functionSchema(), z.literal('local')], { error: "must be a function (request) => identity | null, or 'local' to answer every request on this machine as the actor 'local'" }).optional(),
  basePath: z.string({ error: "must be a path such as '/api/agents'" }).regex(/^(\/[\w.~-]+)*\/?$/, { error: "must be a path such as '/api/agents'" }).optional(),
  origins: z.array(z.string().regex(/^https?:\/\/[^/\s]+$/, { error: "must be origins such as 'https://app.example.com' (scheme, host and port, no path)" }), { error: "must be an array of origins such as 'https://app.example.com'" }).optional(),
  context: functionSchema('a function (identity, request) => the run context').optional(),
  maxBodyBytes: wholeNumberSchema(1).optional(),
  heartbeatMs: wholeNumberSchema(1).optional(),
  cancelPollMs: wholeNumberSchema(1).optional(),
  logger: z.custom<Logger>((value) => typeof (value as Logger | null)?.warn === 'function', { error: 'must have a warn(message) method (console does)' }).optional(),
}, { noun: 'an option of createHandler', aliases: { auth: 'authorize', authenticate: 'authorize', authorise: 'authorize', agent: 'agents', runStore: 'store', queue: 'client', workers: 'client', prefix: 'basePath', base: 'basePath', cors: 'origins', allowedOrigins: 'origins', runContext: 'context', bodyLimit: 'maxBodyBytes', keepAliveMs: 'heartbeatMs' } });

/** Check `createHandler`'s options, or throw a `TypeError` naming what is wrong and how to fix it. */
export function checkHandlerOptions(options: HandlerOptions): CheckedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${WHERE}: options must be an object: { agents, store, authorize }`);
  const parsed = parseOptions(schema, options, WHERE);
  if (parsed.authorize === undefined) {
    throw new TypeError(`${WHERE}: authorize is missing: give a function (request) => ({ actor, tenant? }) | null that says who asks, or authorize: 'local' to answer every request for a loopback host (localhost) as the actor 'local' — for use on your own machine only`);
  }
  const client = checkClient(options.client);
  const store = options.store ?? client?.store;
  if (store === undefined) throw new TypeError(`${WHERE}: store is missing: the run store the agents' runs and event logs are kept in (memoryStore(), sqliteStore() from koagent/sqlite, postgresStore() from koagent/postgres)`);
  assertStore(store, `${WHERE}: store`);
  if (!hasEventLog(store)) throw new TypeError(`${WHERE}: store (${store.kind}) keeps no event log, which the event streams are read from; memoryStore(), sqliteStore() and postgresStore() keep one`);
  if (store.keyValues === undefined) throw new TypeError(`${WHERE}: store (${store.kind}) has no keyValues, where cancels and refused decisions are recorded; memoryStore(), sqliteStore() and postgresStore() have them`);
  const agents = new Map<string, Agent<any, any>>();
  for (const agent of parsed.agents) {
    if (agents.has(agent.name)) throw new TypeError(`${WHERE}: two agents are named "${agent.name}"; requests name the agent they want, so names must be unique`);
    agents.set(agent.name, agent);
  }
  return {
    agents,
    store,
    ...(client !== undefined ? { client } : {}),
    authorize: parsed.authorize as Authorize | 'local',
    basePath: (parsed.basePath ?? '').replace(/\/$/, ''),
    origins: parsed.origins ?? [],
    ...(parsed.context !== undefined ? { context: parsed.context as HandlerOptions['context'] } : {}),
    maxBodyBytes: parsed.maxBodyBytes ?? 1024 * 1024,
    heartbeatMs: parsed.heartbeatMs ?? 15_000,
    cancelPollMs: parsed.cancelPollMs ?? 500,
    logger: parsed.logger ?? console,
  };
}

function checkClient(client: unknown): HttpQueue | undefined {
  if (client === undefined) return undefined;
  const methods = ['start', 'status', 'answer', 'cancel'] as const;
  const missing = typeof client === 'object' && client !== null ? methods.filter((name) => typeof (client as Record<string, unknown>)[name] !== 'function') : [...methods];
  if (missing.length > 0 || typeof (client as { store?: unknown }).store !== 'object') {
    throw new TypeError(`${WHERE}: client must be the workers' client (createClient() of koagent/worker): it ${missing.length > 0 ? `has no ${missing.join(', ')}` : 'has no store'}`);
  }
  return client as HttpQueue;
}
