// The handler's own routes: start a run, send to a session, read a run or a session, follow a
// run's events (Server-Sent Events whose ids are the log's offsets: `Last-Event-ID` or `?from=`
// resume after one), answer its approvals, cancel it.
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { RunInput } from '../core/vocabulary/messages.js';
import { optionsSchema, parseOptions } from '../core/vocabulary/options.js';
import { bindDecisions, type SentDecision } from './decisions.js';
import { runEvents } from './follow.js';
import { clientSession, HttpError, storedSession, type Identity } from './identity.js';
import { startError } from './runners.js';
import { sseResponse, type SseEvent } from './sse.js';
import { agentNamed, ownedRun, runView, summaryView, type Parts } from './views.js';

/** The variables the handler's middleware give its routes. */
export interface HttpEnv {
  Variables: { identity: Identity };
}

const text = z.string({ error: 'must be a string' });
const part = z.object({ type: text }).passthrough();
/** What a client may send as input: text, or one user message (never history: the store keeps that). */
const inputSchema = z.union([
  text.min(1, { error: 'must not be empty' }),
  z.strictObject({ role: z.literal('user', { error: "must be 'user': a client sends its own message; the session's history is the store's" }), content: z.union([text, z.array(part)]) }),
], { error: "must be the user's text, or { role: 'user', content }" });

const startSchema = optionsSchema({ agent: text.optional(), input: inputSchema }, { noun: 'a field of a start', aliases: { message: 'input', prompt: 'input', text: 'input', agentName: 'agent' } });
const decisionSchema = optionsSchema({
  approved: z.boolean({ error: 'must be true or false' }),
  digest: text.min(1, { error: 'must be the digest of the pending approval the decision is about (GET the run: pendingApprovals[].digest)' }),
  reason: text.optional(),
  args: z.unknown().optional(),
}, { noun: 'a field of a decision', aliases: { approve: 'approved', editedArgs: 'args', arguments: 'args', input: 'args', approvalId: 'digest', hash: 'digest' } });
const decisionsSchema = optionsSchema({ decisions: z.record(z.string(), decisionSchema, { error: 'must be an object: { [toolCallId]: { approved, digest, reason?, args? } }' }) }, { noun: 'a field of an answer' });

/** The request's JSON body, checked against `schema` (400 naming what is wrong). */
export async function body<S extends z.ZodType>(c: Context<HttpEnv>, schema: S, where: string): Promise<z.output<S>> {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    throw new HttpError(400, `${where}: the body is not JSON`);
  }
  try {
    return parseOptions(schema, json, where);
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
}

/** Whether the client asks for the events themselves (`Accept: text/event-stream`) rather than JSON. */
const wantsEvents = (c: Context<HttpEnv>) => (c.req.header('accept') ?? '').includes('text/event-stream');

/** The offset a client has seen: `Last-Event-ID` (an EventSource's reconnect), else `?from=`, else 0. */
function seen(c: Context<HttpEnv>): number {
  const given = c.req.header('last-event-id') ?? c.req.query('from');
  if (given === undefined || given === '') return 0;
  if (!/^\d{1,15}$/.test(given)) throw new HttpError(400, `Last-Event-ID / ?from= must be the id of the last event seen (a whole number ≥ 0), not ${JSON.stringify(given.slice(0, 40))}`);
  return Number(given);
}

/** A run's events as SSE: `id:` its offset, `data:` the event; last an `end` event with how the segment ended. */
function eventStream(parts: Parts, c: Context<HttpEnv>, runId: string, after: number): Response {
  return sseResponse(async function* (signal): AsyncGenerator<SseEvent> {
    let last = after;
    for await (const logged of runEvents(parts, runId, after, signal)) {
      last = logged.seq;
      yield { id: logged.seq, data: JSON.stringify(logged.event) };
    }
    if (signal.aborted) return;
    const page = await parts.store.readEvents(runId, { after: last, limit: 1 });
    yield { event: 'end', data: JSON.stringify({ runId, status: page.status ?? null, last: page.last }) };
  }, { heartbeatMs: parts.heartbeatMs, request: c.req.raw });
}

/** The answer to a start: the run's events, or where to find them. */
async function started(parts: Parts, c: Context<HttpEnv>, runId: string, sessionId: string): Promise<Response> {
  if (wantsEvents(c)) return eventStream(parts, c, runId, 0);
  return c.json({ runId, sessionId, status: parts.client === undefined ? 'running' : 'queued', events: `runs/${runId}/events` }, 201);
}

/** Add the routes to `app`. */
export function runRoutes(app: Hono<HttpEnv, any, any>, parts: Parts): void {
  const start = async (c: Context<HttpEnv>, sessionId: string | undefined) => {
    const identity = c.get('identity');
    const given = await body(c, startSchema, sessionId === undefined ? 'POST /runs' : `POST /sessions/${sessionId}/messages`);
    const fresh = sessionId === undefined;
    const session = sessionId ?? `session_${crypto.randomUUID()}`;
    const stored = storedSession(identity, session);
    // A session's turn goes to the agent of its latest run unless the request names one.
    const head = fresh || given.agent !== undefined ? undefined : await parts.store.sessionHead(stored);
    const agent = agentNamed(parts, given.agent, head?.agentName);
    let runId: string;
    try {
      runId = await parts.runner.start({ agent, input: given.input as RunInput, sessionId: stored, fresh, identity, context: parts.context(identity, c.req.raw) });
    } catch (error) {
      throw startError(error);
    }
    return started(parts, c, runId, session);
  };
  app.post('/runs', (c) => start(c, undefined));
  app.post('/sessions/:sessionId/messages', (c) => start(c, clientSession(c.req.param('sessionId'))));

  app.get('/sessions/:sessionId', async (c) => {
    const sessionId = clientSession(c.req.param('sessionId'));
    const runs = await parts.store.listRuns({ sessionId: storedSession(c.get('identity'), sessionId), limit: 100 });
    if (runs.length === 0) throw new HttpError(404, `there is no session ${sessionId}`);
    return c.json({ sessionId, runs: runs.map(summaryView) });
  });

  app.get('/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const run = await ownedRun(parts, runId, c.get('identity'));
    if ('queued' in run) return c.json({ runId, status: run.queued.status });
    return c.json(await runView(parts, run.state));
  });

  app.get('/runs/:runId/events', async (c) => {
    const runId = c.req.param('runId');
    const after = seen(c);
    const run = await ownedRun(parts, runId, c.get('identity'));
    if ('state' in run) {
      const page = await parts.store.readEvents(runId, { after, limit: 1 });
      if (page.deleted === true) throw new HttpError(410, `the events of run ${runId} after ${after} are gone: the run was deleted (or pruned) with them, or it never had that many`);
      const waiting = parts.client === undefined ? false : (await parts.client.status(runId))?.status === 'queued';
      // Nothing after what the client saw, and nothing to come: 204 tells an EventSource to stop reconnecting.
      if (after > 0 && page.events.length === 0 && page.status !== 'running' && !waiting) return c.body(null, 204);
    }
    return eventStream(parts, c, runId, after);
  });

  app.post('/runs/:runId/decisions', async (c) => {
    const runId = c.req.param('runId');
    const identity = c.get('identity');
    const { decisions: sent } = await body(c, decisionsSchema, `POST /runs/${runId}/decisions`);
    const run = await ownedRun(parts, runId, identity);
    if ('queued' in run) throw new HttpError(409, `run ${runId} is ${run.queued.status} in the queue: it has no approval to answer now`);
    const { state } = run;
    const agent = parts.agents.get(state.agentName);
    const decisions = await bindDecisions(state, sent as Record<string, SentDecision>, identity, agent, parts.refusals, await parts.runner.cancelled(runId));
    try {
      await parts.runner.resume(agent, state, decisions, parts.context(identity, c.req.raw));
    } catch (error) {
      const refused = startError(error);
      // Another answer of the same segment got there first: this one is stale, and kept as refused.
      if (refused.status === 409) {
        const at = new Date().toISOString();
        for (const [toolCallId, decision] of Object.entries(sent)) {
          await parts.refusals.record(runId, { toolCallId, approved: decision.approved, reason: 'answered', message: refused.message, actor: identity.actor, surface: identity.surface, segment: state.segment, status: state.status, at });
        }
      }
      throw refused;
    }
    return c.json({ runId, status: parts.client === undefined ? 'running' : 'queued', segment: state.segment + 1, events: `runs/${runId}/events` }, 202);
  });

  app.post('/runs/:runId/cancel', async (c) => {
    const runId = c.req.param('runId');
    const identity = c.get('identity');
    const run = await ownedRun(parts, runId, identity);
    // On the workers the queue knows best: a failed run it retries is not over.
    const queued = 'queued' in run ? run.queued.status : (await parts.client?.status(runId))?.status;
    const status = queued ?? (run as { state: { status: string } }).state.status;
    if (status === 'completed' || status === 'failed' || status === 'dead' || status === 'cancelled') throw new HttpError(409, `run ${runId} is ${status}: there is nothing to cancel`);
    await parts.runner.cancel(runId, identity);
    return c.json({ runId, cancelled: true }, 202);
  });
}
