// Following a run's event log through the playground's API (koagent/http's SSE route), read with
// fetch so the token goes in a header. A dropped connection is taken up again after the last
// event seen (Last-Event-ID), so no event is lost or shown twice.
import { token } from './client.ts';

/** One event of the run's log: its offset, and the event as the agent emitted it. */
export interface LoggedEvent {
  seq: number;
  event: { type: string; [key: string]: unknown };
}

/** How a followed segment ended (the route's `end` event), or `gone` (nothing more will come: 204). */
export type FollowEnd = { runId: string; status: string; last: number } | { gone: true };

/**
 * Read run `runId`'s events after offset `after` until its segment ends, calling `onEvent` with
 * each. Resolves with how it ended; `signal` stops it (the run goes on).
 *
 * @example const end = await follow(runId, 0, (e) => show(e), controller.signal);
 */
export async function follow(runId: string, after: number, onEvent: (logged: LoggedEvent) => void, signal: AbortSignal): Promise<FollowEnd> {
  let last = after;
  for (let attempt = 0; attempt < 5; attempt++) {
    const response = await fetch(`./api/play/runs/${encodeURIComponent(runId)}/events`, { headers: { 'x-koagent-token': token(), 'last-event-id': String(last), accept: 'text/event-stream' }, signal });
    if (response.status === 204) return { gone: true };
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { error?: string };
      throw new Error(body.error ?? `${response.status} ${response.statusText}`);
    }
    const ended = await readStream(response, (logged) => {
      last = logged.seq;
      onEvent(logged);
    });
    if (ended !== undefined) return ended;
    if (signal.aborted) return { gone: true };
  }
  throw new Error(`lost the event stream of run ${runId} five times in a row`);
}

/** Read one SSE response to its end: the `end` event's data, or undefined when the connection dropped first. */
async function readStream(response: Response, onEvent: (logged: LoggedEvent) => void): Promise<FollowEnd | undefined> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffer += value;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields: Record<string, string> = {};
        for (const line of frame.split('\n')) {
          if (line.startsWith(':')) continue; // a keep-alive comment
          const colon = line.indexOf(':');
          if (colon > 0) fields[line.slice(0, colon)] = (fields[line.slice(0, colon)] === undefined ? '' : `${fields[line.slice(0, colon)]}\n`) + line.slice(colon + 1).replace(/^ /, '');
        }
        if (fields.data === undefined) continue;
        if (fields.event === 'end') return JSON.parse(fields.data) as FollowEnd;
        if (fields.event === undefined) onEvent({ seq: Number(fields.id), event: JSON.parse(fields.data) as LoggedEvent['event'] });
      }
    }
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') return { gone: true };
    return undefined;
  }
}
