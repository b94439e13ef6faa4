// npx tsx examples/http.ts — agents served over HTTP, offline (mock models, an in-memory store),
// on a loopback port, and a client of this file driving them as a front-end would:
//  1. it starts a run and follows its events (SSE), goes away mid-stream, and comes back with
//     the id of the last event it saw: it gets the rest, each event once;
//  2. a run waits for approval; a decision for arguments the human did not see is refused, an
//     approval with edited arguments goes through, and the run's decision log says who and how;
//  3. a second client cancels a run the first one follows.
// With --serve it then goes on serving (PORT, default 3000) for the curl lines of docs/http.md.
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore } from 'koagent';
import { createHandler } from 'koagent/http';
import { mockModel } from 'koagent/testing';

const TOKEN = process.env.KOAGENT_TOKEN ?? 'dev-token';
const serving = process.argv.includes('--serve');

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(' ');
// `resumable`: each reply is picked by where the run stands, so every new run starts the script over.
const writer = createAgent({ name: 'writer', model: mockModel([`Here is a long answer: ${words(40)}.`, 'And a second turn.', 'And a third.'], { resumable: true, deltaLatencyMs: 25 }) });
const pay = defineTool({
  name: 'pay',
  description: 'Pay someone',
  input: z.object({ to: z.string(), amount: z.number().max(100) }),
  needsApproval: true,
  execute: ({ to, amount }) => `paid ${to} ${amount} euros`,
});
const teller = createAgent({ name: 'teller', model: mockModel([{ toolCalls: [{ name: 'pay', args: { to: 'Alice', amount: 30 } }] }, 'Alice has her money.'], { resumable: true }), tools: [pay] });

const store = memoryStore();
const handler = createHandler({
  agents: [writer, teller],
  store,
  // Who asks: here one token, one person of one tenant. Return null to refuse (401).
  authorize: (request) => (request.headers.get('authorization') === `Bearer ${TOKEN}` ? { actor: { id: 'ada', name: 'Ada' }, tenant: 'demo' } : null),
});
const port = serving ? Number(process.env.PORT ?? 3000) : 0;
const server = serve({ fetch: handler, port, hostname: '127.0.0.1' });
await new Promise((resolve) => server.once('listening', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const post = async (path: string, body: unknown) => {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
};
const get = async (path: string) => (await (await fetch(`${base}${path}`, { headers })).json()) as any;

/** Read a run's events from after `lastId`, stopping after `max` of them (going away) or at the end. */
async function follow(runId: string, lastId = 0, max = Infinity): Promise<{ events: { id: number; type: string; delta?: string }[]; ended: boolean }> {
  const response = await fetch(`${base}/runs/${runId}/events`, { headers: { ...headers, 'last-event-id': String(lastId) } });
  const events: { id: number; type: string; delta?: string }[] = [];
  if (response.status === 204) return { events, ended: true };
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { events, ended: true };
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (/^event: end$/m.test(frame)) {
        await reader.cancel();
        return { events, ended: true };
      }
      const id = /^id: (\d+)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (id === undefined || data === undefined) continue;
      events.push({ id: Number(id), ...(JSON.parse(data) as { type: string; delta?: string }) });
      if (events.length >= max) {
        // Going away: the connection closes; the run does not stop.
        await reader.cancel();
        return { events, ended: false };
      }
    }
  }
}
const shown = (events: { type: string; delta?: string }[]) => events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');

console.log(`Serving writer and teller at ${base}`);

// 1. Follow, go away, come back with Last-Event-ID.
const started = await post('/runs', { agent: 'writer', input: 'Tell me something long' });
const before = await follow(started.body.runId, 0, 8);
console.log(`1. Started ${started.body.runId}; read events 1-${before.events.at(-1)!.id}, then went away (the run goes on)`);
const after = await follow(started.body.runId, before.events.at(-1)!.id);
const ids = [...before.events, ...after.events].map((e) => e.id);
const run = await get(`/runs/${started.body.runId}`);
console.log(`   came back with Last-Event-ID ${before.events.at(-1)!.id}: events ${after.events[0].id}-${ids.at(-1)}, each once: ${ids.every((id, i) => id === i + 1)}`);
console.log(`   the text shown equals the run's: ${shown([...before.events, ...after.events]) === run.text}`);

// 2. An approval bound to what the human saw.
const payment = await post('/runs', { agent: 'teller', input: 'Pay Alice 30 euros' });
await follow(payment.body.runId);
const waiting = await get(`/runs/${payment.body.runId}`);
const [pending] = waiting.pendingApprovals;
console.log(`2. ${payment.body.runId} waits: ${pending.toolName}(${JSON.stringify(pending.args)}), digest ${pending.digest.slice(0, 12)}…`);
const forged = await post(`/runs/${payment.body.runId}/decisions`, { decisions: { [pending.toolCallId]: { approved: true, digest: 'for-other-arguments' } } });
console.log(`   a decision with another digest: ${forged.status} ${forged.body.refused}`);
const approved = await post(`/runs/${payment.body.runId}/decisions`, { decisions: { [pending.toolCallId]: { approved: true, digest: pending.digest, args: { to: 'Alice', amount: 25 } } } });
const resumed = await follow(payment.body.runId, waiting.lastEvent);
const paid = await get(`/runs/${payment.body.runId}`);
const [decided] = paid.decisionLog;
console.log(`   approved with an edit: ${approved.status}; the run is ${paid.status}: "${paid.text}" (${resumed.events.length} more events)`);
console.log(`   decision log: ${decided.decision} by ${decided.actor.name} via ${decided.surface}, ${JSON.stringify(decided.args)} -> ${JSON.stringify(decided.editedArgs)}`);
console.log(`   refused decisions kept: ${paid.refusedDecisions.map((r: { reason: string; actor: { id: string } }) => `${r.reason} by ${r.actor.id}`).join(', ')}`);

// 3. Cancel from a second client while the first follows.
const long = await post('/runs', { agent: 'writer', input: 'Another long one' });
const following = follow(long.body.runId);
const cancelled = await post(`/runs/${long.body.runId}/cancel`, {});
const stopped = await following;
const end = stopped.events.at(-1) as unknown as { type: string; stopReason?: string };
console.log(`3. A second client cancelled ${long.body.runId}: ${cancelled.status}; the follower saw ${end.type} (${end.stopReason})`);

if (serving) {
  console.log(`\nServing until Ctrl-C. Try:\n  curl -s -X POST ${base}/runs -H 'authorization: Bearer ${TOKEN}' -H 'content-type: application/json' -d '{"agent":"writer","input":"Hi"}'\n  curl -N ${base}/runs/<runId>/events -H 'authorization: Bearer ${TOKEN}'`);
} else {
  server.close();
  await handler.close();
}
