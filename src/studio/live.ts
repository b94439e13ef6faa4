// Live updates: while a page listens (server-sent events), the store's list is polled — one
// cheap query each interval — and the runs that changed since the last poll are pushed, with
// their rows (status, steps, usage). Nothing polls when nobody listens.
import type { ServerResponse } from 'node:http';
import type { RunStore } from '../stores/run-store.js';
import { changeKey, type RunCatalog } from './catalog.js';

/**
 * The page's event stream: `runs` events with the rows that changed and the ids that went.
 *
 * @example const hub = new LiveRuns(store, catalog, 500); hub.add(response);
 */
export class LiveRuns {
  readonly #store: RunStore;
  readonly #catalog: RunCatalog;
  readonly #intervalMs: number;
  readonly #clients = new Set<ServerResponse>();
  #known = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(store: RunStore, catalog: RunCatalog, intervalMs: number) {
    this.#store = store;
    this.#catalog = catalog;
    this.#intervalMs = intervalMs;
  }

  /** Start streaming to `response` (headers written here). */
  add(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    response.write('retry: 1000\n\n');
    this.#clients.add(response);
    response.on('close', () => {
      this.#clients.delete(response);
      if (this.#clients.size === 0) this.#stop();
    });
    if (this.#timer === undefined) {
      // A new listener starts from what the store holds now: the first poll tells it nothing old.
      void this.#poll(true);
      this.#timer = setInterval(() => void this.#poll(false), this.#intervalMs);
      this.#timer.unref();
    }
  }

  /** End every stream and stop polling. */
  close(): void {
    for (const client of this.#clients) client.end();
    this.#clients.clear();
    this.#stop();
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #poll(silent: boolean): Promise<void> {
    if (this.#polling) return; // a slow store: skip a beat rather than pile queries up
    this.#polling = true;
    try {
      const summaries = await this.#store.listRuns({ limit: 500 });
      const next = new Map(summaries.map((summary) => [summary.runId, changeKey(summary)]));
      const moved = summaries.filter((summary) => this.#known.get(summary.runId) !== next.get(summary.runId));
      const removed = [...this.#known.keys()].filter((id) => !next.has(id));
      this.#known = next;
      for (const id of removed) this.#catalog.forget(id);
      if (silent || (moved.length === 0 && removed.length === 0)) return;
      const rows = (await Promise.all(moved.map((summary) => this.#catalog.entry(summary)))).flatMap((entry) => (entry ? [entry.row] : []));
      this.#send('runs', { changed: rows, removed });
    } catch (error) {
      this.#send('problem', { message: `reading the store failed: ${(error as Error)?.message ?? String(error)}` });
    } finally {
      this.#polling = false;
    }
  }

  #send(event: string, data: unknown): void {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const client of this.#clients) client.write(frame);
  }
}
