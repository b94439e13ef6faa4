// The layer trace as the build step installs it: a traced segment's stacks are built of the
// agent's parts with every user layer and tool step wrapped by a recording one, and the two call
// layers outermost. An untraced segment's stacks are built as if the feature did not exist.
import type { ModelContext, ToolContext } from '../../core/vocabulary/contexts.js';
import type { NamedMiddleware } from '../../core/vocabulary/middleware.js';
import type { GenerateResult } from '../../core/vocabulary/model.js';
import type { RunContext } from '../../core/vocabulary/contexts.js';
import type { RunResult } from '../../core/vocabulary/result.js';
import type { ToolOutcome } from '../../core/vocabulary/outcome.js';
import type { StackParts } from '../../core/stacks/stacks.js';
import type { LayerFn } from '../../core/vocabulary/layer.js';
import { traceModelLayer, traceRunLayer, traceToolLayer } from './calls.js';
import { recordedFn, recordedStep, type LayerIdentity } from './layers.js';

export type { LayerIdentity, TracedPoint } from './layers.js';

/** How a dialect's layer is named in the trace: carried by the layer the agent made, under a key no one else reads. */
const IDENTITY: unique symbol = Symbol('koagent.traceIdentity');

/** Name `layer` (a dialect's) in the trace by `identity`, not as a plain middleware. */
export function identifyLayer(layer: NamedMiddleware, identity: LayerIdentity): NamedMiddleware {
  Object.defineProperty(layer, IDENTITY, { value: identity });
  return layer;
}

function identityOf(mw: NamedMiddleware): LayerIdentity {
  const id = (mw as { [IDENTITY]?: LayerIdentity })[IDENTITY] ?? { source: 'middleware', name: () => mw.name };
  return mw.traceValues === false ? { ...id, withholdsValues: true } : id;
}

/** The parts of a traced segment's stacks: each user layer (run, model, tool) and tool step recording its pass. */
export function tracedParts(parts: StackParts): StackParts {
  const layers = parts.layers.map((mw) => {
    const id = identityOf(mw);
    const traced: NamedMiddleware = { ...mw };
    if (typeof mw.run === 'function') traced.run = recordedFn(mw.run as LayerFn<RunContext, RunResult>, id, 'run');
    if (typeof mw.model === 'function') traced.model = recordedFn(mw.model as LayerFn<ModelContext, GenerateResult>, id, 'model');
    if (typeof mw.tool === 'function') traced.tool = recordedFn(mw.tool as LayerFn<ToolContext, ToolOutcome>, id, 'tool');
    return traced;
  });
  const { tool } = parts;
  return {
    ...parts,
    layers,
    tool: { ...tool, validate: recordedStep(tool.validate), resolve: recordedStep(tool.resolve), policy: tool.policy.map(recordedStep), denial: recordedStep(tool.denial) },
  };
}

/** The layers of a traced segment: outermost in the run stack (it stores the record), the model and the tool stacks. */
export const traceCallLayers = { run: traceRunLayer, model: traceModelLayer, tool: traceToolLayer };
