// npx tsx examples/fork.ts
// From production back to development, offline. A refund agent runs on a SQLite file and goes
// wrong: the order lookup gave back the wrong amount, so the agent refunded too much. Then:
//  1. fork the run after the lookup with the lookup's result corrected: the fork refunds the
//     right amount, and the lookup (done before the fork point) does not run again;
//  2. replay the stored run with a guard layer added: no model call, no tool run, and the
//     replay stops where the guard changes a call, the two layer traces side by side;
//  3. export the run as a fixture and play it back on mockModel: a regression test.
// The model reads the transcript and answers from it, so every fork gets the reply for where it stands.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type Middleware, type ModelProvider } from 'koagent';
import { compareTraces, fixtureOf, fixtureTools, fork, formatComparison, playFixture, replay } from 'koagent/replay';
import { sqliteStore } from 'koagent/sqlite';
import { mockModel } from 'koagent/testing';
import { traceOf } from 'koagent/trace';

/** Look the order up, then refund what the lookup said, then say so. */
const refundModel: ModelProvider = {
  name: 'refund-model',
  async generate({ messages }): Promise<GenerateResult> {
    const results = messages.filter((m) => m.role === 'tool');
    const usage = { inputTokens: 30, outputTokens: 10 };
    const call = (id: string, name: string, args: Record<string, unknown>): GenerateResult => ({ message: { role: 'assistant', content: '', toolCalls: [{ id, name, args }] }, usage, finishReason: 'tool_calls' });
    if (results.length === 0) return call('lookup_1', 'lookup_order', { order: 'A-17' });
    if (results.length === 1) return call('refund_1', 'refund', { order: 'A-17', amount: (JSON.parse(String(results[0].content)) as { total: number }).total });
    return { message: { role: 'assistant', content: `Done: ${String(results[1].content)}` }, usage, finishReason: 'stop' };
  },
};

/** The agent; its tools note each effect in `effects` (the lookup gives back a wrong total, as in the incident). */
function refundAgent(effects: string, store: ReturnType<typeof sqliteStore>) {
  const lookupOrder = defineTool({
    name: 'lookup_order', description: 'Looks an order up', input: z.object({ order: z.string() }),
    execute: ({ order }) => (appendFileSync(effects, `lookup ${order}\n`), { order, total: 420 }),
  });
  const refund = defineTool({
    name: 'refund', description: 'Refunds an order', input: z.object({ order: z.string(), amount: z.number() }),
    execute: ({ order, amount }) => (appendFileSync(effects, `refund ${amount} on ${order}\n`), `refunded ${amount} on ${order}`),
  });
  const agent = createAgent({ name: 'refunds', instructions: 'Refund what the order cost.', model: refundModel, tools: [lookupOrder, refund], store, layerTrace: true });
  return { agent, tools: [lookupOrder, refund] };
}

export async function main(print: (line: string) => void = console.log) {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-fork-example-'));
  const effects = join(dir, 'effects.log');
  const noted = () => readFileSync(effects, 'utf8').split('\n').filter(Boolean);
  const store = sqliteStore({ path: join(dir, 'runs.db') });
  try {
    const { agent, tools } = refundAgent(effects, store);
    const incident = await agent.run('Refund order A-17');
    print(`the incident: ${incident.text}   effects: ${noted().join(', ')}`);

    // 1. Time travel: after step 1 (the lookup), with the lookup's result as it should have been.
    const forked = await fork(agent, incident.runId, { atStep: 1, edit: { toolResults: { lookup_1: '{"order":"A-17","total":42}' } } });
    print(`\nthe fork (${forked.runId}, from ${forked.state.forkedFrom?.runId} after step ${forked.state.forkedFrom?.step}): ${forked.text}`);
    print(`effects now: ${noted().join(', ')}   (the lookup did not run again)`);

    // 2. What would a guard have done? Replay the incident with it: no model, no tool.
    const capRefunds: Middleware = { name: 'cap-refunds', tool: (ctx, next) => { if (ctx.toolName === 'refund') ctx.args = { ...ctx.args, amount: Math.min(Number(ctx.args.amount), 100) }; return next(); } };
    const report = await replay(agent, incident.runId, { layers: [capRefunds] });
    const d = report.divergence!;
    print(`\nreplay with cap-refunds: ${report.same ? 'the same' : `diverged at ${d.kind} ${d.name} (${d.id}, step ${d.step}): ${d.reason}`}; model and tools asked live: ${report.live.models + report.live.tools}`);
    print(formatComparison(report.comparison));

    // 3. The incident as a regression test: its fixture played back on mockModel, offline.
    const fixture = fixtureOf((await store.loadRun(incident.runId))!);
    const test = createAgent({ name: 'refunds', instructions: fixture.instructions, model: mockModel(fixture.replies), tools: fixtureTools(fixture, tools), layerTrace: true });
    const played = await playFixture(test, fixture);
    const sameTranscript = JSON.stringify(played.messages) === JSON.stringify(fixture.messages);
    const sameTrace = compareTraces(fixture.trace!, traceOf(played.state)!).same;
    print(`\nthe fixture played back: the same transcript: ${sameTranscript}, the same layer trace: ${sameTrace}; effects: ${noted().length} (no tool ran)`);
    return { incident: incident.text, fork: forked.text, forkedFrom: forked.state.forkedFrom, effects: noted(), divergence: d, sameTranscript, sameTrace };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
