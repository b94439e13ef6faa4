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
// The `koagent/replay` entry: fork, replay, the trace comparison and fixtures. The records they
// read and the options' parts stay unnamed (read them from the functions' signatures).
/** @category Replay */
export { fork } from './replay/fork.js';
/** @category Replay */
export { playFixture, replay, type ReplayReport } from './replay/replay.js';
/** @category Replay */
export { compareTraces, formatComparison } from './features/recording/compare.js';
/** @category Fixtures */
export { fixtureOf, fixtureTools, type RunFixture } from './features/recording/fixture.js';
