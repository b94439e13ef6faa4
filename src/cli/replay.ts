// `koagent runs fork`, `koagent runs replay` and `koagent runs export --fixture`: a stored run
// forked after a step and continued with its agent's code, replayed through that code without
// its model or tools, or written out as a test fixture.
import type { Agent } from '../agent/agent.js';
import type { RunStore } from '../stores/run-store.js';
import { fixtureOf, fork, formatComparison, replay, type ReplayReport } from '../replay.js';
import type { ForkEdit } from '../features/recording/fork-state.js';
import { agentFor, loadAgents } from './agents.js';
import { CliError, EXIT, parse, type Io } from './io.js';

export const REPLAY_USAGE = `  koagent runs fork    <runId> --store <file|url> --agents <module> --at <step> [--edit <json>] [--adopt] [--json]
  koagent runs replay  <runId> --store <file|url> --agents <module> [--live] [--json]`;

/** What a command does with the store it opened (`runs.ts` opens and closes it). */
export type WithStore = <T>(given: string | undefined, work: (store: RunStore) => Promise<T>) => Promise<T>;

function oneRunId(positionals: readonly string[], what: string): string {
  if (positionals.length !== 1) throw new CliError(EXIT.usage, `${what} takes one run id, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`);
  return positionals[0];
}

/** The agent of the stored run, from `--agents`. */
async function agentOf(store: RunStore, runId: string, module: string | undefined, what: string): Promise<Agent> {
  if (module === undefined) throw new CliError(EXIT.usage, `${what} runs the run's agent's code: give --agents <module> (a module exporting the agents made with createAgent)`);
  const agents = await loadAgents(module);
  const state = await store.loadRun(runId);
  if (state === undefined) throw new CliError(EXIT.notFound, `no run ${runId} in the store`);
  return agentFor(agents, state.agentName) as unknown as Agent;
}

/** A refusal of fork or replay (a run not recorded, no such step, another agent's run) as exit code 4; anything else as it is. */
function refused(runId: string, what: string, error: unknown): never {
  const e = error as { code?: string; message?: string };
  if (error instanceof TypeError || e.code === 'invalid_resume') throw new CliError(EXIT.refused, `run ${runId} was not ${what}: ${e.message}`);
  throw error;
}

function editFlag(text: string | undefined): ForkEdit | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as ForkEdit;
  } catch (error) {
    throw new CliError(EXIT.usage, `--edit must be JSON, such as '{"toolResults":{"call_1":"No such order"}}' or '{"messages":{"0":{"role":"user","content":"…"}}}': ${(error as Error).message}`);
  }
}

/** `koagent runs fork`: a new run from the stored one after step `--at`, continued with the agent's model and tools. */
export async function forkCommand(argv: readonly string[], io: Io, withStore: WithStore): Promise<number> {
  const { values, positionals } = parse(argv, { store: { type: 'string' }, agents: { type: 'string' }, at: { type: 'string' }, edit: { type: 'string' }, adopt: { type: 'boolean' }, json: { type: 'boolean' } });
  const runId = oneRunId(positionals, 'fork');
  const atStep = Number(values.at);
  if (values.at === undefined || !Number.isInteger(atStep) || atStep < 0) throw new CliError(EXIT.usage, `fork needs --at <step>, a whole number ≥ 0 (the step after which the fork takes the run; 0: before the first model turn)${values.at === undefined ? '' : `, got ${values.at}`}`);
  const edit = editFlag(values.edit);
  return withStore(values.store, async (store) => {
    const agent = await agentOf(store, runId, values.agents, 'fork');
    const result = await fork(agent, runId, { atStep, store, ...(edit === undefined ? {} : { edit }), ...(values.adopt === true ? { adopt: true } : {}) }).catch((error: unknown) => refused(runId, 'forked', error));
    const row = { runId: result.runId, forkedFrom: result.state.forkedFrom, status: result.status, stopReason: result.stopReason, text: result.text };
    io.out(values.json === true ? JSON.stringify(row, null, 2) : `forked ${runId} after step ${atStep}: run ${result.runId} is ${result.status}${result.stopReason === undefined ? '' : ` (${result.stopReason})`}${result.text ? `: ${result.text}` : ''}`);
    return EXIT.ok;
  });
}

function headline(report: ReplayReport): string {
  const from = `${report.answered.models} model repl${report.answered.models === 1 ? 'y' : 'ies'} and ${report.answered.tools} tool result${report.answered.tools === 1 ? '' : 's'} from the record`;
  if (report.same) return `replay of ${report.runId}: the same as stored (${from}; the model and the tools were not called)`;
  const lines: string[] = [];
  const d = report.divergence;
  if (d !== undefined) {
    lines.push(`replay of ${report.runId}: diverged at ${d.kind} ${d.name} (${d.id}, step ${d.step}): ${d.reason}`);
    for (const change of d.changes ?? []) lines.push(`  ${change.path}: ${JSON.stringify(change.before) ?? '∅'} → ${JSON.stringify(change.after) ?? '∅'}`);
  } else lines.push(`replay of ${report.runId}: it asked what the stored run asked, but ${report.sameTranscript ? 'its layers did other things' : 'it ended with another transcript'}`);
  if (report.wentLive) lines.push(`went on live from there: ${report.live.models} model call${report.live.models === 1 ? '' : 's'}, ${report.live.tools} tool call${report.live.tools === 1 ? '' : 's'}; ended ${report.status}`);
  lines.push(`(${from})`);
  return lines.join('\n');
}

/** `koagent runs replay`: the stored run through its agent's layers as they are now, side by side with the stored trace. Exit 1 when they differ. */
export async function replayCommand(argv: readonly string[], io: Io, withStore: WithStore): Promise<number> {
  const { values, positionals } = parse(argv, { store: { type: 'string' }, agents: { type: 'string' }, live: { type: 'boolean' }, json: { type: 'boolean' } });
  const runId = oneRunId(positionals, 'replay');
  return withStore(values.store, async (store) => {
    const agent = await agentOf(store, runId, values.agents, 'replay');
    const report = await replay(agent, runId, { store, ...(values.live === true ? { live: true } : {}) }).catch((error: unknown) => refused(runId, 'replayed', error));
    if (values.json === true) {
      const { state: _state, storedTrace: _then, trace: _now, ...rest } = report;
      io.out(JSON.stringify(rest, null, 2));
    } else io.out(`${headline(report)}\n\n${formatComparison(report.comparison)}`);
    return report.same ? EXIT.ok : EXIT.failure;
  });
}

/** `koagent runs export --fixture`: the run as a test fixture (JSON). */
export async function fixtureExport(store: RunStore, runId: string, io: Io): Promise<number> {
  const state = await store.loadRun(runId);
  if (state === undefined) throw new CliError(EXIT.notFound, `no run ${runId} in the store`);
  let fixture: ReturnType<typeof fixtureOf>;
  try {
    fixture = fixtureOf(state);
  } catch (error) {
    refused(runId, 'exported as a fixture', error);
  }
  io.out(JSON.stringify(fixture, null, 2));
  return EXIT.ok;
}
