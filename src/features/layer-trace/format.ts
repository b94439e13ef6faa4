// The layer trace as text for a terminal: each call as an indented onion, each layer one step in
// from the layer around it, with what it did. What `koagent runs show` prints, and what a user
// prints from a run of their own.
import { traceOf, type HumanDecisionEffect, type JsonChange, type LayerTraceRecord, type TracedCall, type TracedEffect, type TracedLayer, type TracedSegment } from './record.js';

/**
 * A run's layer trace as text: per call, a line saying what was called, how it ended and how
 * long it took, then its layers as an indented onion, each with its own time and what it did
 * (rewrote the arguments, denied the call, called `next()` again …). Give the run's state, or
 * the record alone; a state recorded without the trace says so. What `koagent runs show` prints.
 *
 * @example const result = await agent.run('Hi', { layerTrace: true }); console.log(formatTrace(result.state));
 */
export function formatTrace(stateOrRecord: LayerTraceRecord | { hookState: Record<string, unknown> }): string {
  const given: unknown = stateOrRecord;
  const record = traceOf(given);
  if (record !== undefined) return record.calls.length === 0 && (record.segments ?? []).length === 0 ? 'no calls traced' : traceLines(record).join('\n');
  if (typeof given === 'object' && given !== null && 'hookState' in given) return 'not recorded (run with layerTrace: true)';
  const hint = typeof given === 'object' && given !== null && 'state' in given && 'status' in given ? ' (this is a run result: pass result.state)' : '';
  throw new TypeError(`formatTrace(stateOrRecord): expected a run state or a layer trace record, got ${describe(given)}${hint}`);
}

/** The trace in the order things happened: each segment's run layers before the calls it made. */
function traceLines(trace: LayerTraceRecord): string[] {
  const lines: string[] = [];
  const segments = trace.segments ?? [];
  let next = 0;
  const segmentsBefore = (index: number) => {
    // A segment of a sub-agent without run layers tells nothing the calls do not.
    for (; next < segments.length && segments[next].firstCall <= index; next++) if (segments[next].parentCallId === undefined || segments[next].layers.length > 0) lines.push(segmentText(segments[next]));
  };
  trace.calls.forEach((call, i) => {
    segmentsBefore(i);
    lines.push(callText(call));
  });
  segmentsBefore(Number.POSITIVE_INFINITY);
  return lines;
}

/** One segment's pass through the run stack: its outcome, time and run layers (criogen onStart/onEnd, run middleware). */
function segmentText(segment: TracedSegment): string {
  const nest = segment.parentCallId === undefined ? '' : `  inside ${segment.parentCallId} (${(segment.agentPath ?? []).join(' › ')})`;
  const head = `run segment ${segment.segment}  ${segment.outcome}  ${ms(segment.durationMs)}${segment.layers.length === 0 ? '  no run layers' : ''}${nest}`;
  return [head, ...layerLines(segment.layers, segment.parentCallId === undefined ? '  ' : '    ')].join('\n');
}

/** One traced call: its line, then its layers, a sub-agent's call one step further in. */
function callText(call: TracedCall): string {
  const nest = call.parentCallId === undefined ? '' : `  inside ${call.parentCallId} (${(call.agentPath ?? []).join(' › ')})`;
  const model = call.model ?? call.provider;
  const head = `${call.kind} ${call.name}${model === undefined ? '' : ` [${model}]`} ${call.id}  step ${call.step}, segment ${call.segment}  ${call.outcome}  ${ms(call.durationMs)}${nest}`;
  return [head, ...layerLines(call.layers, call.parentCallId === undefined ? '  ' : '    ')].join('\n');
}

/** Layers as an indented onion under `base`: each one step in from the layer around it, its effects under it. */
function layerLines(layers: readonly TracedLayer[], base: string): string[] {
  return layers.map((layer) => {
    const hooks = layer.hooks === undefined || layer.hooks.length === 0 ? '' : ` [${layer.hooks.join(', ')}]`;
    const source = layer.source === 'middleware' ? '' : ` (${layer.source})`;
    const pad = base + '  '.repeat(layer.depth);
    const effects = layer.effects.map((e) => `${pad}  · ${effectText(e)}`);
    return [`${pad}${layer.name}${source}${hooks}  self ${ms(layer.selfMs)}${layer.outAt === undefined ? '' : `, out at ${ms(layer.outAt)}`}`, ...effects].join('\n');
  });
}

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}…`);
const ms = (value: number) => `${value < 10 ? value.toFixed(2) : Math.round(value)} ms`;
const shown = (value: unknown) => (value === undefined ? '∅' : cut(JSON.stringify(value), 100));

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? `an object with keys ${Object.keys(value).slice(0, 6).join(', ') || '(none)'}` : `a ${typeof value}`;
}

/** One effect in a few words, as `formatTrace` prints it. */
export function effectText(effect: TracedEffect): string {
  switch (effect.type) {
    case 'rewrote-args':
    case 'rewrote-request':
    case 'replaced-result':
    case 'replaced-reply':
      return `${effect.type}: ${changesText(effect.changes)}`;
    case 'denied':
      return `denied${effect.by === undefined ? '' : ` by ${effect.by}`}: ${effect.reason}`;
    case 'asked-approval':
      return `asked for approval${effect.reason === undefined ? '' : `: ${effect.reason}`}`;
    case 'next-again':
      return `called next() again (${effect.times} more time${effect.times === 1 ? '' : 's'})`;
    case 'threw':
      return `threw${effect.code === undefined ? '' : ` ${effect.code}`}: ${effect.message}`;
    case 'short-circuit':
      return 'short-circuit: settled the call without next()';
    case 'human-decision':
      return `human decision: ${decisionText(effect)}`;
  }
}

const changesText = (changes: readonly JsonChange[]) => changes.map((c) => `${c.path} ${shown(c.before)} → ${shown(c.after)}`).join('; ');

/** A human's decision in a few words: what (an edit from → to), by whom, through which surface, why. */
export function decisionText(effect: HumanDecisionEffect): string {
  const what = effect.decision === 'denied' ? 'denied' : effect.changes === undefined ? 'approved as asked' : `approved with edited arguments (${changesText(effect.changes)})`;
  const who = effect.actor === undefined ? '' : ` by ${effect.actor.name === undefined ? effect.actor.id : `${effect.actor.name} (${effect.actor.id})`}`;
  return `${what}${who} via ${effect.surface}${effect.reason === undefined ? '' : `: ${cut(effect.reason.replace(/\s+/g, ' ').trim(), 160)}`}`;
}
