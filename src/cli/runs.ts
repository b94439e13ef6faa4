// `koagent runs …`: list, show, export and delete a store's runs, and answer or recover them
// through the agents' own API (resume, recover), so the store decides that each goes ahead once.
import type { PendingApproval, RunState, RunStatus } from '../core/vocabulary/state.js';
import type { RunStore, RunSummary } from '../stores/run-store.js';
import { traceToOtlp } from '../features/layer-trace/otlp.js';
import { agentFor, loadAgents, type CliAgent } from './agents.js';
import { decisionsFor, type DecisionFlags } from './decisions.js';
import { runTable, showRun } from './format.js';
import { CliError, EXIT, parse, type Io } from './io.js';
import { openQueue, openStore } from './stores.js';
import { fixtureExport, forkCommand, replayCommand, REPLAY_USAGE } from './replay.js';

export const RUNS_USAGE = `  koagent runs ls      --store <file|url> [--agent <name>] [--status <s>[,<s>]] [--session <id>] [--grep <text>] [--limit <n>] [--json]
  koagent runs show    <runId> --store <file|url> [--json]
  koagent runs export  <runId> --store <file|url> [--otlp | --fixture]
${REPLAY_USAGE}
  koagent runs approve <runId> --store <file|url> --agents <module> [--call <toolCallId>] [--args <json>] [--reason <text>] [--actor <who>] [--json]
  koagent runs approve <runId> --queue <postgres url> [--agents <module>] [--call <toolCallId>] [--args <json>] [--actor <who>] [--json]
  koagent runs deny    <runId> --store <file|url> --agents <module> --reason <text> [--call <toolCallId>] [--actor <who>] [--json]
  koagent runs deny    <runId> --queue <postgres url> --reason <text> [--call <toolCallId>] [--actor <who>] [--json]
  koagent runs recover [<runId>] --store <file|url> --agents <module> [--json]
  koagent runs delete  <runId> --store <file|url> [--json]`;

const STATUSES: readonly RunStatus[] = ['running', 'suspended', 'completed', 'failed'];
const COMMON = { store: { type: 'string' }, json: { type: 'boolean' } } as const;

/** Run `koagent runs <subcommand> …`. */
export async function runsCommand(argv: readonly string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  const command = sub === undefined ? undefined : COMMANDS[sub];
  if (command === undefined) throw new CliError(EXIT.usage, `${sub === undefined ? 'give a subcommand' : `unknown subcommand "${sub}"`}:\n${RUNS_USAGE}`);
  return command(rest, io);
}

type Command = (argv: readonly string[], io: Io) => Promise<number>;

/** Open the store, run `work` with it, and close it whatever happens. */
async function withStore<T>(given: string | undefined, work: (store: RunStore) => Promise<T>): Promise<T> {
  const store = await openStore(given);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

function oneRunId(positionals: readonly string[], what: string): string {
  if (positionals.length !== 1) throw new CliError(EXIT.usage, `${what} takes one run id, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`);
  return positionals[0];
}

async function loaded(store: RunStore, runId: string): Promise<RunState> {
  const state = await store.loadRun(runId);
  if (state === undefined) throw new CliError(EXIT.notFound, `no run ${runId} in the store`);
  return state;
}

const COMMANDS: Record<string, Command> = {
  async ls(argv, io) {
    const { values, positionals } = parse(argv, { ...COMMON, agent: { type: 'string' }, status: { type: 'string' }, session: { type: 'string' }, grep: { type: 'string' }, limit: { type: 'string' } });
    if (positionals.length > 0) throw new CliError(EXIT.usage, `ls takes no arguments but flags, got ${positionals.join(' ')}`);
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new CliError(EXIT.usage, `--limit must be a whole number ≥ 1, got ${values.limit}`);
    const status = values.status?.split(',').map((s) => s.trim());
    const wrong = status?.find((s) => !STATUSES.includes(s as RunStatus));
    if (wrong !== undefined) throw new CliError(EXIT.usage, `--status ${wrong} is not a run status; use ${STATUSES.join(', ')} (or several, comma-separated)`);
    return withStore(values.store, async (store) => {
      let runs = await store.listRuns({ agentName: values.agent, sessionId: values.session, status: status as RunStatus[] | undefined, limit: values.grep === undefined ? limit : Math.max(limit, 1000) });
      if (values.grep !== undefined) runs = (await grepRuns(store, runs, values.grep)).slice(0, limit);
      io.out(values.json === true ? JSON.stringify(runs, null, 2) : runTable(runs));
      return EXIT.ok;
    });
  },

  async show(argv, io) {
    const { values, positionals } = parse(argv, COMMON);
    const runId = oneRunId(positionals, 'show');
    return withStore(values.store, async (store) => {
      const state = await loaded(store, runId);
      io.out(values.json === true ? JSON.stringify(state, null, 2) : showRun(state));
      return EXIT.ok;
    });
  },

  async export(argv, io) {
    const { values, positionals } = parse(argv, { store: COMMON.store, otlp: { type: 'boolean' }, fixture: { type: 'boolean' } });
    const runId = oneRunId(positionals, 'export');
    if (values.otlp === true && values.fixture === true) throw new CliError(EXIT.usage, 'export takes --otlp or --fixture, not both');
    return withStore(values.store, async (store) => {
      if (values.fixture === true) return fixtureExport(store, runId, io);
      const state = await loaded(store, runId);
      io.out(JSON.stringify(values.otlp === true ? traceToOtlp(state) : state, null, 2));
      return EXIT.ok;
    });
  },

  async delete(argv, io) {
    const { values, positionals } = parse(argv, COMMON);
    const runId = oneRunId(positionals, 'delete');
    return withStore(values.store, async (store) => {
      let deleted: boolean;
      try {
        deleted = await store.deleteRun(runId);
      } catch (error) {
        throw new CliError(EXIT.refused, `run ${runId} was not deleted: ${(error as Error).message}`);
      }
      if (!deleted) throw new CliError(EXIT.notFound, `no run ${runId} in the store`);
      io.out(values.json === true ? JSON.stringify({ runId, deleted: true }) : `deleted ${runId}`);
      return EXIT.ok;
    });
  },

  fork: (argv, io) => forkCommand(argv, io, withStore),
  replay: (argv, io) => replayCommand(argv, io, withStore),
  approve: (argv, io) => decide(argv, io, true),
  deny: (argv, io) => decide(argv, io, false),

  async recover(argv, io) {
    const { values, positionals } = parse(argv, { ...COMMON, agents: { type: 'string' } });
    if (positionals.length > 1) throw new CliError(EXIT.usage, `recover takes at most one run id, got ${positionals.join(' ')}`);
    const agents = await agentsFrom(values.agents, 'recover');
    const runId = positionals[0];
    return withStore(values.store, async (store) => {
      let targets: readonly CliAgent[] = agents;
      if (runId !== undefined) {
        const state = await loaded(store, runId);
        if (state.status !== 'running') throw new CliError(EXIT.refused, `run ${runId} is ${state.status}, not running: only a run whose worker died is recovered`);
        targets = [agentFor(agents, state.agentName)];
      }
      const recovered: { runId: string; status?: string; error?: string }[] = [];
      for (const agent of targets) {
        const runs = await agent.runs.recover({ store, ...(runId !== undefined ? { runId } : {}) });
        for (const run of runs) recovered.push(recoveredRow(run));
      }
      if (runId !== undefined && recovered.length === 0) throw new CliError(EXIT.refused, `run ${runId} was not recovered: its lease has not expired (its worker may be alive), or another process took it`);
      io.out(values.json === true ? JSON.stringify(recovered, null, 2) : recovered.length === 0 ? 'nothing to recover' : recovered.map((r) => `recovered ${r.runId}: ${r.status ?? `failed (${r.error})`}`).join('\n'));
      return recovered.some((r) => r.error !== undefined) ? EXIT.failure : EXIT.ok;
    });
  },
};

function recoveredRow(run: unknown): { runId: string; status?: string; error?: string } {
  const r = run as { runId?: string; result?: { status: string; runId: string }; error?: { message?: string }; state?: { runId: string } };
  const runId = r.runId ?? r.result?.runId ?? r.state?.runId ?? '?';
  return r.result !== undefined ? { runId, status: r.result.status } : { runId, error: r.error?.message ?? 'failed' };
}

async function agentsFrom(module: string | undefined, command: string): Promise<CliAgent[]> {
  if (module === undefined) throw new CliError(EXIT.usage, `${command} resumes the run with its agent's code: give --agents <module> (a module exporting the agents made with createAgent)`);
  return loadAgents(module);
}

/** `approve` and `deny`: the run's pending approvals (or one) answered, and the run resumed once, through the store or the worker queue. */
async function decide(argv: readonly string[], io: Io, approved: boolean): Promise<number> {
  const what = approved ? 'approve' : 'deny';
  const { values, positionals } = parse(argv, { ...COMMON, agents: { type: 'string' }, call: { type: 'string' }, reason: { type: 'string' }, args: { type: 'string' }, queue: { type: 'string' }, actor: { type: 'string' } });
  const runId = oneRunId(positionals, what);
  if (!approved && (values.reason === undefined || values.reason.trim() === '')) throw new CliError(EXIT.usage, 'deny needs --reason "<why>": the model reads it');
  if (!approved && values.args !== undefined) throw new CliError(EXIT.usage, '--args goes with approve: a denied call runs with no arguments');
  const flags = { approved, reason: values.reason, args: values.args, actor: values.actor };
  if (values.queue !== undefined) return decideOnQueue(runId, values, flags, io);
  const agents = await agentsFrom(values.agents, what);
  return withStore(values.store, async (store) => {
    const state = await loaded(store, runId);
    const pending = pendingOf(state, values.call);
    const agent = agentFor(agents, state.agentName);
    const decisions = decisionsFor(pending, flags, agent);
    let result: Awaited<ReturnType<CliAgent['resume']>>;
    try {
      result = await agent.resume(runId, decisions, { store });
    } catch (error) {
      const e = error as { code?: string; message?: string };
      if (e.code === 'invalid_resume') throw new CliError(EXIT.refused, `run ${runId} was not resumed: ${e.message}`);
      throw error;
    }
    const row = { runId, status: result.status, stopReason: result.stopReason, text: result.text, pendingApprovals: result.pendingApprovals };
    io.out(values.json === true ? JSON.stringify(row, null, 2) : `${answered(approved, pending, flags)}; run ${runId} is ${result.status}${result.stopReason === undefined ? '' : ` (${result.stopReason})`}${result.text ? `: ${result.text}` : ''}`);
    return EXIT.ok;
  });
}

/** The pending calls a decision answers: all of the run's, or the one `--call` names. */
function pendingOf(state: RunState, call: string | undefined): PendingApproval[] {
  if (state.status !== 'suspended') throw new CliError(EXIT.refused, `run ${state.runId} is ${state.status}: only a suspended run waits for a decision`);
  const pending = call === undefined ? state.pendingApprovals : state.pendingApprovals.filter((p) => p.toolCallId === call);
  if (pending.length === 0) throw new CliError(EXIT.notFound, `run ${state.runId} has no pending approval ${call}; it waits for ${state.pendingApprovals.map((p) => p.toolCallId).join(', ')}`);
  return pending;
}

function answered(approved: boolean, pending: readonly PendingApproval[], flags: DecisionFlags): string {
  return `${approved ? (flags.args === undefined ? 'approved' : 'approved with edited arguments') : 'denied'} ${pending.map((p) => `${p.toolName} (${p.toolCallId})`).join(', ')}`;
}

/**
 * `--queue <postgres url>`: the answer goes to the workers' queue (`client.answer`), and a free
 * worker runs the next segment, exactly once; this process runs none of the agent's code, so
 * `--agents` is needed only to check edited arguments against the tool's schema.
 */
async function decideOnQueue(runId: string, values: { store?: string; agents?: string; call?: string; queue?: string; json?: boolean }, flags: DecisionFlags, io: Io): Promise<number> {
  const agents = values.agents === undefined ? undefined : await loadAgents(values.agents);
  const client = await openQueue(values.queue!, values.store);
  try {
    const state = await loaded(client.store, runId);
    const pending = pendingOf(state, values.call);
    const agent = agents?.find((a) => a.name === state.agentName);
    const decisions = decisionsFor(pending, flags, agent);
    try {
      await client.answer(runId, decisions);
    } catch (error) {
      if (error instanceof TypeError) throw new CliError(EXIT.refused, `run ${runId} was not resumed: ${error.message}`);
      throw error;
    }
    io.out(values.json === true ? JSON.stringify({ runId, queued: true, calls: Object.keys(decisions) }, null, 2) : `${answered(flags.approved, pending, flags)}; run ${runId} is queued: a worker runs its next segment`);
    return EXIT.ok;
  } finally {
    await client.close();
  }
}

/** The runs among `runs` whose id, session, error or transcript holds `text` (case-insensitive). */
async function grepRuns(store: RunStore, runs: readonly RunSummary[], text: string): Promise<RunSummary[]> {
  const needle = text.toLowerCase();
  const found: RunSummary[] = [];
  for (const run of runs) {
    const head = `${run.runId} ${run.sessionId} ${run.agentName} ${run.error?.message ?? ''}`.toLowerCase();
    if (head.includes(needle)) found.push(run);
    else {
      const state = await store.loadRun(run.runId).catch(() => undefined);
      if (state !== undefined && JSON.stringify(state.messages).toLowerCase().includes(needle)) found.push(run);
    }
  }
  return found;
}
