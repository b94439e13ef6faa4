// One call as the onion its layers made: each layer drawn inside the one that called it (the
// record's `depth`), outermost first, with when it was entered and left, its own time, how often
// it called next(), and what it did — a rewrite shown as a diff of the paths it changed.
// koagent's own steps (source `builtin`) are drawn apart from the user's layers. A segment's run
// layers are drawn the same way, around the loop.
import type { ComponentChildren } from 'preact';
import type { JsonChange, TracedCall, TracedEffect, TracedLayer, TracedSegment } from '../trace-types.ts';
import { ms, show } from './client.ts';

const EFFECT_LABEL: Record<TracedEffect['type'], string> = {
  'rewrote-args': 'rewrote the arguments',
  'rewrote-request': 'rewrote the request',
  'replaced-result': 'replaced the result',
  'replaced-reply': 'replaced the reply',
  'short-circuit': 'short-circuited (did not call next())',
  denied: 'denied the call',
  'asked-approval': 'asked for approval',
  'next-again': 'called next() again',
  threw: 'threw',
  'human-decision': 'a human',
};

const SOURCE_LABEL: Record<TracedLayer['source'], string> = {
  middleware: 'middleware',
  'agent-hook': 'AgentHooks hook',
  criogen: 'criogen hook',
  builtin: 'koagent step',
};

function Diff({ changes }: { changes: JsonChange[] }) {
  return (
    <table class="diff">
      <tbody>
        {changes.map((change) => (
          <tr data-path={change.path}>
            <td class="path">{change.path}</td>
            <td class="before">{'before' in change ? show(change.before) : <em>added</em>}</td>
            <td class="arrow">→</td>
            <td class="after">{'after' in change ? show(change.after) : <em>removed</em>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Effect({ effect }: { effect: TracedEffect }) {
  const detail =
    effect.type === 'denied' ? `: ${effect.reason}${effect.by ? ` (by ${effect.by})` : ''}`
    : effect.type === 'asked-approval' ? (effect.reason ? `: ${effect.reason}` : '')
    : effect.type === 'next-again' ? ` (${effect.times} more time${effect.times === 1 ? '' : 's'})`
    : effect.type === 'threw' ? `: ${effect.message}${effect.code ? ` [${effect.code}]` : ''}`
    : effect.type === 'human-decision' ? ` ${decisionWords(effect)}`
    : '';
  return (
    <li class={`effect ${effect.type}`} data-effect={effect.type}>
      <span>{EFFECT_LABEL[effect.type]}{detail}</span>
      {'changes' in effect && effect.changes !== undefined && <Diff changes={effect.changes} />}
    </li>
  );
}

/** A human's decision in words: what, by whom (when named), through which surface, and why. */
export function decisionWords(decision: { decision: 'approved' | 'denied'; changes?: unknown; actor?: { id: string; name?: string }; surface: string; reason?: string }): string {
  const what = decision.decision === 'denied' ? 'denied the call' : decision.changes === undefined ? 'approved the call as asked' : 'approved the call with edited arguments';
  const who = decision.actor === undefined ? '' : ` (${decision.actor.name === undefined ? decision.actor.id : `${decision.actor.name}, ${decision.actor.id}`})`;
  return `${what}${who} via ${decision.surface}${decision.reason === undefined ? '' : `: ${decision.reason}`}`;
}

/** Each layer's enclosing layer (its index), or -1 for the call itself, from the layers' depths. */
function parents(layers: TracedLayer[]): number[] {
  const open: number[] = [];
  return layers.map((layer, i) => {
    open.length = Math.min(open.length, layer.depth);
    const parent = open.length > 0 ? open[open.length - 1]! : -1;
    open[layer.depth] = i;
    return parent;
  });
}

/** What the innermost layer reached: the tool (with the calls of the sub-agent it ran, inside it) or the model. */
function Core({ call, children }: { call: TracedCall; children?: ComponentChildren }) {
  return (
    <div class="core">
      {call.kind === 'tool' ? `the tool ${call.name}` : `the model${call.model ? ` ${call.model}` : ''}`}
      {children}
    </div>
  );
}

/** One layer and those inside it; `core(index)` draws what the innermost layer reached (the call's tool or model, a segment's loop). */
function Layer({ layers, index, inside, core: drawCore }: { layers: TracedLayer[]; index: number; inside: number[][]; core: (index: number) => ComponentChildren }) {
  const layer = layers[index]!;
  const children = inside[index + 1] ?? [];
  // A layer that called next() with no recorded layer inside it reached the tool or the model.
  const core = layer.nextCalls > 0 && children.length === 0;
  return (
    <div class={`layer ${layer.source}`} data-layer={layer.name} data-source={layer.source} data-depth={layer.depth}>
      <div class="layer-head">
        {layer.source === 'builtin' && <span class="builtin-tag small">koagent</span>} <strong>{layer.name}</strong>
        <span class="muted small"> {SOURCE_LABEL[layer.source]}{layer.hooks?.length ? ` · ${layer.hooks.join(', ')}` : ''}</span>
        <span class="timing small">in {ms(layer.inAt)} · out {layer.outAt === undefined ? '—' : ms(layer.outAt)} · self {ms(layer.selfMs)} · next() ×{layer.nextCalls}</span>
      </div>
      {layer.effects.length > 0 ? <ul class="effects">{layer.effects.map((effect) => <Effect effect={effect} />)}</ul> : <div class="muted small unchanged">passed it on unchanged</div>}
      {children.map((child) => <Layer layers={layers} index={child} inside={inside} core={drawCore} />)}
      {core && drawCore(index)}
    </div>
  );
}

/** Which layers sit directly inside each (index + 1; 0: the outermost ones). */
function nesting(layers: TracedLayer[]): number[][] {
  const inside: number[][] = [];
  parents(layers).forEach((parent, i) => (inside[parent + 1] ??= []).push(i));
  return inside;
}

/** A segment's run layers (run middleware, criogen onStart/onEnd), drawn around the loop they ran. */
export function SegmentOnion({ segment }: { segment: TracedSegment }) {
  const inside = nesting(segment.layers);
  const loop = () => <div class="core">the loop: the segment's model and tool calls</div>;
  return (
    <div class="onion" data-segment={segment.segment} data-testid="segment-onion">
      <div class="call-head">
        <span class="kind run">run</span> <strong>segment {segment.segment}</strong>
        <span class="muted small"> {ms(segment.durationMs)} · </span>
        <span class={`outcome ${segment.outcome}`}>{segment.outcome}</span>
        {segment.agentPath && <span class="muted small"> · in {segment.agentPath.join(' › ')}</span>}
      </div>
      {segment.layers.length === 0 ? <p class="muted small">No run layers: the agent has no run middleware and no criogen onStart/onEnd.</p> : (inside[0] ?? []).map((i) => <Layer layers={segment.layers} index={i} inside={inside} core={loop} />)}
    </div>
  );
}

/** The calls a sub-agent made inside the call at `index`: those naming it as their parent, before the call's id is used again. */
export function subagentCalls(all: TracedCall[], index: number): number[] {
  const call = all[index]!;
  const found: number[] = [];
  for (let i = index + 1; i < all.length; i++) {
    const other = all[i]!;
    if (other.id === call.id && other.parentCallId === call.parentCallId) break; // the same call again, in a later segment
    if (other.parentCallId === call.id && (other.agentPath?.length ?? 0) === (call.agentPath?.length ?? 0) + 1) found.push(i);
  }
  return found;
}

/** The onion of the call at `index` of the run's calls, and the calls of the sub-agent it ran, nested under it. */
export function Onion({ index, all }: { index: number; all: TracedCall[] }) {
  const call = all[index]!;
  const inside = nesting(call.layers);
  const children = subagentCalls(all, index);
  const subagent = children.length > 0 && (
    <div class="subagent" data-testid="subagent-calls">
      <div class="small">the sub-agent's calls, made inside this call</div>
      {children.map((child) => <Onion index={child} all={all} />)}
    </div>
  );
  // The sub-agent ran inside the tool: its calls go inside the innermost layer that reached it.
  const coreAt = call.layers.findIndex((layer, i) => layer.nextCalls > 0 && (inside[i + 1] ?? []).length === 0);
  return (
    <div class="onion" data-call={call.id} data-index={index}>
      <div class="call-head">
        <span class={`kind ${call.kind}`}>{call.kind}</span> <strong>{call.name}</strong>
        {call.model !== undefined && <span class="model small" data-testid="call-model"> {call.model}{call.provider ? ` (${call.provider})` : ''}</span>}
        <span class="muted small"> {call.id} · step {call.step} · segment {call.segment} · {ms(call.durationMs)} · </span>
        <span class={`outcome ${call.outcome}`}>{call.outcome}</span>
        {call.agentPath && <span class="muted small"> · in {call.agentPath.join(' › ')}</span>}
      </div>
      {call.layers.length === 0 ? <Core call={call}>{subagent}</Core> : (inside[0] ?? []).map((i) => <Layer layers={call.layers} index={i} inside={inside} core={(at) => <Core call={call}>{at === coreAt ? subagent : null}</Core>} />)}
      {call.layers.length > 0 && coreAt < 0 && subagent}
    </div>
  );
}
