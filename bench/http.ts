// npm run bench (http): the handler's time to first byte, and to the first text delta, against
// calling agent.stream directly, in one process — the same agent, model and store. Over HTTP the
// events are read back from the store's event log, which batches them for EVENT_BATCH_MS (10 ms):
// that batching, not HTTP, is most of the difference.
import { serve } from '@hono/node-server';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, memoryStore } from '../src/index.js';
import { createHandler } from '../src/http.js';
import { sqliteStore } from '../src/sqlite.js';
import type { RunStore } from '../src/store.js';
import { mockModel } from '../src/testing/index.js';

const ROUNDS = Math.max(10, Math.round(Number(process.env.BENCH_ROUNDS ?? 1000) / 20));

interface Times { firstByte: number; firstDelta: number }

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(store: RunStore): Promise<{ direct: Times[]; http: Times[] }> {
  const agent = createAgent({ name: 'teller', model: mockModel(['Hello there, here is the answer you asked for.'], { resumable: true }) });
  const handler = createHandler({ agents: [agent], store, authorize: 'local' });
  const server = serve({ fetch: handler, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}/runs`;

  const direct = async (): Promise<Times> => {
    const t0 = performance.now();
    let firstByte = 0;
    let firstDelta = 0;
    for await (const event of agent.stream('Hi', { store })) {
      firstByte ||= performance.now() - t0;
      if (event.type === 'text.delta') firstDelta ||= performance.now() - t0;
    }
    return { firstByte, firstDelta };
  };
  const http = async (): Promise<Times> => {
    const t0 = performance.now();
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: '{"input":"Hi"}' });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let firstByte = 0;
    let firstDelta = 0;
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      firstByte ||= performance.now() - t0;
      text += value;
      if (firstDelta === 0 && text.includes('"type":"text.delta"')) firstDelta = performance.now() - t0;
    }
    return { firstByte, firstDelta };
  };

  for (let i = 0; i < 5; i++) {
    await direct();
    await http();
  }
  const times = { direct: [] as Times[], http: [] as Times[] };
  for (let r = 0; r < ROUNDS; r++) {
    times.direct.push(await direct());
    times.http.push(await http());
  }
  server.close();
  await handler.close();
  return times;
}

console.log(`\nhttp: time to first byte and to the first text delta, median of ${ROUNDS} interleaved runs, one process (POST /runs with Accept: text/event-stream over loopback, against agent.stream)`);
const dir = mkdtempSync(join(tmpdir(), 'koagent-bench-http-'));
try {
  const stores: [string, RunStore][] = [['memory store', memoryStore()], ['SQLite file', sqliteStore({ path: join(dir, 'runs.db') })]];
  for (const [label, store] of stores) {
    const { direct, http } = await measure(store);
    for (const what of ['firstByte', 'firstDelta'] as const) {
      const d = median(direct.map((t) => t[what]));
      const h = median(http.map((t) => t[what]));
      const name = what === 'firstByte' ? 'first byte (first event)' : 'first text delta';
      console.log(`${label.padEnd(14)} ${name.padEnd(26)} agent.stream ${d.toFixed(2).padStart(7)} ms   handler ${h.toFixed(2).padStart(7)} ms   ratio ${(h / d).toFixed(1).padStart(5)}×`);
    }
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
