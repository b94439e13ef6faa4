// The span attributes of a traced layer, the same for live OpenTelemetry spans and OTLP export.
import type { HumanDecisionEffect, TracedCall, TracedLayer } from './record.js';

/** A span attribute's value, as both OpenTelemetry's API and OTLP JSON take it. */
export type AttributeValue = string | number | boolean | string[];

/** A layer's span name: `layer <name>`. */
export function layerSpanName(layer: TracedLayer): string {
  return `layer ${layer.name}`;
}

/** What a layer's span says of it: who it is, its time, and each of its effects. */
export function layerAttributes(layer: TracedLayer): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {
    'koagent.layer.name': layer.name,
    'koagent.layer.source': layer.source,
    'koagent.layer.self_ms': layer.selfMs,
    'koagent.layer.next_calls': layer.nextCalls,
    'koagent.layer.effects': layer.effects.map((e) => e.type),
  };
  if (layer.hooks !== undefined) attributes['koagent.layer.hooks'] = layer.hooks;
  for (const effect of layer.effects) {
    if (effect.type === 'human-decision') Object.assign(attributes, decisionAttributes(effect));
    else if ('changes' in effect) attributes[`koagent.layer.${effect.type}`] = JSON.stringify(effect.changes).slice(0, 4000);
    else if (effect.type === 'denied') {
      attributes['koagent.layer.denied.reason'] = effect.reason;
      if (effect.by !== undefined) attributes['koagent.layer.denied.by'] = effect.by;
    } else if (effect.type === 'asked-approval' && effect.reason !== undefined) attributes['koagent.layer.approval.reason'] = effect.reason;
    else if (effect.type === 'next-again') attributes['koagent.layer.next_again'] = effect.times;
    else if (effect.type === 'threw') {
      attributes['exception.message'] = effect.message;
      if (effect.code !== undefined) attributes['error.type'] = effect.code;
    }
  }
  return attributes;
}

/** Each layer's enclosing layer (its index), or -1 for the call itself: the onion, from the depths. */
export function enclosing(call: { layers: readonly TracedLayer[] }): number[] {
  const open: number[] = [];
  return call.layers.map((layer, i) => {
    open.length = Math.min(open.length, layer.depth);
    const parent = open.length > 0 ? open[open.length - 1] : -1;
    open[layer.depth] = i;
    return parent;
  });
}

/**
 * What a call's span (and its approval step's) says of a human's decision on it: the
 * `koagent.approval.*` attributes, the same on live spans and in OTLP export.
 */
export function decisionAttributes(effect: HumanDecisionEffect): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {
    'koagent.approval.decision': effect.decision,
    'koagent.approval.surface': effect.surface,
    'koagent.approval.at': effect.at,
    'koagent.approval.edited': effect.changes !== undefined,
  };
  if (effect.actor !== undefined) {
    attributes['koagent.approval.actor.id'] = effect.actor.id;
    if (effect.actor.name !== undefined) attributes['koagent.approval.actor.name'] = effect.actor.name;
  }
  if (effect.reason !== undefined) attributes['koagent.approval.reason'] = effect.reason;
  if (effect.changes !== undefined) attributes['koagent.approval.changes'] = JSON.stringify(effect.changes).slice(0, 4000);
  return attributes;
}

/** The human decision a traced call settled on, if any (its approval step's). */
export function decisionOf(call: TracedCall): HumanDecisionEffect | undefined {
  for (const layer of call.layers) for (const effect of layer.effects) if (effect.type === 'human-decision') return effect;
  return undefined;
}
