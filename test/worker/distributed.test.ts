// The distributed test of koagent/worker: real worker processes on one PostgreSQL, 200 runs
// (some waiting for approval, answered by the client while the others run), two workers
// SIGKILLed mid-way, a new one started, and a version-2 worker deployed beside the version-1
// ones. Nobody calls recover(): the workers take the dead ones' runs over by themselves.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RunReport, type WorkerClient } from '../../src/worker.js';
import { startPostgres, type TestPostgres } from '../support/postgres-server.js';
import { until } from '../support/waits.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/worker-process.ts');
const RUNS = 200;
const REFUNDS = 20;
const TOOL_MS = 40;

let server: TestPostgres;
const children: ChildProcess[] = [];
beforeAll(async () => void (server = await startPostgres()), 60_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await server?.stop();
});

/** A worker process at `version`; resolves once it takes jobs. Its connections carry its id as their application_name. */
function startWorker(url: string, version: string, id: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, `${url}?application_name=${id}`, version, id, String(TOOL_MS)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let errors = '';
  child.stderr!.on('data', (chunk) => (errors += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`worker ${id} exited (${code}) before it was ready: ${errors}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('many worker processes on one PostgreSQL', () => {
  it('completes every run once through kills and a deploy, without a recover() call', async () => {
    const url = await server.database();
    const pool = new pg.Pool({ connectionString: url });
    pool.on('error', () => undefined);
    // `seq` orders the executions: no clock of any process is compared.
    await pool.query('CREATE TABLE test_executions (seq bigserial PRIMARY KEY, key text NOT NULL, run_id text NOT NULL, tool text NOT NULL, worker text NOT NULL, version text NOT NULL)');
    await pool.query('CREATE TABLE test_effects (key text PRIMARY KEY, run_id text NOT NULL, tool text NOT NULL)');
    const client = await createClient({ connectionString: url });
    try {
      await scenario(url, pool, client);
    } finally {
      await client.close();
      await pool.end();
    }
  }, 120_000);
});

async function scenario(url: string, pool: pg.Pool, client: WorkerClient): Promise<void> {
    const workers = await Promise.all(['w1', 'w2', 'w3', 'w4'].map((id) => startWorker(url, '1', id)));

    // Each run followed as soon as it is started: a run that suspends is answered (once; a second
    // answer is refused) while the others run, and followed on to its end.
    const ids: string[] = [];
    const answered = new Map<string, number>();
    const refusedTwice: string[] = [];
    const completions: Promise<RunReport>[] = [];
    let completed = 0;
    let fortyCompleted!: () => void;
    const forty = new Promise<void>((resolve) => (fortyCompleted = resolve));
    const start = async (i: number) => {
      const runId = await client.start('teller', i % 10 === 0 ? `please refund order ${i}` : `record order ${i}`, { idempotencyKey: `order-${i}`, tenant: `t${i % 3}` });
      ids.push(runId);
      completions.push(completion(client, runId, answered, refusedTwice).then((report) => {
        if (report.status === 'completed' && ++completed === 40) fortyCompleted();
        return report;
      }));
    };

    // The first wave: 150 runs, one in ten asking for a refund (which needs approval).
    for (let i = 0; i < 150; i++) await start(i);
    // A retried request starts no second run.
    expect(await client.start('teller', 'record order 1', { idempotencyKey: 'order-1' })).toBe(ids[1]);

    // Mid-way: two workers die with runs in their hands.
    await forty;
    const { rows: held } = await pool.query("SELECT run_id FROM koagent_dispatch WHERE state = 'active' AND worker IN ('w1', 'w2')");
    const beforeKill = await lastExecution(pool);
    await Promise.all([killed(workers[0]), killed(workers[1])]);
    // Once the server has closed the dead workers' connections, nothing more of theirs can land.
    await until(async () => (await pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name IN ('w1', 'w2')")).rows[0].n === 0, "the killed workers' connections to close");
    const afterDeath = await lastExecution(pool);
    // A new worker, and the deploy: version 2 beside the version-1 ones; then the second wave.
    await Promise.all([startWorker(url, '1', 'w5'), startWorker(url, '2', 'w6')]);
    for (let i = 150; i < RUNS; i++) await start(i);

    const reports = await Promise.all(completions);

    // Every run completed, none lost, none dead.
    expect(reports.filter((r) => r.status !== 'completed').map((r) => `${r.runId}: ${r.status} ${r.error?.message ?? ''}`)).toEqual([]);
    expect(new Set(ids).size).toBe(RUNS);
    expect(Number((await pool.query('SELECT count(*) FROM koagent_dispatch')).rows[0].count)).toBe(RUNS);

    // Every effect exactly once: five steps per run, a refund per refund run.
    const effects = await pool.query('SELECT run_id, tool, count(*)::int AS n FROM test_effects GROUP BY run_id, tool');
    const effectsOf = (runId: string, tool: string) => effects.rows.find((r) => r.run_id === runId && r.tool === tool)?.n ?? 0;
    for (const [i, runId] of ids.entries()) {
      expect(effectsOf(runId, 'record'), runId).toBe(5);
      if (i % 10 === 0) expect(effectsOf(runId, 'refund'), runId).toBeLessThanOrEqual(1);
    }
    // A refund (not idempotent) is never executed twice; a record step only when its worker died while it ran, and then by another worker.
    const executions = await pool.query('SELECT key, tool, array_agg(worker ORDER BY seq) AS workers, array_agg(seq ORDER BY seq) AS seqs FROM test_executions GROUP BY key, tool HAVING count(*) > 1');
    expect(executions.rows.filter((r) => r.tool === 'refund')).toEqual([]);
    for (const row of executions.rows) {
      expect(['w1', 'w2']).toContain(row.workers[0]);
      expect(row.workers.slice(1).every((w: string) => !['w1', 'w2'].includes(w))).toBe(true);
      expect(Number(row.seqs[1])).toBeGreaterThan(beforeKill);
    }
    expect(executions.rows.length).toBeLessThanOrEqual(2 * 4);

    // Every approval answered once, a second answer refused, and one resume per run ran its segment
    // (a resume job whose worker died before the segment started was sent again: it may have two).
    const refundRuns = ids.filter((_, i) => i % 10 === 0);
    expect(refundRuns.length).toBe(REFUNDS);
    for (const runId of refundRuns) expect(answered.get(runId), runId).toBe(1);
    expect(refusedTwice.sort()).toEqual([...refundRuns].sort());
    const { rows: resumes } = await pool.query(
      "SELECT data->>'runId' AS run_id, count(*)::int AS jobs, count(*) FILTER (WHERE output->>'outcome' = 'ran')::int AS ran FROM pgboss.job WHERE data->>'kind' = 'resume' GROUP BY 1",
    );
    expect(resumes.map((r) => r.run_id).sort()).toEqual([...refundRuns].sort());
    // A resume whose worker was killed in the middle of its segment ran none to its end: the
    // recovery that took the run over finished it (and the run completed once, checked above).
    const { rows: recovered } = await pool.query("SELECT DISTINCT data->>'runId' AS run_id FROM pgboss.job WHERE data->>'kind' = 'recover' AND output->>'outcome' = 'ran'");
    const takenOver = new Set([...recovered, ...held].map((r) => r.run_id as string));
    for (const row of resumes) expect([row.run_id, row.ran === 1 || (row.ran === 0 && takenOver.has(row.run_id))]).toEqual([row.run_id, true]);

    // The dead workers' runs were taken over (nobody called recover()): claimed again in the store
    // by a live worker (a run its dying worker had just finished was only settled from the store).
    expect(held.length).toBeGreaterThan(0);
    const { rows: claims } = await pool.query('SELECT run_id, lease_token FROM koagent_runs WHERE run_id = ANY($1)', [held.map((r) => r.run_id)]);
    expect(claims.filter((r) => Number(r.lease_token) > 1).length).toBeGreaterThan(0);
    const { rows: ghosts } = await pool.query("SELECT count(*)::int AS n FROM test_executions WHERE worker IN ('w1', 'w2') AND seq > $1", [afterDeath]);
    expect(ghosts[0].n).toBe(0);

    // No run changed version: every execution of a run ran on its version, and version 2 took new runs.
    const { rows: versions } = await pool.query('SELECT e.run_id, array_agg(DISTINCT e.version) AS versions, d.version FROM test_executions e JOIN koagent_dispatch d USING (run_id) GROUP BY e.run_id, d.version');
    for (const row of versions) expect(row.versions, row.run_id).toEqual([row.version]);
    expect(reports.some((r) => r.version === '2')).toBe(true);
}

/** The run's report once it is over: a suspended run is answered (and answered again, which is refused), then waited for again. */
async function completion(client: WorkerClient, runId: string, answered: Map<string, number>, refusedTwice: string[]): Promise<RunReport> {
  for (;;) {
    const report = await client.wait(runId, { timeoutMs: 60_000 }).catch(async (error) => {
      const db = (client as any).db;
      console.log(JSON.stringify({
        dispatch: (await db.query('SELECT * FROM koagent_dispatch WHERE run_id = $1', [runId])).rows,
        run: (await db.query('SELECT status, segment, lease_owner, lease_token, lease_expires, (extract(epoch from clock_timestamp()) * 1000)::bigint AS now FROM koagent_runs WHERE run_id = $1', [runId])).rows,
        calls: (await db.query('SELECT call_id, entry FROM koagent_calls WHERE run_id = $1', [runId])).rows,
        jobs: (await db.query("SELECT name, state, retry_count, output, started_on, completed_on FROM pgboss.job WHERE data->>'runId' = $1", [runId])).rows,
      }, null, 1));
      throw error;
    });
    if (report.status !== 'suspended') return report;
    const decisions = Object.fromEntries(report.pendingApprovals!.map((call) => [call.toolCallId, true]));
    await client.answer(runId, decisions);
    answered.set(runId, (answered.get(runId) ?? 0) + 1);
    await client.answer(runId, decisions).catch(() => refusedTwice.push(runId));
  }
}

/** The last execution's place in the log (0 before the first). */
async function lastExecution(pool: pg.Pool): Promise<number> {
  return Number((await pool.query('SELECT coalesce(max(seq), 0) AS last FROM test_executions')).rows[0].last);
}
