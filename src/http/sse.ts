// Server-Sent Events out of an async iteration: each item one event, a comment now and then so
// proxies keep an idle stream open, and the iteration stopped (through `stop`) when the client
// goes away — which stops the reading, never the run.

/** One event of a stream: its data (one JSON text), and optionally its id and name. */
export interface SseEvent {
  data: string;
  id?: number;
  event?: string;
}

const encoder = new TextEncoder();

/** The wire form of one event (`data` is one line: JSON never holds a raw line break). */
export function sseText({ data, id, event }: SseEvent): string {
  return `${id !== undefined ? `id: ${id}\n` : ''}${event !== undefined ? `event: ${event}\n` : ''}data: ${data}\n\n`;
}

/**
 * A response streaming `events`, made by `produce(signal)`; `signal` aborts when the client goes
 * away or the stream ends, so the producer stops reading. `headers` are added to the stream's own.
 */
export function sseResponse(produce: (signal: AbortSignal) => AsyncIterable<SseEvent>, options: { heartbeatMs: number; request: Request; headers?: Record<string, string> }): Response {
  const stop = new AbortController();
  const onGone = () => stop.abort();
  options.request.signal.addEventListener('abort', onGone, { once: true });
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let iterator: AsyncIterator<SseEvent> | undefined;
  const finish = () => {
    clearInterval(heartbeat);
    options.request.signal.removeEventListener('abort', onGone);
    stop.abort();
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // A comment first: the headers and the first byte leave at once, before any event exists.
      controller.enqueue(encoder.encode(': koagent\n\n'));
      heartbeat = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(': keep-alive\n\n'));
        } catch {
          finish();
        }
      }, options.heartbeatMs);
      heartbeat.unref?.();
      iterator = produce(stop.signal)[Symbol.asyncIterator]();
    },
    async pull(controller) {
      try {
        const next = await iterator!.next();
        if (next.done === true) {
          finish();
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(sseText(next.value)));
      } catch (error) {
        finish();
        // A stream that has started cannot change its status: the failure is its last event.
        controller.enqueue(encoder.encode(sseText({ event: 'error', data: JSON.stringify({ error: (error as Error)?.message ?? String(error), code: (error as { code?: string })?.code }) })));
        controller.close();
      }
    },
    async cancel() {
      finish();
      await iterator?.return?.();
    },
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', ...options.headers },
  });
}
