// Helpers of the layer-trace tests: a search tool, and the traced calls and layers of a run.
import { z } from 'zod';
import { defineTool, type RunResult } from '../../../src/index.js';
import { traceOf, type TracedCall, type TracedSegment } from '../../../src/trace.js';
import type { TracedLayer } from '../../../src/features/layer-trace/record.js';

export const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ q: z.string() }), execute: async ({ q }) => `found ${q}` });

export const deploy = defineTool({ name: 'deploy', description: 'Deploys', input: z.object({ env: z.string() }), needsApproval: true, execute: async ({ env }) => `deployed to ${env}` });

/** The run's traced calls (failing the test when it has no trace). */
export function callsOf(result: RunResult | { state: unknown }): TracedCall[] {
  const record = traceOf(result.state);
  if (record === undefined) throw new Error('the run has no layer trace');
  return record.calls;
}

/** The traced tool call `id` of the run (the last one, if it ran in several segments). */
export function toolCall(result: RunResult | { state: unknown }, id: string): TracedCall {
  const found = callsOf(result).filter((c) => c.kind === 'tool' && c.id === id);
  if (found.length === 0) throw new Error(`no traced call ${id}`);
  return found[found.length - 1];
}

/** The layer named `name` of a traced call (or of a segment's run layers). */
export function layer(call: TracedCall | TracedSegment, name: string): TracedLayer {
  const found = call.layers.find((l) => l.name === name);
  if (found === undefined) throw new Error(`${'id' in call ? `call ${call.id}` : `segment ${call.segment}`} has no layer ${name}: ${call.layers.map((l) => l.name).join(', ')}`);
  return found;
}
