// One call as the onion its layers made: each layer, outermost first, drawn inside the one
// before it, with when it was entered and left, its own time, how often it called next(), and
// what it did — a rewrite shown as a diff of the paths it changed.
import type { JsonChange, TracedCall, TracedEffect, TracedLayer } from '../trace-types.ts';
import { ms, show } from './client.ts';

const EFFECT_LABEL: Record<TracedEffect['kind'], string> = {
  'rewrote-args': 'rewrote the arguments',
  'rewrote-request': 'rewrote the request',
  'replaced-result': 'replaced the result',
  'replaced-reply': 'replaced the reply',
  'short-circuit': 'short-circuited (did not call next())',
  denied: 'denied the call',
  'asked-approval': 'asked for approval',
  'next-again': 'called next() again',
  threw: 'threw',
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
    effect.kind === 'denied' ? `: ${effect.reason}${effect.by ? ` (by ${effect.by})` : ''}`
    : effect.kind === 'asked-approval' ? (effect.reason ? `: ${effect.reason}` : '')
    : effect.kind === 'next-again' ? ` (${effect.times} times)`
    : effect.kind === 'threw' ? `: ${effect.message}${effect.code ? ` [${effect.code}]` : ''}`
    : '';
  return (
    <li class={`effect ${effect.kind}`} data-effect={effect.kind}>
      <span>{EFFECT_LABEL[effect.kind]}{detail}</span>
      {'changes' in effect && <Diff changes={effect.changes} />}
    </li>
  );
}

function Layer({ layers, index, call }: { layers: TracedLayer[]; index: number; call: TracedCall }) {
  const layer = layers[index];
  if (layer === undefined) return <div class="core">{call.kind === 'tool' ? `the tool ${call.name}` : 'the model'}</div>;
  const inner = layer.nextCalls > 0 ? <Layer layers={layers} index={index + 1} call={call} /> : null;
  return (
    <div class={`layer ${layer.source}`} data-layer={layer.name}>
      <div class="layer-head">
        <strong>{layer.name}</strong>
        <span class="muted small"> {layer.source}{layer.hooks?.length ? ` · ${layer.hooks.join(', ')}` : ''}</span>
        <span class="timing small">in {ms(layer.inAt)} · out {layer.outAt === undefined ? '—' : ms(layer.outAt)} · self {ms(layer.selfMs)} · next() ×{layer.nextCalls}</span>
      </div>
      {layer.effects.length > 0 ? <ul class="effects">{layer.effects.map((effect) => <Effect effect={effect} />)}</ul> : <div class="muted small">passed it on unchanged</div>}
      {inner}
    </div>
  );
}

/** The onion of one call, and the calls of the sub-agent it ran, nested under it. */
export function Onion({ call, all }: { call: TracedCall; all: TracedCall[] }) {
  const children = all.filter((other) => other.parentCallId === call.id);
  return (
    <div class="onion" data-call={call.id}>
      <div class="call-head">
        <span class={`kind ${call.kind}`}>{call.kind}</span> <strong>{call.name}</strong>
        <span class="muted small"> {call.id} · step {call.step} · segment {call.segment} · {ms(call.durationMs)} · </span>
        <span class={`outcome ${call.outcome}`}>{call.outcome}</span>
        {call.agentPath && <span class="muted small"> · in {call.agentPath.join(' › ')}</span>}
      </div>
      {call.layers.length === 0 ? <div class="core">no layers: the call went straight to {call.kind === 'tool' ? 'the tool' : 'the model'}</div> : <Layer layers={call.layers} index={0} call={call} />}
      {children.length > 0 && (
        <div class="subagent" data-testid="subagent-calls">
          <div class="muted small">sub-agent calls made inside this call</div>
          {children.map((child) => <Onion call={child} all={all} />)}
        </div>
      )}
    </div>
  );
}
