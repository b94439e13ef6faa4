// The AI SDK's chat protocol, so `useChat` with its own `DefaultChatTransport` drives an agent:
// `POST /chat` sends a turn (the chat's id is the session's) or the answers to its approvals, and
// streams the reply as UI message chunks; `GET /chat/:chatId/stream` is the transport's reconnect,
// a replay of the run under way (204 when none is). The history is the store's: of the messages
// the client sends, only its new text, or its answers to the pending approvals, are read.
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { bindDecisions, type SentDecision } from './decisions.js';
import { runEvents } from './follow.js';
import { clientSession, HttpError, owns, storedSession, type Identity } from './identity.js';
import { body, type HttpEnv } from './run-routes.js';
import { startError } from './runners.js';
import { sseResponse, type SseEvent } from './sse.js';
import { UiStream } from './ui-stream.js';
import { agentNamed, type Parts } from './views.js';

const part = z.object({ type: z.string() }).passthrough();
const message = z.object({ id: z.string().optional(), role: z.enum(['user', 'assistant', 'system'], { error: "must be 'user', 'assistant' or 'system'" }), parts: z.array(part, { error: 'must be an array of message parts' }) }).passthrough();
// The transport's body, with any fields an app adds through its `body` option (only `agent` is read).
const chatSchema = z.object({
  id: z.string({ error: 'must be the chat id (the session)' }),
  messages: z.array(message, { error: 'must be the chat messages' }).min(1, { error: 'must hold the message to send' }),
  trigger: z.string().optional(),
  agent: z.string().optional(),
}).passthrough();

/** The UI stream's own headers: the protocol's marker, so the transport reads chunks. */
const UI_HEADERS = { 'x-vercel-ai-ui-message-stream': 'v1' };

/** One approval part the client answered: `approval.id` is the digest the stream sent with the request. */
type Answered = { type: string; toolCallId: string; state: string; approval: { id: string; approved: boolean; reason?: string } };

const isAnswered = (p: Record<string, unknown>): p is Answered =>
  (String(p.type).startsWith('tool-') || p.type === 'dynamic-tool') && p.state === 'approval-responded' && typeof p.toolCallId === 'string' && typeof (p.approval as Answered['approval'] | undefined)?.id === 'string';

/** A run's events from `after` as UI chunks, ending with `[DONE]`. */
function uiResponse(parts: Parts, c: Context<HttpEnv>, runId: string, after: number, stream: UiStream): Response {
  return sseResponse(async function* (signal): AsyncGenerator<SseEvent> {
    for (const chunk of stream.start()) yield { data: JSON.stringify(chunk) };
    for await (const logged of runEvents(parts, runId, after, signal)) {
      for (const chunk of stream.push(logged)) yield { data: JSON.stringify(chunk) };
    }
    if (signal.aborted) return;
    for (const chunk of stream.finish()) yield { data: JSON.stringify(chunk) };
    yield { data: '[DONE]' };
  }, { heartbeatMs: parts.heartbeatMs, request: c.req.raw, headers: UI_HEADERS });
}

/** The text of the user's new message (its text parts, joined), or a 400 saying what is missing. */
function userText(parts: Array<Record<string, unknown>>): string {
  const text = parts.filter((p) => p.type === 'text' && typeof p.text === 'string').map((p) => p.text as string).join('\n');
  if (text.trim() === '') throw new HttpError(400, 'POST /chat: the last message has no text; send { role: "user", parts: [{ type: "text", text }] }');
  return text;
}

/** Add the chat routes to `app`. */
export function chatRoutes(app: Hono<HttpEnv, any, any>, parts: Parts): void {
  app.post('/chat', async (c) => {
    const identity = c.get('identity');
    const chat = await body(c, chatSchema, 'POST /chat');
    if (chat.trigger === 'regenerate-message') throw new HttpError(400, 'POST /chat: regenerating a reply is not supported: the session keeps every turn it had; send a new message instead');
    const sessionId = storedSession(identity, clientSession(chat.id));
    const last = chat.messages[chat.messages.length - 1];
    const context = parts.context(identity, c.req.raw);
    if (last.role === 'user') {
      const head = chat.agent === undefined ? await parts.store.sessionHead(sessionId) : undefined;
      const agent = agentNamed(parts, chat.agent, head?.agentName);
      let runId: string;
      try {
        runId = await parts.runner.start({ agent, input: userText(last.parts), sessionId, fresh: false, identity, context });
      } catch (error) {
        throw startError(error);
      }
      return uiResponse(parts, c, runId, 0, new UiStream(runId));
    }
    return answer(parts, c, identity, sessionId, last.parts.filter(isAnswered));
  });

  app.get('/chat/:chatId/stream', async (c) => {
    const sessionId = storedSession(c.get('identity'), clientSession(c.req.param('chatId')));
    const head = await parts.store.sessionHead(sessionId);
    if (head === undefined || head.status !== 'running') return c.body(null, 204);
    // A replay of the whole run (the transport starts the message over), what was retracted left out.
    const { last } = await parts.store.readEvents(head.runId, { limit: 1 });
    return uiResponse(parts, c, head.runId, 0, new UiStream(head.runId, { replayUntil: last }));
  });
}

/** The client's answers to the chat's pending approvals: bound to the run as it waits, then resumed. */
async function answer(parts: Parts, c: Context<HttpEnv>, identity: Identity, sessionId: string, answered: Answered[]): Promise<Response> {
  if (answered.length === 0) throw new HttpError(400, "POST /chat: the last message is the assistant's, with no approval answered; send the user's message, or answer the approvals (addToolApprovalResponse)");
  const state = await parts.store.sessionHead(sessionId);
  if (state === undefined || !owns(identity, state.sessionId)) throw new HttpError(404, 'POST /chat: this chat has no run to answer');
  const sent: Record<string, SentDecision> = {};
  for (const p of answered) sent[p.toolCallId] = { approved: p.approval.approved, digest: p.approval.id, ...(p.approval.reason !== undefined ? { reason: p.approval.reason } : {}) };
  const agent = parts.agents.get(state.agentName);
  const decisions = await bindDecisions(state, sent, identity, agent, parts.refusals, await parts.runner.cancelled(state.runId));
  const { last } = await parts.store.readEvents(state.runId, { limit: 1 });
  try {
    await parts.runner.resume(agent, state, decisions, parts.context(identity, c.req.raw));
  } catch (error) {
    throw startError(error);
  }
  // The reply goes on in the message the approvals are in (the run's), from the resumed segment.
  return uiResponse(parts, c, state.runId, last, new UiStream(state.runId, { segment: state.segment + 1 }));
}
