// Two layer traces of the same run side by side — the stored run's and a replay's — call by call
// and layer by layer, with what each layer did then and now and where that differs. Times are
// not compared (a replay is faster); what the layers did is.
import { effectText } from '../layer-trace/format.js';
import type { LayerTraceRecord, TracedCall, TracedEffect, TracedLayer, TracedSegment } from '../layer-trace/record.js';

/**
 * What one layer did in one call (or one segment's run stack): the dialect methods that ran in
 * it, how often it called `next()`, whether it returned (rather than threw), and its effects.
 *
 * @example const denied = summary.effects.some((e) => e.type === 'denied');
 *
 * @inline
 */
export interface LayerSummary {
  hooks?: string[];
  nextCalls: number;
  returned: boolean;
  effects: TracedEffect[];
}

/**
 * One layer, then (the stored run) and now (the replay): absent on a side where it did not run.
 *
 * @example for (const layer of call.layers) if (!layer.same) console.log(layer.name, layer.then?.effects, layer.now?.effects);
 *
 * @inline
 */
export interface ComparedLayer {
  name: string;
  source: TracedLayer['source'];
  depth: number;
  then?: LayerSummary;
  now?: LayerSummary;
  same: boolean;
}

/**
 * One call of the run, then and now: its outcome on each side (absent where it was not made),
 * and its layers.
 *
 * @example const changed = comparison.calls.filter((call) => !call.same).map((call) => call.id);
 *
 * @inline
 */
export interface ComparedCall {
  kind: TracedCall['kind'];
  id: string;
  name: string;
  step: number;
  then?: TracedCall['outcome'];
  now?: TracedCall['outcome'];
  same: boolean;
  layers: ComparedLayer[];
}

/**
 * One segment's run layers, then and now (segments are compared in the order they ran).
 *
 * @example for (const s of comparison.segments) console.log(s.segment, s.then, s.now);
 *
 * @inline
 */
export interface ComparedSegment {
  segment: number;
  then?: TracedSegment['outcome'];
  now?: TracedSegment['outcome'];
  same: boolean;
  layers: ComparedLayer[];
}

/**
 * Two traces of one run compared: each call and segment of the lead agent (a replay runs no
 * sub-agent: their calls are one tool call of the lead's), in the stored run's order, a call
 * made on one side only where it falls.
 *
 * @example const comparison = compareTraces(traceOf(stored)!, traceOf(replayed)!); if (!comparison.same) console.log(formatComparison(comparison));
 *
 * @inline
 */
export interface TraceComparison {
  same: boolean;
  calls: ComparedCall[];
  segments: ComparedSegment[];
}

/** What a layer did, without its times (the human's decision without when it was taken). */
function summary(layer: TracedLayer): LayerSummary {
  const effects = layer.effects.map((effect) => {
    if (effect.type !== 'human-decision') return effect;
    const { at: _at, ...rest } = effect;
    return rest as TracedEffect;
  });
  const out: LayerSummary = { nextCalls: layer.nextCalls, returned: layer.outAt !== undefined, effects };
  if (layer.hooks !== undefined && layer.hooks.length > 0) out.hooks = layer.hooks;
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Layers in the order entered, paired where the same layer is at the same place on both sides. */
function compareLayers(then: readonly TracedLayer[], now: readonly TracedLayer[]): ComparedLayer[] {
  const out: ComparedLayer[] = [];
  for (let i = 0; i < Math.max(then.length, now.length); i++) {
    const a = then[i];
    const b = now[i];
    if (a !== undefined && b !== undefined && (a.name !== b.name || a.depth !== b.depth)) {
      out.push({ name: a.name, source: a.source, depth: a.depth, then: summary(a), same: false });
      out.push({ name: b.name, source: b.source, depth: b.depth, now: summary(b), same: false });
      continue;
    }
    const layer = (a ?? b)!;
    const entry: ComparedLayer = { name: layer.name, source: layer.source, depth: layer.depth, same: false };
    if (a !== undefined) entry.then = summary(a);
    if (b !== undefined) entry.now = summary(b);
    entry.same = a !== undefined && b !== undefined && same(entry.then, entry.now);
    out.push(entry);
  }
  return out;
}

/** The lead agent's calls, each under a key its repeat (a call asked, then settled after a human) keeps apart. */
function keyed(calls: readonly TracedCall[]): Map<string, TracedCall> {
  const seen = new Map<string, number>();
  const out = new Map<string, TracedCall>();
  for (const call of calls) {
    if (call.parentCallId !== undefined) continue;
    const base = `${call.kind}:${call.id}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    out.set(`${base}#${n}`, call);
  }
  return out;
}

function compareCall(then: TracedCall | undefined, now: TracedCall | undefined): ComparedCall {
  const call = (then ?? now)!;
  const entry: ComparedCall = { kind: call.kind, id: call.id, name: call.name, step: call.step, same: false, layers: compareLayers(then?.layers ?? [], now?.layers ?? []) };
  if (then !== undefined) entry.then = then.outcome;
  if (now !== undefined) entry.now = now.outcome;
  entry.same = then !== undefined && now !== undefined && then.name === now.name && then.outcome === now.outcome && entry.layers.every((l) => l.same);
  return entry;
}

/**
 * Compare a stored run's layer trace with a replay's: call by call (by kind and id), layer by
 * layer, what each did (effects, `next()` calls, whether it returned), not how long it took.
 *
 * @example const report = await replay(agent, runId); console.log(compareTraces(report.storedTrace, report.trace).same);
 */
export function compareTraces(then: LayerTraceRecord, now: LayerTraceRecord): TraceComparison {
  const before = keyed(then.calls);
  const after = keyed(now.calls);
  const calls: ComparedCall[] = [];
  // The stored run's order; a call only the replay made goes right after the call it followed there.
  const nowKeys = [...after.keys()];
  const placed = new Set<string>();
  const placeNewBefore = (key: string | undefined) => {
    const until = key === undefined ? nowKeys.length : nowKeys.indexOf(key);
    for (let i = 0; i < until; i++) {
      const k = nowKeys[i];
      if (!before.has(k) && !placed.has(k)) {
        placed.add(k);
        calls.push(compareCall(undefined, after.get(k)));
      }
    }
  };
  for (const [key, call] of before) {
    if (after.has(key)) placeNewBefore(key);
    calls.push(compareCall(call, after.get(key)));
  }
  placeNewBefore(undefined);
  const lead = (record: LayerTraceRecord) => (record.segments ?? []).filter((s) => s.parentCallId === undefined);
  const a = lead(then);
  const b = lead(now);
  const segments: ComparedSegment[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const layers = compareLayers(a[i]?.layers ?? [], b[i]?.layers ?? []);
    const entry: ComparedSegment = { segment: i + 1, same: a[i] !== undefined && b[i] !== undefined && a[i].outcome === b[i].outcome && layers.every((l) => l.same), layers };
    if (a[i] !== undefined) entry.then = a[i].outcome;
    if (b[i] !== undefined) entry.now = b[i].outcome;
    segments.push(entry);
  }
  return { same: calls.every((c) => c.same) && segments.every((s) => s.same), calls, segments };
}

const WIDTH = 44;
const cut = (text: string, width = WIDTH) => (text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`);

/** What a layer did, in a few words: its effects, or that it passed the call on. */
function layerText(layer: LayerSummary | undefined): string {
  if (layer === undefined) return '—';
  const effects = layer.effects.map(effectText);
  if (!layer.returned && !layer.effects.some((e) => e.type === 'threw')) effects.push('did not return');
  return effects.length === 0 ? 'passed it on' : effects.join('; ');
}

function row(mark: boolean, label: string, then: string, now: string, sameText: boolean): string {
  return `${mark ? '≠' : ' '} ${cut(label, 36)}  ${cut(then)}  ${sameText ? '(same)' : now}`.trimEnd();
}

function layerRows(layers: readonly ComparedLayer[], indent: string): string[] {
  return layers.map((layer) => {
    const source = layer.source === 'middleware' ? '' : ` (${layer.source})`;
    const then = layerText(layer.then);
    const now = layerText(layer.now);
    return row(!layer.same, `${indent}${'  '.repeat(layer.depth)}${layer.name}${source}`, then, now, layer.same && then === now);
  });
}

/**
 * Two traces side by side, for a terminal: each segment's run layers and each call, then (the
 * stored run) and now (the replay), a `≠` before each line that differs. What `koagent runs
 * replay` prints.
 *
 * @example console.log(formatComparison(compareTraces(storedTrace, replayedTrace)));
 */
export function formatComparison(comparison: TraceComparison): string {
  const lines = [row(false, 'CALL', 'THEN (stored)', 'NOW (replayed)', false)];
  for (const segment of comparison.segments) {
    lines.push(row(!segment.same, `run segment ${segment.segment}`, segment.then ?? '—', segment.now ?? '—', false));
    lines.push(...layerRows(segment.layers, '  '));
  }
  for (const call of comparison.calls) {
    lines.push(row(!call.same, `${call.kind} ${call.name} ${call.id} (step ${call.step})`, call.then ?? '— not made', call.now ?? '— not made', false));
    lines.push(...layerRows(call.layers, '  '));
  }
  return lines.join('\n');
}
