// The layer trace's record: what the runtime writes into a run's hook state and what viewers
// (the CLI, the studio, OTLP export) read. Plain JSON, with every copied value bounded.
import { setOwn } from '../../core/vocabulary/json.js';

/**
 * The hook state name the layer trace of a run is kept under (`state.hookState['koagent.trace']`).
 *
 * @example const record = result.state.hookState[TRACE_STATE] as LayerTraceRecord | undefined;
 */
export const TRACE_STATE = 'koagent.trace';

/**
 * The layer trace of one run: each model and tool call it made, with the layers each passed.
 *
 * @example const trace = result.state.hookState['koagent.trace'] as LayerTraceRecord | undefined;
 */
export interface LayerTraceRecord {
  version: 1;
  /** In the order the calls started; a sub-agent's calls are here too, with `parentCallId`. */
  calls: TracedCall[];
  /** Each segment's pass through the run stack, in the order they started (absent in a record written before it was kept). */
  segments?: TracedSegment[];
}

/**
 * One run segment's pass through the run stack: the run layers it entered (run middleware,
 * criogen `onStart`/`onEnd`), in and out, their time, and what they did.
 *
 * @example for (const s of trace.segments ?? []) console.log(s.segment, s.outcome, s.layers.map((l) => l.name));
 */
export interface TracedSegment {
  /** The run's segment number (1, then one more for each resume or recovery). */
  segment: number;
  /** Epoch milliseconds. */
  startedAt: number;
  durationMs: number;
  outcome: 'completed' | 'suspended' | 'failed';
  /** The index in `calls` of the first call made after the segment started (`calls.length` then, when it made none). */
  firstCall: number;
  /** A sub-agent's segment: the lead agent's tool call that ran the sub-agent. */
  parentCallId?: string;
  /** A sub-agent's segment: the sub-agents' names, from the lead down. */
  agentPath?: string[];
  /** The run layers, in the order they were entered, outermost first; `inAt`/`outAt` count from the segment's start. */
  layers: TracedLayer[];
}

/**
 * One model or tool call, and the layers it went through.
 *
 * @example const denied = trace.calls.filter((call) => call.outcome === 'denied');
 */
export interface TracedCall {
  /** Tool calls: the toolCallId; model calls: `model:<step>:<n>` (n: 1, 2 … within the step). */
  id: string;
  kind: 'model' | 'tool';
  /** The tool's name as called; for a model call its purpose (`turn`). */
  name: string;
  step: number;
  /** The run segment it ran in. */
  segment: number;
  /** Epoch milliseconds. */
  startedAt: number;
  durationMs: number;
  outcome: 'ok' | 'error' | 'denied' | 'approval' | 'short-circuit';
  /** On a model call: the provider's name (`ModelProvider.name`) the call asked last (after any fallback). */
  provider?: string;
  /** On a model call: the model id (`ModelProvider.modelId`) the call asked last, when the provider has one. */
  model?: string;
  /** On a sub-agent's calls: the lead agent's tool call that ran the sub-agent. */
  parentCallId?: string;
  /** On a sub-agent's calls: the sub-agents' names, from the lead down. */
  agentPath?: string[];
  /** In the order they were entered, outermost first (a layer inside one that called next() again appears once per time it ran). */
  layers: TracedLayer[];
}

/**
 * One layer's part in a call.
 *
 * @example const slow = call.layers.filter((layer) => layer.selfMs > 5).map((layer) => layer.name);
 */
export interface TracedLayer {
  /** The middleware's name; for a dialect's layer, its hook's name (AgentHooks: their names joined with `, `). */
  name: string;
  source: 'middleware' | 'agent-hook' | 'criogen' | 'builtin';
  /** The dialect hook methods that ran inside this layer (`preToolCall`, `beforeTool`, `onStart` …). */
  hooks?: string[];
  /** How many layers enclose this one in the call (0: the outermost). */
  depth: number;
  /** Milliseconds since the call (for a run layer, the segment) started, when the layer was entered. */
  inAt: number;
  /** Milliseconds since the call (or the segment) started, when the layer returned (absent if it threw, or never returned). */
  outAt?: number;
  /** Time in the layer itself, without the time inside its next(). */
  selfMs: number;
  /** Times it called next(): 0 short-circuited, 2 or more called it again. */
  nextCalls: number;
  effects: TracedEffect[];
}

/**
 * What a layer did to a call.
 *
 * @example const rewrites = layer.effects.filter((e) => e.type === 'rewrote-args');
 */
export type TracedEffect =
  | { type: 'rewrote-args'; changes: JsonChange[] }
  | { type: 'rewrote-request'; changes: JsonChange[] }
  | { type: 'replaced-result'; changes: JsonChange[] }
  | { type: 'replaced-reply'; changes: JsonChange[] }
  | { type: 'short-circuit' }
  | { type: 'denied'; reason: string; by?: string }
  | { type: 'asked-approval'; reason?: string }
  /** The approval step, on a call a human decided on: what they decided (see `HumanDecisionEffect`). */
  | HumanDecisionEffect
  /** `times`: the calls of next() after the first. */
  | { type: 'next-again'; times: number }
  | { type: 'threw'; message: string; code?: string };

/**
 * What a human decided on a call, as the approval step shows it in the segment where the call
 * settled: approved as asked, approved with edited arguments (`changes`: from the arguments they
 * were asked about to those they approved), or denied; with their reason, who (`actor`, when
 * named), through which surface and when (`at`, ISO 8601).
 *
 * @example const edits = call.layers.flatMap((l) => l.effects).filter((e) => e.type === 'human-decision' && e.changes !== undefined);
 *
 * @inline
 */
export interface HumanDecisionEffect {
  type: 'human-decision';
  decision: 'approved' | 'denied';
  surface: string;
  actor?: { id: string; name?: string };
  reason?: string;
  changes?: JsonChange[];
  at: string;
}

/**
 * The trace's view of a decision the run keeps (a `DecisionRecord` of `state.decisionLog`, typed
 * here by its fields so the studio's page can read this module's types alone): its values
 * bounded, an edit as changes.
 */
export function decisionEffect(record: Pick<HumanDecisionEffect, 'decision' | 'surface' | 'actor' | 'reason' | 'at'> & { args: unknown; editedArgs?: unknown }): HumanDecisionEffect {
  const effect: HumanDecisionEffect = { type: 'human-decision', decision: record.decision, surface: record.surface, at: record.at };
  if (record.actor !== undefined) effect.actor = { ...record.actor };
  if (record.reason !== undefined) effect.reason = bounded(record.reason) as string;
  if (record.editedArgs !== undefined) effect.changes = jsonChanges(bounded(record.args), bounded(record.editedArgs), '/args');
  return effect;
}

/**
 * One difference between two JSON values: `before` absent means added, `after` absent removed.
 *
 * @example for (const { path, before, after } of effect.changes ?? []) console.log(path, before, '→', after);
 */
export interface JsonChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

const MAX_STRING = 2000;
const MAX_ITEMS = 50;
const MAX_DEPTH = 8;
const MAX_CHANGES = 40;

/** `value` as plain JSON, bounded: strings cut at 2 000 characters, arrays and objects at 50 items, 8 levels deep. */
export function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length <= MAX_STRING ? value : `${value.slice(0, MAX_STRING)}… [${value.length - MAX_STRING} more characters]`;
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value !== 'object') return value === undefined ? undefined : String(value);
  if (depth >= MAX_DEPTH) return '[…]';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((item) => bounded(item, depth + 1) ?? null);
    if (value.length > MAX_ITEMS) items.push(`[${value.length - MAX_ITEMS} more items]`);
    return items;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item === undefined || typeof item === 'function') continue;
    if (n++ === MAX_ITEMS) {
      out['…'] = 'more keys';
      break;
    }
    setOwn(out, key, bounded(item, depth + 1));
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const escape = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** The differences between two bounded JSON values, under `path` (JSON-pointer style), at most 40. */
export function jsonChanges(before: unknown, after: unknown, path = ''): JsonChange[] {
  const changes: JsonChange[] = [];
  walk(before, after, path, changes);
  return changes;
}

function walk(before: unknown, after: unknown, path: string, changes: JsonChange[]): void {
  if (changes.length >= MAX_CHANGES || before === after) return;
  if (isRecord(before) && isRecord(after)) {
    for (const key of Object.keys(before)) {
      if (!Object.hasOwn(after, key)) changes.push({ path: `${path}/${escape(key)}`, before: before[key] });
      else walk(before[key], after[key], `${path}/${escape(key)}`, changes);
    }
    for (const key of Object.keys(after)) if (!Object.hasOwn(before, key)) changes.push({ path: `${path}/${escape(key)}`, after: after[key] });
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const n = Math.max(before.length, after.length);
    for (let i = 0; i < n; i++) {
      if (i >= after.length) changes.push({ path: `${path}/${i}`, before: before[i] });
      else if (i >= before.length) changes.push({ path: `${path}/${i}`, after: after[i] });
      else walk(before[i], after[i], `${path}/${i}`, changes);
    }
    return;
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  const change: JsonChange = { path };
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  changes.push(change);
}

/**
 * The layer trace kept in a run state (or the record itself), if there is one.
 *
 * @example for (const call of traceOf(result.state)?.calls ?? []) console.log(call.kind, call.name, call.layers.map((l) => l.name));
 */
export function traceOf(stateOrRecord: unknown): LayerTraceRecord | undefined {
  if (!isRecord(stateOrRecord)) return undefined;
  if (stateOrRecord.version === 1 && Array.isArray(stateOrRecord.calls)) return withEffectTypes(stateOrRecord as unknown as LayerTraceRecord);
  const hookState = stateOrRecord.hookState;
  if (!isRecord(hookState)) return undefined;
  const record = hookState[TRACE_STATE];
  return isRecord(record) && Array.isArray(record.calls) ? withEffectTypes(record as unknown as LayerTraceRecord) : undefined;
}

/**
 * A record stored before effects were told apart by `type` named it `kind`: read as a copy
 * whose effects carry `type` (the stored one is left as it is; one already current is given as is).
 */
function withEffectTypes(record: LayerTraceRecord): LayerTraceRecord {
  type Stored = TracedLayer & { effects: Array<TracedEffect | { kind: TracedEffect['type'] }> };
  const old = (layers: TracedLayer[] | undefined) => (layers ?? []).some((layer) => (layer as Stored).effects?.some((e) => !('type' in e) && 'kind' in e));
  if (!record.calls.some((call) => old(call.layers)) && !(record.segments ?? []).some((segment) => old(segment.layers))) return record;
  const current = (layer: TracedLayer): TracedLayer => ({
    ...layer,
    effects: (layer as Stored).effects.map((e) => {
      if ('type' in e || !('kind' in e)) return e as TracedEffect;
      const { kind, ...rest } = e as { kind: TracedEffect['type'] } & Record<string, unknown>;
      return { type: kind, ...rest } as TracedEffect;
    }),
  });
  return {
    ...record,
    calls: record.calls.map((call) => ({ ...call, layers: call.layers.map(current) })),
    ...(record.segments === undefined ? {} : { segments: record.segments.map((segment) => ({ ...segment, layers: segment.layers.map(current) })) }),
  };
}
