// Replay: a stored run run again through the agent's layers and hooks as they are now (or with
// layers added), each model reply and tool result taken from the stored run's record, for as
// long as the replay asks what the stored run asked; then a second layer trace beside the first.
import { randomUUID } from 'node:crypto';
import { KoagentError, type RunFailedError } from '../core/vocabulary/errors.js';
import type { RunResult } from '../core/vocabulary/result.js';
import { newState, type DecisionRecord, type RunState, type RunStatus } from '../core/vocabulary/state.js';
import { nextSegment } from '../core/state/resume.js';
import { adminOf } from '../agent/admin.js';
import type { Agent } from '../agent/agent.js';
import { traceOf, type LayerTraceRecord } from '../features/layer-trace/record.js';
import { compareTraces, type TraceComparison } from '../features/recording/compare.js';
import { decisionsFromLog, playableRecord, type RunFixture } from '../features/recording/fixture.js';
import { Playback, type Divergence } from '../features/recording/playback.js';
import { checkReplayOptions, storedRun, type ReplayOptions, type SegmentCallOptions } from './options.js';

/**
 * What a replay found. `same`: it asked what the stored run asked, its layers did what they did
 * then (the two traces compare equal) and it ended with the same transcript. Otherwise
 * `divergence` says where it first asked something else (and it stopped there, unless `live`),
 * and `comparison` shows what each layer did then and now.
 *
 * @example const report = await replay(agent, runId); if (!report.same) console.log(report.divergence?.reason, formatComparison(report.comparison));
 */
export interface ReplayReport {
  /** The stored run replayed. */
  runId: string;
  same: boolean;
  divergence?: Divergence;
  /** With `live`: the replay went on with the real model and tools after a difference. */
  wentLive: boolean;
  /** How the replay ended, and its state (in memory: a replay is never stored). */
  status: RunStatus;
  state: RunState;
  /** The failure it ended with: `replay_diverged` when it stopped at a difference. */
  error?: { code: string; message: string; layer?: string };
  /** Provider calls and tool executions answered from the record, and asked live. */
  answered: { models: number; tools: number };
  live: { models: number; tools: number };
  /** The replay's final transcript is the stored run's. */
  sameTranscript: boolean;
  storedTrace: LayerTraceRecord;
  trace: LayerTraceRecord;
  comparison: TraceComparison;
}

const EMPTY_TRACE: LayerTraceRecord = { version: 1, calls: [], segments: [] };

/**
 * Replay a stored run: run it again from its input through `agent`'s layers and hooks as they
 * are now (`layers` adds some, innermost, for this replay), taking each model reply from the
 * stored run's record instead of calling the model, and each tool result instead of running the
 * tool — neither is asked — and giving it the human decisions the stored run was given. Where
 * the replay asks something else (a layer changed a request, a call has other arguments, a call
 * the stored run did not make), it stops and the report says where and how; with `live: true`
 * it goes on with the real model and tools from there. Nothing is stored. The run is found by
 * id in the store (`store`, else the agent's), or given as its state; it must have been
 * recorded with its layer trace (`layerTrace: true`).
 *
 * @example const report = await replay(agent, runId); console.log(report.same ? 'same as stored' : report.divergence?.reason);
 */
export async function replay<C>(agent: Agent<C, any>, run: string | RunState, options: ReplayOptions<C> = {}): Promise<ReplayReport> {
  const where = 'replay(agent, run, options)';
  const { store: given, layers, live, ...call } = checkReplayOptions(options, where);
  const admin = adminOf(agent, where);
  const stored = await storedRun(admin, run, given, where);
  const { record, input } = playableRecord(stored, where);
  const target = layers === undefined || layers.length === 0 ? admin : admin.withLayers(layers, `${where}: layers`);
  const playback = new Playback(stored, record, live === true);
  const request = { ...target.request({ ...call, layerTrace: true }, where), playback };
  // The stored run's id, so layers that read it see the same; a session of its own, so no session of the agent's is touched.
  let state = newState(stored.runId, `session_replay_${randomUUID()}`, target.identity, input);
  const used = new Set<DecisionRecord>();
  let error: ReplayReport['error'];
  for (let resumed = false; ; resumed = true) {
    try {
      const result: RunResult = resumed ? await target.continue(state, request) : await target.start(state, request, undefined, false);
      state = result.state;
    } catch (failure) {
      // By its marker, not instanceof: the agent may come from another copy of koagent (a module the CLI loads).
      if (!KoagentError.is(failure) || !('state' in failure)) throw failure;
      state = (failure as RunFailedError).state;
      error = state.error;
      break;
    }
    if (state.status !== 'suspended') break;
    const { decisions, missing } = decisionsFromLog(stored.decisionLog ?? [], state.pendingApprovals, used);
    if (missing !== undefined) {
      playback.diverged({ kind: 'approval', id: missing.toolCallId, name: missing.toolName, step: state.steps, reason: 'the replay asks a human about this call, and the stored run was given no decision on it' });
      break;
    }
    state = nextSegment(state, decisions, target.identity);
  }
  if (playback.divergence === undefined && !playback.isLive) playback.divergence = playback.leftOver();
  const storedTrace = traceOf(stored) ?? EMPTY_TRACE;
  const trace = traceOf(state) ?? EMPTY_TRACE;
  const comparison = compareTraces(storedTrace, trace);
  const sameTranscript = JSON.stringify(state.messages) === JSON.stringify(stored.messages);
  const report: ReplayReport = {
    runId: stored.runId, same: playback.divergence === undefined && comparison.same && sameTranscript && state.status === stored.status,
    wentLive: playback.isLive, status: state.status, state, answered: { ...playback.answered }, live: { ...playback.liveCalls },
    sameTranscript, storedTrace, trace, comparison,
  };
  if (playback.divergence !== undefined) report.divergence = playback.divergence;
  if (error !== undefined) report.error = error;
  return report;
}

/**
 * Play a fixture (`fixtureOf`, `koagent runs export --fixture`) on `agent` — give it
 * `mockModel(fixture.replies)`, `fixtureTools(fixture, tools)` and the fixture's instructions —
 * offline to its end: the run starts with the fixture's input and is resumed with the human
 * decisions the stored run was given, as often as it waits for one. Resolves to the last result.
 *
 * @example const result = await playFixture(agent, fixture); assert.deepEqual(result.messages, fixture.messages);
 */
export async function playFixture<C, O>(agent: Agent<C, O>, fixture: RunFixture, options: SegmentCallOptions<C> = {}): Promise<RunResult<O>> {
  const used = new Set<DecisionRecord>();
  let result = await agent.run(fixture.input, options);
  while (result.status === 'suspended') {
    const { decisions, missing } = decisionsFromLog(fixture.decisions, result.pendingApprovals, used);
    if (missing !== undefined) throw new TypeError(`playFixture(agent, fixture): the run waits for a decision on ${missing.toolName} (${missing.toolCallId}), and fixture ${fixture.runId} has none for it`);
    result = await agent.resume(result.state, decisions, options);
  }
  return result;
}
