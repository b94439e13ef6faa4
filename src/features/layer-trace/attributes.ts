// The span attributes of a traced layer, the same for live OpenTelemetry spans and OTLP export.
import type { TracedLayer } from './record.js';

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
    'koagent.layer.effects': layer.effects.map((e) => e.kind),
  };
  if (layer.hooks !== undefined) attributes['koagent.layer.hooks'] = layer.hooks;
  for (const effect of layer.effects) {
    if ('changes' in effect) attributes[`koagent.layer.${effect.kind}`] = JSON.stringify(effect.changes).slice(0, 4000);
    else if (effect.kind === 'denied') {
      attributes['koagent.layer.denied.reason'] = effect.reason;
      if (effect.by !== undefined) attributes['koagent.layer.denied.by'] = effect.by;
    } else if (effect.kind === 'asked-approval' && effect.reason !== undefined) attributes['koagent.layer.approval.reason'] = effect.reason;
    else if (effect.kind === 'next-again') attributes['koagent.layer.next_again'] = effect.times;
    else if (effect.kind === 'threw') {
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
