// What `koagent/replay` needs of an agent to fork and replay its stored runs, reached through one
// symbol-keyed method that no entry point names: the agent's identity and store, a call's options
// checked as `run` checks them, and a segment run from a state the caller built.
import type { RunResult } from '../core/vocabulary/result.js';
import type { AgentIdentity, RunState } from '../core/vocabulary/state.js';
import type { RunStore } from '../stores/run-store.js';
import type { SegmentRequest } from './run-segment.js';

/**
 * The key of an agent's administration method (`agent[ADMIN]()`): a registered symbol, so an
 * agent made by another copy of koagent (a module the CLI loads apart) is reached as well.
 */
export const ADMIN: unique symbol = Symbol.for('koagent.admin.v1');

/** An agent as fork and replay use it (see `ADMIN`). */
export interface AgentAdmin {
  readonly identity: AgentIdentity;
  /** The store `given`, else the agent's; when there is none, a `TypeError` saying how to give one (naming `what`), or undefined without `what`. */
  store(given: RunStore | undefined, what: string): RunStore;
  store(given: RunStore | undefined): RunStore | undefined;
  /** A call's options as the request of its segments, checked as `run` checks them (`where` names the call). */
  request(options: unknown, where: string): SegmentRequest;
  /** Run `state` as a new run: stored in `store` first (leased by this agent), or in memory without one. */
  start(state: RunState, request: SegmentRequest, store: RunStore | undefined, resumed: boolean): Promise<RunResult>;
  /** Run the next segment of an in-memory `state` (already made ready: `nextSegment`). */
  continue(state: RunState, request: SegmentRequest): Promise<RunResult>;
  /** `agent.adoptState`: a checked copy of `state` that belongs to this agent. */
  adopt(state: RunState): RunState;
  /** The same agent with `layers` (middleware or hooks) added innermost: a copy, for one replay. */
  withLayers(layers: readonly unknown[], where: string): AgentAdmin;
}

/** The administration of `agent`, or a `TypeError` naming `where` when it is not a koagent agent. */
export function adminOf(agent: unknown, where: string): AgentAdmin {
  const method = typeof agent === 'object' && agent !== null ? (agent as { [ADMIN]?: unknown })[ADMIN] : undefined;
  if (typeof method !== 'function') throw new TypeError(`${where}: agent must be an agent made with createAgent`);
  return (method as () => AgentAdmin).call(agent);
}
