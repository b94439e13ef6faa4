// A real HTTP server on 127.0.0.1 that speaks the OpenAI Chat Completions wire format, answering
// from a script, one response per request, and keeping every request it received: an agent on
// `openai()` is tested over the same HTTP and SSE code it uses in production, offline.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completionOf, cutInside, errorBody, streamEventsOf, type ScriptedReply } from './openai-compatible-wire.js';

export type { ScriptedReply, ScriptedToolCall } from './openai-compatible-wire.js';

/**
 * What the server does with one request: answer with a scripted reply (streamed as SSE when the
 * request asks for `stream: true`, possibly cut or broken on the way), answer with an HTTP error,
 * answer with a raw body, or hold the request.
 *
 * @example const responses: ScriptedResponse[] = [{ reply: { text: 'Hi' } }, { status: 429, body: { error: { message: 'Slow down' } }, headers: { 'retry-after': '0' } }];
 */
export type ScriptedResponse =
  | {
      reply: ScriptedReply;
      /** Answer with a whole `chat.completion` even when the request asks to stream, as some servers do. */
      ignoreStream?: boolean;
      /** Streaming: write the bytes in pieces, cut through the middle of the first occurrence of each of these strings. */
      splitInside?: string[];
      /** Streaming: characters per `arguments` fragment of a tool call (default 7). */
      argumentsPiece?: number;
      /** Streaming: drop the connection (a TCP reset) after this many SSE events. */
      resetAfterEvents?: number;
      /** Streaming: after this many SSE events, send an `error` event (as OpenAI does when it fails mid-reply) and end. */
      errorAfterEvents?: number;
      /** Not streaming: send the headers and this many bytes of the body, then drop the connection. */
      resetAfterBytes?: number;
    }
  /** An HTTP error (or any status) with this JSON body (a string body is sent as is). */
  | { status: number; body: unknown; headers?: Record<string, string> }
  /** A 200 response whose body is this text, as is (a malformed reply, or one built by hand). */
  | { rawBody: string; contentType?: string }
  /** Hold the request without answering until the client goes away (a timeout, a cancelled run). */
  | { hang: true };

/**
 * One request the server received.
 *
 * @example expect(server.requests[0].body.messages.at(-1)).toMatchObject({ role: 'user' });
 *
 * @inline
 */
export interface ReceivedRequest {
  method: string;
  /** The path, from `/v1` on (e.g. `/v1/chat/completions`). */
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body as sent (`model`, `messages`, `tools`, `stream`, …); the raw text when it is not JSON. */
  body: any;
}

/**
 * A running scripted server; give `baseURL` to `openai()`.
 *
 * @example const model = openai({ model: 'gpt-5-mini', baseURL: server.baseURL, apiKey: 'sk-test' });
 */
export interface OpenAICompatibleServer {
  /** The API root to give as `baseURL` (`http://127.0.0.1:<port>/v1`). */
  readonly baseURL: string;
  /** Every request received so far, in order. */
  readonly requests: readonly ReceivedRequest[];
  /** Resolves once the server has received `count` requests in all. */
  received(count: number): Promise<void>;
  /** How many requests' clients went away before the server finished answering. */
  readonly disconnects: number;
  /** Resolves once `count` requests' clients in all went away before the server finished answering. */
  disconnected(count: number): Promise<void>;
  /** Add responses to the end of the script (a server that comes back, a second run). */
  push(...responses: ScriptedResponse[]): void;
  /** Stop the server, dropping any open connection. */
  close(): Promise<void>;
}

/**
 * The options of {@link openaiCompatibleServer}.
 *
 * @example const options: OpenAICompatibleServerOptions = { responses: [{ reply: { text: 'Hi' } }] };
 *
 * @inline
 */
export interface OpenAICompatibleServerOptions {
  /** The script: the first request gets the first response, and so on. */
  responses: ScriptedResponse[];
}

/**
 * Start an OpenAI-compatible Chat Completions server on an ephemeral loopback port. It answers
 * each request with the next response of the script, as JSON or as SSE events when the request
 * asks to stream, and records the requests. A request beyond the script gets a 500 whose
 * message says so, so a test never hangs on a missing response.
 *
 * @example
 * const server = await openaiCompatibleServer({ responses: [
 *   { reply: { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] } },
 *   { reply: { text: 'Sunny in Paris.' } },
 * ] });
 * const agent = createAgent({ model: openai({ model: 'gpt-5-mini', baseURL: server.baseURL, apiKey: 'sk-test' }), tools: [weather] });
 * await agent.run('Weather in Paris?');
 * await server.close();
 */
export async function openaiCompatibleServer(options: OpenAICompatibleServerOptions): Promise<OpenAICompatibleServer> {
  if (!Array.isArray(options?.responses)) throw new TypeError('openaiCompatibleServer(options): options.responses must be an array of responses, e.g. { responses: [{ reply: { text: "Hi" } }] }');
  const script = [...options.responses];
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const goneWaiters: Array<{ count: number; resolve: () => void }> = [];
  let disconnects = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    // This request's number: its place in the log.
    const number = requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    for (let i = waiters.length - 1; i >= 0; i--) if (number >= waiters[i].count) waiters.splice(i, 1)[0].resolve();
    let gone = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        gone = true;
        disconnects++;
        for (let i = goneWaiters.length - 1; i >= 0; i--) if (disconnects >= goneWaiters[i].count) goneWaiters.splice(i, 1)[0].resolve();
      }
    });
    const response = script[number - 1];
    try {
      if (response === undefined) return sendJson(res, 500, errorBody(`openaiCompatibleServer: no response scripted for request ${number}; add one to responses (or push it)`));
      await answer(res, response, number, body, () => gone);
    } catch (error) {
      if (!res.headersSent) sendJson(res, 500, errorBody(error instanceof Error ? error.message : String(error)));
      else res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get disconnects() {
      return disconnects;
    },
    received: (count) => (requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
    disconnected: (count) => (disconnects >= count ? Promise.resolve() : new Promise((resolve) => goneWaiters.push({ count, resolve }))),
    push: (...more) => void script.push(...more),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function answer(res: ServerResponse, response: ScriptedResponse, number: number, request: any, gone: () => boolean): Promise<void> {
  if ('hang' in response) return;
  if ('status' in response) return sendJson(res, response.status, response.body, response.headers);
  if ('rawBody' in response) {
    res.writeHead(200, { 'content-type': response.contentType ?? 'application/json' });
    return void res.end(response.rawBody);
  }
  if (request?.stream === true && response.ignoreStream !== true) return streamReply(res, response, number, request, gone);
  const whole = JSON.stringify(completionOf(response.reply, number, request));
  if (response.resetAfterBytes !== undefined) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(whole.slice(0, response.resetAfterBytes));
    await pause();
    return void res.socket?.resetAndDestroy();
  }
  sendJson(res, 200, whole);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

async function streamReply(res: ServerResponse, response: Extract<ScriptedResponse, { reply: ScriptedReply }>, number: number, request: any, gone: () => boolean): Promise<void> {
  const events = streamEventsOf(response.reply, number, request, response.argumentsPiece);
  // Cut before the headers go out, so a bad `splitInside` is a 500 that names it.
  const pieces = cutInside(Buffer.from(events.join(''), 'utf8'), response.splitInside ?? []);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  if (response.errorAfterEvents !== undefined) {
    const error = errorBody('The server had an error while processing your request. Sorry about that!');
    res.write(events.slice(0, response.errorAfterEvents).join('') + `data: ${JSON.stringify(error)}\n\n`);
    return void res.end();
  }
  if (response.resetAfterEvents !== undefined) {
    res.write(events.slice(0, response.resetAfterEvents).join(''));
    await pause();
    return void res.socket?.resetAndDestroy();
  }
  for (const piece of pieces) {
    if (gone()) return;
    res.write(piece);
    // A pause between writes makes each piece its own read on the client's side.
    await pause();
  }
  res.end();
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
