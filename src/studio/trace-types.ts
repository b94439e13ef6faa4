// The layer trace as the studio reads it: the record the runtime keeps in a run's hook state
// under `koagent.trace` (one shape for the recording and for everything that shows it). Type-only,
// so the page's bundle can import it too.

/** Where a run keeps its layer trace: `state.hookState[TRACE_STATE]`. */
export const TRACE_STATE = 'koagent.trace';

/**
 * The layer trace of one run: each model and tool call, in the order the calls started.
 *
 * @example const record = state.hookState['koagent.trace'] as LayerTraceRecord | undefined;
 */
export interface LayerTraceRecord {
  version: 1;
  calls: TracedCall[];
}

/**
 * One traced call and the layers it passed through, outermost first.
 *
 * @example const slow = record.calls.filter((call) => call.durationMs > 1000);
 */
export interface TracedCall {
  /** Tool: the toolCallId; model: `model:<step>:<n>`. */
  id: string;
  kind: 'model' | 'tool';
  /** The tool's name; for a model call its purpose (`turn`, or a side call's). */
  name: string;
  step: number;
  segment: number;
  /** Epoch milliseconds. */
  startedAt: number;
  durationMs: number;
  outcome: 'ok' | 'error' | 'denied' | 'approval' | 'short-circuit';
  /** On a sub-agent's calls: the lead agent's tool call that ran the sub-agent. */
  parentCallId?: string;
  /** Sub-agent names from the lead down (absent for the lead agent). */
  agentPath?: string[];
  layers: TracedLayer[];
}

/**
 * One layer of a traced call: when it was entered and left, its own time, and what it did.
 *
 * @example const rewrites = call.layers.filter((layer) => layer.effects.some((e) => e.kind === 'rewrote-args'));
 */
export interface TracedLayer {
  name: string;
  source: 'middleware' | 'agent-hook' | 'criogen' | 'builtin';
  /** The dialect hook methods that ran inside this layer. */
  hooks?: string[];
  /** Milliseconds since the call started. */
  inAt: number;
  outAt?: number;
  selfMs: number;
  nextCalls: number;
  effects: TracedEffect[];
}

/**
 * What a layer did to a call.
 *
 * @example if (effect.kind === 'denied') console.log(effect.reason);
 */
export type TracedEffect =
  | { kind: 'rewrote-args'; changes: JsonChange[] }
  | { kind: 'rewrote-request'; changes: JsonChange[] }
  | { kind: 'replaced-result'; changes: JsonChange[] }
  | { kind: 'replaced-reply'; changes: JsonChange[] }
  | { kind: 'short-circuit' }
  | { kind: 'denied'; reason: string; by?: string }
  | { kind: 'asked-approval'; reason?: string }
  | { kind: 'next-again'; times: number }
  | { kind: 'threw'; message: string; code?: string };

/**
 * One change of a rewrite: `before` absent means added, `after` absent means removed.
 *
 * @example const change: JsonChange = { path: '/args/query', before: 'koa', after: 'koa middleware' };
 */
export interface JsonChange {
  path: string;
  before?: unknown;
  after?: unknown;
}
