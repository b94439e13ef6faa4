/**
 * From production back to development: fork a stored run after any step (optionally edited),
 * replay it through changed layers without calling the model or running a tool, compare the
 * two layer traces, and turn a run into a test fixture. Runs are recorded for these with their
 * layer trace (`createAgent({ layerTrace: true })`).
 *
 * @example
 * ```ts
 * import { fork, replay, fixtureOf, fixtureTools, playFixture, formatComparison } from 'koagent/replay';
 * ```
 *
 * @packageDocumentation
 * @module koagent/replay
 */
// The `koagent/replay` entry: fork, replay, fixtures, and the record they read.
/** @category Replay */
export { fork } from './replay/fork.js';
/** @category Replay */
export { playFixture, replay, type ReplayReport } from './replay/replay.js';
/** @category Replay */
export type { ForkOptions, ReplayOptions, SegmentCallOptions } from './replay/options.js';
/** @category Replay */
export type { ForkEdit } from './features/recording/fork-state.js';
/** @category Replay */
export type { Divergence } from './features/recording/playback.js';
/** @category Replay */
export { compareTraces, formatComparison, type ComparedCall, type ComparedLayer, type ComparedSegment, type LayerSummary, type TraceComparison } from './features/recording/compare.js';
/** @category Fixtures */
export { fixtureOf, fixtureTools, type FixtureReply, type FixtureResponse, type FixtureToolCall, type FixtureToolResult, type RunFixture } from './features/recording/fixture.js';
/** @category Record */
export { REPLAY_STATE, replayRecordOf, type RecordedError, type RecordedModelCall, type RecordedToolCall, type ReplayRecord, type RunMark } from './features/recording/record.js';
