// What the HTTP tests share: the handler served on a loopback port (as users serve it, with
// @hono/node-server), a temporary SQLite file, requests with a token, and a reader of a
// Server-Sent Events response that a test can stop (a client going away) at any event.
import { serve } from '@hono/node-server';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { AgentEvent } from '../../src/index.js';
import type { createHandler } from '../../src/http.js';

type KoagentHandler = ReturnType<typeof createHandler>;

/** A handler on a loopback port: its base URL, and `close()` (the server, then the handler). */
export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Serve `handler` on 127.0.0.1, on a free port. */
export async function served(handler: KoagentHandler): Promise<Served> {
  let listening!: (info: AddressInfo) => void;
  const ready = new Promise<AddressInfo>((resolve) => (listening = resolve));
  const server = serve({ fetch: handler, port: 0, hostname: '127.0.0.1' }, listening);
  const { port } = await ready;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.close();
    },
  };
}

/** A temporary folder, and a SQLite file's path in it; `remove()` deletes it. */
export function tempDb(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-http-'));
  return { path: join(dir, 'runs.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** fetch with a bearer token, JSON in and (unless it is a stream) out. */
export function api(base: string, token: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return response;
  };
  return {
    call,
    async json(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
      const response = await call(method, path, body);
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
    },
  };
}

/** One event of an SSE stream as a client reads it. */
export interface ReadEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Read the SSE events of `response` one by one; `stop(e)` true ends the reading there and goes
 * away (the connection is cancelled, as a closed tab's is).
 */
export async function readSse(response: Response, stop: (event: ReadEvent, count: number) => boolean = () => false): Promise<ReadEvent[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  const read: ReadEvent[] = [];
  for (;;) {
    const next = await reader.read();
    if (next.done) return read;
    const { id, event, data } = next.value;
    const got: ReadEvent = { data, ...(id !== undefined ? { id } : {}), ...(event !== undefined ? { event } : {}) };
    read.push(got);
    if (stop(got, read.length)) {
      await reader.cancel();
      return read;
    }
  }
}

/** The run events of what was read (the `end` event and errors left out). */
export function runEventsOf(read: ReadEvent[]): AgentEvent[] {
  return read.filter((e) => e.event === undefined).map((e) => JSON.parse(e.data) as AgentEvent);
}
