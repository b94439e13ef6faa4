// What people read: runs as a table, and one run as its transcript, its ledger and its layer
// trace (an indented onion per call). Scripts read --json instead.
import type { Message } from '../core/vocabulary/messages.js';
import type { RunState } from '../core/vocabulary/state.js';
import type { RunSummary } from '../stores/run-store.js';
import { traceOf, type LayerTraceRecord, type TracedCall, type TracedEffect, type TracedLayer, type TracedSegment } from '../features/layer-trace/record.js';

/** Rows under a header, each column as wide as its widest cell. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

/** `koagent runs ls`: one line per run. */
export function runTable(runs: readonly RunSummary[]): string {
  if (runs.length === 0) return 'no runs';
  return table(['RUN', 'AGENT', 'STATUS', 'STOP', 'STEPS', 'PENDING', 'SESSION', 'UPDATED'], runs.map((r) => [
    r.runId, r.agentName, r.status, r.stopReason ?? (r.error?.code ?? ''), String(r.steps), String(r.pendingApprovals.length), r.sessionId, when(r.updatedAt),
  ]));
}

const cut = (text: string, max = 240) => (text.length <= max ? text : `${text.slice(0, max)}…`);
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

/** A message's content as one line: its text, and a word for each part that is not text. */
function contentText(content: Message['content']): string {
  if (typeof content === 'string') return flat(content);
  return content.map((part) => {
    const p = part as { type: string; text?: string; mediaType?: string };
    if (p.type === 'text') return flat(p.text ?? '');
    if (p.type === 'reasoning') return `[reasoning: ${cut(flat(p.text ?? ''), 80)}]`;
    return `[${p.type}${p.mediaType === undefined ? '' : ` ${p.mediaType}`}]`;
  }).join(' ');
}

/** `koagent runs show`: the run, its transcript, its ledger and its layer trace (each segment's run layers, then its calls). */
export function showRun(state: RunState): string {
  const lines: string[] = [];
  lines.push(`run ${state.runId}  agent ${state.agentName}  session ${state.sessionId}`);
  lines.push(`status ${state.status}${state.stopReason === undefined ? '' : ` (${state.stopReason})`}  segment ${state.segment}  steps ${state.steps}  tokens ${state.usage.inputTokens} in / ${state.usage.outputTokens} out`);
  if (state.error !== undefined) lines.push(`error ${state.error.code}: ${state.error.message}${state.error.layer === undefined ? '' : ` (layer ${state.error.layer})`}`);
  for (const p of state.pendingApprovals) lines.push(`waiting for approval: ${p.toolName} ${cut(JSON.stringify(p.args), 120)} (call ${p.toolCallId}${p.reason === undefined ? '' : `: ${p.reason}`})`);

  lines.push('', 'Transcript');
  for (const m of state.messages) {
    const text = contentText(m.content);
    if (m.role === 'tool') lines.push(`  tool ${m.name} (${m.toolCallId}): ${cut(text)}`);
    else lines.push(`  ${m.role}: ${cut(text)}`);
    if (m.role === 'assistant') for (const call of m.toolCalls ?? []) lines.push(`    → ${call.name} ${cut(JSON.stringify(call.args), 160)} (${call.id})`);
  }

  lines.push('', 'Ledger');
  const names = new Map<string, string>();
  for (const m of state.messages) if (m.role === 'assistant') for (const call of m.toolCalls ?? []) names.set(call.id, call.name);
  if (state.ledger.length === 0) lines.push('  no tool calls');
  else lines.push(indent(table(['CALL', 'TOOL', 'ENTRY', 'IDEMPOTENCY KEY'], state.ledger.map((c) => [c.id, names.get(c.id) ?? '?', c.entry, `${state.runId}:${c.id}`]))));

  lines.push('', 'Layer trace');
  const trace = traceOf(state);
  if (trace === undefined) lines.push('  not recorded (run with layerTrace: true)');
  else lines.push(...traceLines(trace));
  return lines.join('\n');
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
    lines.push(traceText(call));
  });
  segmentsBefore(Number.POSITIVE_INFINITY);
  return lines;
}

/** One segment's pass through the run stack: its outcome, time and run layers (criogen onStart/onEnd, run middleware). */
export function segmentText(segment: TracedSegment): string {
  const nest = segment.parentCallId === undefined ? '' : `  inside ${segment.parentCallId} (${(segment.agentPath ?? []).join(' › ')})`;
  const head = `  run segment ${segment.segment}  ${segment.outcome}  ${ms(segment.durationMs)}${segment.layers.length === 0 ? '  no run layers' : ''}${nest}`;
  return [head, ...layerLines(segment.layers, segment.parentCallId === undefined ? '    ' : '      ')].join('\n');
}

const indent = (text: string, by = '  ') => text.split('\n').map((l) => by + l).join('\n');

/** One traced call as an indented onion: each layer one step in from the layer around it. */
export function traceText(call: TracedCall): string {
  const nest = call.parentCallId === undefined ? '' : `  inside ${call.parentCallId} (${(call.agentPath ?? []).join(' › ')})`;
  const model = call.model ?? call.provider;
  const head = `  ${call.kind} ${call.name}${model === undefined ? '' : ` [${model}]`} ${call.id}  step ${call.step}, segment ${call.segment}  ${call.outcome}  ${ms(call.durationMs)}${nest}`;
  return [head, ...layerLines(call.layers, call.parentCallId === undefined ? '    ' : '      ')].join('\n');
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

const ms = (value: number) => `${value < 10 ? value.toFixed(2) : Math.round(value)} ms`;
const shown = (value: unknown) => (value === undefined ? '∅' : cut(JSON.stringify(value), 100));

function effectText(effect: TracedEffect): string {
  switch (effect.kind) {
    case 'rewrote-args':
    case 'rewrote-request':
    case 'replaced-result':
    case 'replaced-reply':
      return `${effect.kind}: ${effect.changes.map((c) => `${c.path} ${shown(c.before)} → ${shown(c.after)}`).join('; ')}`;
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
  }
}
