import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';
import { createClient, createWorker } from '../../src/worker.js';
import { prepareEffects, workerAgent } from '../fixtures/worker-agents.js';

let server: TestPostgres;
beforeAll(async () => { server = await startPostgres(); }, 60_000);
afterAll(async () => { await server?.stop(); });

describe('smoke', () => {
  it('runs', async () => {
    const url = await server.database();
    const pool = new pg.Pool({ connectionString: url });
    await prepareEffects(pool as never);
    const worker = await createWorker({ connectionString: url, agents: [workerAgent(pool as never)], handleSignals: false, leaseMs: 1000 });
    const client = await createClient({ connectionString: url });
    const t0 = Date.now();
    const ids = await Promise.all([1, 2, 3].map((i) => client.start('teller', `hello ${i}`)));
    const reports = await Promise.all(ids.map((id) => client.wait(id, { timeoutMs: 20_000 })));
    console.log(Date.now() - t0, reports);
    const refund = await client.start('teller', 'please refund', { stream: true });
    const waiting = await client.wait(refund, { timeoutMs: 20_000 });
    console.log(waiting);
    await client.answer(refund, { call_refund: true });
    const events: string[] = [];
    for await (const { event } of client.events(refund)) events.push(event.type);
    console.log(events.join(' '), await client.status(refund));
    console.log(worker.counts);
    await worker.stop();
    await client.close();
    await pool.end();
  }, 60_000);
});
