// The studio's routes for taking runs back into development: a run's lineage (where a fork came
// from, the forks made from it, the steps it can be forked after), a fork made from the page, a
// replay of a stored run through the agent's layers as they are now (the two layer traces side by
// side), and the evaluations kept in the store. A fork runs the agent, and a replay runs its
// layers: both are POSTs, under the same token, Host, Origin and JSON checks as every change.
import type { Agent } from '../agent/agent.js';
import { KoagentError, RunFailedError, type RunState } from '../api.js';
import { storedReports } from '../evals/report.js';
import type { ComparedCall, ComparedLayer, LayerSummary } from '../features/recording/compare.js';
import { forkSteps } from '../features/recording/fork-state.js';
import { replayRecordOf } from '../features/recording/record.js';
import { effectText } from '../features/layer-trace/format.js';
import { fork } from '../replay/fork.js';
import { replay } from '../replay/replay.js';
import type { RunStore } from '../stores/run-store.js';
import type { RunCatalog } from './catalog.js';
import { HttpError } from './guards.js';

/** What the routes need of the studio: its store, its list of runs, the agents it was given, and how it reads a body and answers. */
export interface LabHost {
  store: RunStore;
  catalog: RunCatalog;
  agents: readonly Agent<any, any>[];
  body(): Promise<unknown>;
  send(status: number, value: unknown): void;
  /** Keep `work` until it settles: the studio's `close` waits for the forks and replays it started. */
  track<T>(work: Promise<T>): Promise<T>;
}

/**
 * The forks and replays a studio started, so that closing it waits for them: a fork writes its
 * run to the store, and a studio closed under it must not leave that run half written.
 *
 * @example const work = new LabWork(); await work.track(fork(agent, runId, { atStep })); await work.close();
 */
export class LabWork {
  readonly #running = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const settled = () => void this.#running.delete(work);
    work.then(settled, settled);
    return work;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#running]);
  }
}

/** One layer of a call, then and now, as the replay view draws it: what it did on each side in a few words. */
export interface LayerView {
  name: string;
  source: string;
  depth: number;
  same: boolean;
  then: string | null;
  now: string | null;
}

/** One call of a replay, then and now, with its layers. */
export interface CallView {
  kind: 'model' | 'tool';
  id: string;
  name: string;
  step: number;
  same: boolean;
  then: string | null;
  now: string | null;
  layers: LayerView[];
}

const EVALUATIONS_LIMIT = 50;

/**
 * Answer the request if it is one of these routes (`parts` is the path after `/api`, split);
 * false when it is not.
 *
 * @example if (await labRoute(host, 'POST', ['runs', id, 'fork'])) return;
 */
export async function labRoute(host: LabHost, method: string, parts: readonly string[]): Promise<boolean> {
  const [resource, id, sub] = parts;
  if (method === 'GET' && resource === 'evaluations' && parts.length === 1) {
    const keyValues = host.store.keyValues;
    host.send(200, keyValues === undefined ? [] : await storedReports(keyValues, EVALUATIONS_LIMIT));
    return true;
  }
  if (resource !== 'runs' || id === undefined || parts.length !== 3) return false;
  if (method === 'GET' && sub === 'lineage') {
    host.send(200, await lineage(host, await loaded(host.store, id)));
    return true;
  }
  if (method === 'POST' && sub === 'fork') {
    const atStep = ((await host.body()) as { atStep?: unknown } | null)?.atStep;
    if (typeof atStep !== 'number' || !Number.isInteger(atStep) || atStep < 0) throw new HttpError(400, 'a fork needs { "atStep": n }, n one of the steps the run can be forked after');
    const state = await loaded(host.store, id);
    const agent = agentOf(host, state);
    // A fork whose run then failed was made all the same: the page opens it, with its error.
    const made = await answered(() => host.track(fork(agent, id, { atStep, store: host.store })).catch((error: unknown) => {
      if (error instanceof RunFailedError && error.state.forkedFrom?.runId === id) return error.state;
      throw error;
    }));
    const result = 'state' in made ? made.state : made;
    host.send(200, { runId: result.runId, status: result.status, forkedFrom: { runId: id, step: atStep } });
    return true;
  }
  if (method === 'POST' && sub === 'replay') {
    const state = await loaded(host.store, id);
    const report = await answered(() => host.track(replay(agentOf(host, state), id, { store: host.store })));
    host.send(200, {
      runId: id, agentName: state.agentName, same: report.same, sameTranscript: report.sameTranscript, status: report.status,
      ...(report.divergence === undefined ? {} : { divergence: report.divergence }), ...(report.error === undefined ? {} : { error: report.error }),
      answered: report.answered, calls: report.comparison.calls.map(callView),
    });
    return true;
  }
  return false;
}

async function loaded(store: RunStore, id: string): Promise<RunState> {
  const state = await store.loadRun(id);
  if (state === undefined) throw new HttpError(404, `there is no run ${id} in the store`);
  return state;
}

/** Where the run came from, the forks made from it, and the steps a fork may start after (none without a record). */
async function lineage(host: LabHost, state: RunState) {
  const rows = await host.catalog.rows({ agent: state.agentName, limit: 500 });
  const forks = rows.filter((row) => row.forkedFrom?.runId === state.runId).map((row) => ({ runId: row.runId, step: row.forkedFrom!.step, status: row.status }));
  const record = replayRecordOf(state);
  const canRun = host.agents.some((agent) => agent.name === state.agentName);
  return {
    ...(state.forkedFrom === undefined ? {} : { forkedFrom: state.forkedFrom }),
    forks,
    steps: record === undefined ? [] : forkSteps(record),
    recorded: record !== undefined,
    agent: canRun,
  };
}

function agentOf(host: LabHost, state: RunState): Agent<any, any> {
  const agent = host.agents.find((a) => a.name === state.agentName);
  if (agent === undefined) throw new HttpError(409, `no agent named "${state.agentName}" was given to the studio: start it with its agents (startStudio({ agents }) or koagent studio --agents <module>)`);
  return agent;
}

/**
 * A fork or replay's own refusal — a run not recorded with its layer trace, a step it cannot
 * start after, another version of the agent — is the request's 409 (the request was well formed,
 * the run does not allow it), with the runtime's message, which says what to do.
 */
async function answered<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TypeError || KoagentError.is(error)) throw new HttpError(409, (error as Error).message);
    throw error;
  }
}

function summaryText(summary: LayerSummary | undefined): string | null {
  if (summary === undefined) return null;
  const effects = summary.effects.map(effectText);
  if (!summary.returned && !summary.effects.some((e) => e.type === 'threw')) effects.push('did not return');
  return effects.length === 0 ? 'passed it on' : effects.join('; ');
}

function layerView(layer: ComparedLayer): LayerView {
  return { name: layer.name, source: layer.source, depth: layer.depth, same: layer.same, then: summaryText(layer.then), now: summaryText(layer.now) };
}

function callView(call: ComparedCall): CallView {
  return { kind: call.kind, id: call.id, name: call.name, step: call.step, same: call.same, then: call.then ?? null, now: call.now ?? null, layers: call.layers.map(layerView) };
}
