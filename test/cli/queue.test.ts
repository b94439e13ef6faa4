// `koagent runs approve|deny --queue <postgres url>` and `koagent studio --queue` run as a user
// runs them, against workers on a real PostgreSQL: the answer goes to the queue, a worker runs the
// next segment once, and the CLI's process runs none of the agent's code.
import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult } from '../../src/index.js';
import { koagent as run, koagentStudio, stopped } from '../support/cli.js';
import { useDatabase } from '../support/worker-harness.js';

const koagent = (...args: string[]) => run(args);

const AGENTS = 'test/fixtures/cli-agents.ts';
const WAIT = { timeoutMs: 20_000 };
const setup = useDatabase();

/** The `bank` agent of the CLI fixtures, as a worker runs it: its transfers noted in `sent`. */
function bankOf(sent: { to: string; amount: number }[]) {
  const transfer = defineTool({
    name: 'transfer', description: 'Transfers money', needsApproval: true,
    input: z.object({ to: z.string().min(1), amount: z.number().positive().max(100) }),
    execute: async (args) => (sent.push(args), `sent ${args.amount} to ${args.to}`),
  });
  const said = (content: string, toolCalls?: { id: string; name: string; args: object }[]): GenerateResult => ({ message: { role: 'assistant', content, ...(toolCalls ? { toolCalls } : {}) }, usage: { inputTokens: 3, outputTokens: 2 }, finishReason: toolCalls ? 'tool_calls' : 'stop' });
  return createAgent({
    name: 'bank', tools: [transfer],
    model: { name: 'scripted', generate: async (request) => (request.messages.at(-1)?.role === 'tool' ? said(`Done: ${String(request.messages.at(-1)?.content)}`) : said('', [{ id: 't1', name: 'transfer', args: { to: 'Ada', amount: 80 } }])) },
  });
}

/** A worker on a fresh database running `bank`, and a run of it waiting for its transfer's approval. */
async function bankRunWaiting() {
  const db = await setup();
  const sent: { to: string; amount: number }[] = [];
  await db.worker({ agents: [bankOf(sent)] });
  const client = await db.client();
  const runId = await client.start('bank', 'Pay Ada');
  return { db, sent, client, runId, waiting: await client.wait(runId, WAIT) };
}

describe('runs approve --queue', () => {
  it('queues the resume with the edited arguments: a worker runs the transfer once, with them; a second answer is refused (exit 4)', async () => {
    const { db, sent, client, runId, waiting } = await bankRunWaiting();
    expect(waiting).toMatchObject({ status: 'suspended' });
    const refused = await koagent('runs', 'approve', runId, '--queue', db.url, '--agents', AGENTS, '--args', '{"to":"Ada","amount":500}');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--args do not fit transfer's schema/);
    const first = await koagent('runs', 'approve', runId, '--queue', db.url, '--args', '{"to":"Ada","amount":60}', '--json');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ runId, queued: true, calls: ['t1'] });
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed', text: 'Done: sent 60 to Ada' });
    expect(sent).toEqual([{ to: 'Ada', amount: 60 }]);
    // On the record as given through the CLI (the queue keeps the surface its caller named), by the user running it.
    expect((await client.store.loadRun(runId))!.decisionLog).toEqual([expect.objectContaining({ decision: 'approved', args: { to: 'Ada', amount: 80 }, editedArgs: { to: 'Ada', amount: 60 }, surface: 'cli', actor: { id: userInfo().username } })]);
    const second = await koagent('runs', 'approve', runId, '--queue', db.url);
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(/is completed/);
  }, 90_000);

  it('denies through the queue with a reason, and the tool does not run', async () => {
    const { db, sent, client, runId } = await bankRunWaiting();
    const { code, stdout } = await koagent('runs', 'deny', runId, '--queue', db.url, '--reason', 'Not this month');
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`denied transfer \\(t1\\); run ${runId} is queued`));
    expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed' });
    expect(sent).toEqual([]);
    expect(JSON.stringify((await client.store.loadRun(runId))!.messages)).toContain('Not this month');
  }, 90_000);
});

describe('studio --queue', () => {
  it('sends an approval answered on the studio to the queue: a worker runs the call once, with the edited arguments', async () => {
    const { db, sent, client, runId } = await bankRunWaiting();
    const { child, url } = await koagentStudio(['--queue', db.url, '--agents', AGENTS]);
    try {
      const token = new URL(url).searchParams.get('token')!;
      const answer = (body: object) => fetch(new URL(`/api/runs/${runId}/approvals/t1`, url), { method: 'POST', headers: { 'x-koagent-token': token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const pending = (await (await fetch(new URL('/api/approvals', url), { headers: { 'x-koagent-token': token } })).json()) as { runId: string; canResume: boolean }[];
      expect(pending).toEqual([expect.objectContaining({ runId, canResume: true })]);
      expect((await answer({ approved: true, args: { to: 'Ada', amount: 500 } })).status).toBe(422);
      const queued = await answer({ approved: true, args: { to: 'Ada', amount: 45 } });
      expect(queued.status).toBe(202);
      expect(await queued.json()).toMatchObject({ resumed: true, queued: true, runId });
      expect(await client.wait(runId, WAIT)).toMatchObject({ status: 'completed', text: 'Done: sent 45 to Ada' });
      expect(sent).toEqual([{ to: 'Ada', amount: 45 }]);
      expect((await client.store.loadRun(runId))!.decisionLog).toEqual([expect.objectContaining({ editedArgs: { to: 'Ada', amount: 45 }, surface: 'studio' })]);
      expect((await answer({ approved: true })).status).toBe(409);
    } finally {
      expect(await stopped(child)).toBe(0);
    }
  }, 90_000);
});
