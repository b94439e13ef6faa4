// What people read: runs as a table, and one run as its transcript, its ledger and its layer
// trace (an indented onion per call). Scripts read --json instead.
import type { Message } from '../core/vocabulary/messages.js';
import type { RunState } from '../core/vocabulary/state.js';
import type { RunSummary } from '../stores/run-store.js';
import { decisionText, formatTrace } from '../features/layer-trace/format.js';
import { decisionEffect } from '../features/layer-trace/record.js';

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
  if (state.forkedFrom !== undefined) lines.push(`forked from ${state.forkedFrom.runId} after step ${state.forkedFrom.step}`);
  if (state.error !== undefined) lines.push(`error ${state.error.code}: ${state.error.message}${state.error.layer === undefined ? '' : ` (layer ${state.error.layer})`}`);
  for (const p of state.pendingApprovals) lines.push(`waiting for approval: ${p.toolName} ${cut(JSON.stringify(p.args), 120)} (call ${p.toolCallId}${p.reason === undefined ? '' : `: ${p.reason}`})`);

  const decisions = state.decisionLog ?? [];
  if (decisions.length > 0) {
    lines.push('', 'Decisions');
    for (const d of decisions) lines.push(`  ${d.at.replace('T', ' ').slice(0, 19)}  ${d.toolName} (${d.toolCallId}${d.path === undefined ? '' : `, in ${d.path.join(' › ')}`})  ${decisionText(decisionEffect(d))}  segment ${d.segment}`);
  }

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

  lines.push('', 'Layer trace', indent(formatTrace(state)));
  return lines.join('\n');
}

const indent = (text: string, by = '  ') => text.split('\n').map((l) => by + l).join('\n');
