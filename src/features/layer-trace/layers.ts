// The recording layers of the layer trace: each user layer's function (run, model and tool) and
// each of koagent's tool steps wrapped to note when it was entered and left, how often it called next(), and what it
// changed. Only the stacks of a traced segment are built of these: an untraced one has none.
import type { Layer, LayerFn } from '../../core/vocabulary/layer.js';
import type { BaseContext, ModelContext, RunContext, ToolContext } from '../../core/vocabulary/contexts.js';
import type { RunState } from '../../core/vocabulary/state.js';
import type { Message } from '../../core/vocabulary/messages.js';
import type { GenerateResult } from '../../core/vocabulary/model.js';
import type { ToolOutcome } from '../../core/vocabulary/outcome.js';
import type { RunResult } from '../../core/vocabulary/result.js';
import { liveCall, type LiveCall } from './calls.js';
import { bounded, decisionEffect, jsonChanges, type JsonChange, type TracedEffect, type TracedLayer } from './record.js';
import { decisionIn } from '../../core/state/decisions.js';
import { approvalStep } from '../../tools/approval.js';

// The middleware field only the layer trace reads: declared here, on the public `Middleware`, so
// it is the trace's own data (the entry point imports this module, so the field reaches its users).
declare module '../../core/vocabulary/middleware.js' {
  interface Middleware<C> {
    /**
     * Layer trace: `false` keeps the values out of the changes recorded for this layer and for
     * every layer inside it in the same call (each value reads `[withheld]`; the paths stay), for
     * a layer that removes what must not be kept, such as redaction.
     */
    traceValues?: boolean;
  }
}

/** What a change's values read when a layer keeps them out of the trace (`traceValues: false`). */
export const WITHHELD = '[withheld]';

/** The hook point a layer is recorded at. */
export type TracedPoint = 'run' | 'model' | 'tool';

/** Who a layer is, as the trace names it: a middleware, a dialect's hooks, or koagent's own step. */
export interface LayerIdentity {
  source: TracedLayer['source'];
  /** The layer keeps values out of its changes and those of the layers inside it (`traceValues: false`). */
  withholdsValues?: boolean;
  /** The layer's name at this call (an AgentHook layer's depends on the hooks registered now). */
  name(point: TracedPoint): string;
  /** The dialect methods that ran, from what the layer did. */
  hooks?(point: TracedPoint, ran: { threw: boolean; nextCalls: number; approval: boolean }): string[];
}

/** How a hook point's calls are compared before and after a layer. */
interface PointDiff<C, T, S> {
  point: TracedPoint;
  before(ctx: C): S;
  rewrote(ctx: C, before: S): TracedEffect | undefined;
  returned(inner: T | undefined, out: T, layer: string): TracedEffect[];
}

type Next<T> = () => Promise<T>;

/** Record one layer's pass through the call `live`; `run(next)` runs the layer with the counting `next` it is given. */
function pass<C, T, S>(live: LiveCall, ctx: C, id: LayerIdentity, diff: PointDiff<C, T, S>, run: (next: Next<T>) => Promise<T> | T, next: Next<T>, first?: TracedEffect): Promise<T> {
  const start = performance.now();
  const layer: TracedLayer = { name: id.name(diff.point), source: id.source, depth: live.depth, inAt: round(start - live.t0), selfMs: 0, nextCalls: 0, effects: [] };
  live.call.layers.push(layer);
  // Inside a layer that withholds values, or that layer itself: its changes are recorded without them.
  const withheld = id.withholdsValues === true || (live.withholding ?? 0) > 0;
  const effect = (e: TracedEffect): TracedEffect => (withheld ? withoutValues(e) : e);
  if (first !== undefined) layer.effects.push(effect(first));
  const before = diff.before(ctx);
  let inside = 0;
  let inner: T | undefined;
  const counted: Next<T> = () => {
    layer.nextCalls++;
    if (layer.nextCalls === 1) {
      const rewrote = diff.rewrote(ctx, before);
      if (rewrote !== undefined) layer.effects.push(effect(rewrote));
    }
    const t = performance.now();
    live.depth++;
    if (id.withholdsValues === true) live.withholding = (live.withholding ?? 0) + 1;
    const settle = () => {
      live.depth--;
      if (id.withholdsValues === true) live.withholding! -= 1;
      inside += performance.now() - t;
    };
    return next().then((value) => {
      settle();
      inner = value;
      return value;
    }, (error: unknown) => {
      settle();
      throw error;
    });
  };
  const finish = (threw: boolean, approval: boolean) => {
    const end = performance.now();
    layer.selfMs = round(end - start - inside);
    if (!threw) layer.outAt = round(end - live.t0);
    if (layer.nextCalls > 1) layer.effects.push({ type: 'next-again', times: layer.nextCalls - 1 });
    const hooks = id.hooks?.(diff.point, { threw, nextCalls: layer.nextCalls, approval });
    if (hooks !== undefined) layer.hooks = hooks;
  };
  let returned: Promise<T> | T;
  try {
    returned = run(counted);
  } catch (error) {
    return Promise.reject(failed(layer, error, finish));
  }
  return Promise.resolve(returned).then((out) => {
    if (layer.nextCalls === 0) layer.effects.push({ type: 'short-circuit' });
    layer.effects.push(...diff.returned(inner, out, layer.name).map(effect));
    finish(false, (out as { requiresApproval?: boolean } | undefined)?.requiresApproval === true);
    return out;
  }, (error: unknown) => {
    throw failed(layer, error, finish);
  });
}

function failed(layer: TracedLayer, error: unknown, finish: (threw: boolean, approval: boolean) => void): unknown {
  const e = error as { message?: unknown; code?: unknown } | undefined;
  const effect: TracedEffect = { type: 'threw', message: bounded(typeof e?.message === 'string' ? e.message : String(error)) as string };
  if (typeof e?.code === 'string') effect.code = e.code;
  layer.effects.push(effect);
  finish(true, false);
  return error;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** An effect with its changes' values replaced by `[withheld]` (present ones only: added and removed stay told apart). */
function withoutValues(effect: TracedEffect): TracedEffect {
  if (!('changes' in effect) || effect.changes === undefined) return effect;
  const changes = effect.changes.map((c): JsonChange => ({ path: c.path, ...('before' in c ? { before: WITHHELD } : {}), ...('after' in c ? { after: WITHHELD } : {}) }));
  return { ...effect, changes };
}

/** A user layer's function, recording its pass when its call (or segment) is traced. */
export function recordedFn<C extends BaseContext, T>(fn: LayerFn<C, T>, id: LayerIdentity, point: TracedPoint): LayerFn<C, T> {
  const diff = (point === 'tool' ? toolDiff : point === 'model' ? modelDiff : runDiff) as unknown as PointDiff<C, T, unknown>;
  return function recorded(this: unknown, ctx, next) {
    const live = liveCall(ctx);
    if (live === undefined) return fn.call(this, ctx, next);
    return pass(live, ctx, id, diff, (counted) => fn.call(this, ctx, counted), next);
  };
}

/**
 * One of koagent's tool steps, recording its pass. The
 * approval step's pass on a call a human decided on says first what they decided.
 */
export function recordedStep(step: Layer<ToolContext, ToolOutcome>): Layer<ToolContext, ToolOutcome> {
  const id: LayerIdentity = { source: 'builtin', name: () => step.name };
  const { fn } = step;
  const decided = step.name === approvalStep.name ? humanDecision : () => undefined;
  return {
    ...step,
    fn(ctx, next) {
      const live = liveCall(ctx);
      if (live === undefined) return fn(ctx, next);
      return pass(live, ctx, id, toolDiff, (counted) => fn(ctx, counted), next, decided(ctx));
    },
  };
}

/** What a human decided on this call, for the segment it settles in, if anything. */
function humanDecision(ctx: ToolContext): TracedEffect | undefined {
  const record = decisionIn(ctx.state as RunState, ctx.toolCallId);
  return record === undefined ? undefined : decisionEffect(record);
}

// --- tool calls ----------------------------------------------------------------------------

interface ToolBefore {
  name: string;
  args: unknown;
}

const toolDiff: PointDiff<ToolContext, ToolOutcome, ToolBefore> = {
  point: 'tool',
  before: (ctx) => ({ name: ctx.toolName, args: bounded(ctx.args) }),
  rewrote(ctx, before) {
    const changes: JsonChange[] = ctx.toolName === before.name ? [] : [{ path: '/toolName', before: before.name, after: ctx.toolName }];
    changes.push(...jsonChanges(before.args, bounded(ctx.args), '/args'));
    return changes.length === 0 ? undefined : { type: 'rewrote-args', changes };
  },
  returned(inner, out, layer) {
    if (inner === out || typeof out !== 'object' || out === null) return [];
    const error = out.error;
    if (error?.kind === 'denied' && !(inner?.error?.kind === 'denied' && inner.error.message === error.message)) {
      return [{ type: 'denied', reason: bounded(error.message) as string, by: error.by ?? layer }];
    }
    if (out.requiresApproval === true && inner?.requiresApproval !== true) {
      const reason = out.approval?.reason;
      return [reason === undefined ? { type: 'asked-approval' } : { type: 'asked-approval', reason }];
    }
    if (inner === undefined) return [];
    const changes = jsonChanges(outcomeView(inner), outcomeView(out));
    return changes.length === 0 ? [] : [{ type: 'replaced-result', changes }];
  },
};

function outcomeView(outcome: ToolOutcome): unknown {
  const view: Record<string, unknown> = { result: outcome.result };
  if (outcome.error !== undefined) view.error = { kind: outcome.error.kind, message: outcome.error.message };
  if (outcome.content !== undefined) view.content = outcome.content;
  return bounded(view);
}

// --- model calls ---------------------------------------------------------------------------

interface ModelBefore {
  request: unknown;
  /** The transcript as three references and a length: copying it for every layer would cost its length per call. */
  length: number;
  first: Message | undefined;
  last: Message | undefined;
}

/** The request's own fields: the transcript is compared by its ends, the tools by name. */
function requestView(ctx: ModelContext): unknown {
  const { messages: _messages, signal: _signal, tools, ...rest } = ctx.request;
  return bounded({ ...rest, tools: Array.isArray(tools) ? tools.map((t) => t.name) : tools });
}

// The read-only transcript: three reads of it per layer. An edit inside a message, or a swap in
// the middle of the transcript, keeps both ends and is not shown.
const rawMessages = (ctx: ModelContext): readonly Message[] => ctx.state.messages;

const modelDiff: PointDiff<ModelContext, GenerateResult, ModelBefore> = {
  point: 'model',
  before(ctx) {
    const messages = rawMessages(ctx);
    return { request: requestView(ctx), length: messages.length, first: messages[0], last: messages[messages.length - 1] };
  },
  rewrote(ctx, before) {
    const changes = jsonChanges(before.request, requestView(ctx), '/request');
    const now = rawMessages(ctx);
    if (now.length !== before.length || now[0] !== before.first || now[before.length - 1] !== before.last) {
      const appended = now.length > before.length && now[0] === before.first && now[before.length - 1] === before.last;
      if (appended) for (let i = before.length; i < now.length && changes.length < 40; i++) changes.push({ path: `/messages/${i}`, after: bounded(now[i]) });
      else changes.push({ path: '/messages', before: `${before.length} messages`, after: `${now.length} messages` }, ...(now[0] === before.first ? [] : [{ path: '/messages/0', before: bounded(before.first), after: bounded(now[0]) }]));
    }
    return changes.length === 0 ? undefined : { type: 'rewrote-request', changes };
  },
  returned(inner, out) {
    if (inner === undefined || inner === out || typeof out !== 'object' || out === null) return [];
    const view = (r: GenerateResult) => bounded({ message: r.message, finishReason: r.finishReason });
    const changes = jsonChanges(view(inner), view(out));
    return changes.length === 0 ? [] : [{ type: 'replaced-reply', changes }];
  },
};

// --- run segments --------------------------------------------------------------------------

/** What a run layer's result is compared by: how the segment ended and what it answered. */
const resultView = (result: RunResult) => bounded({ status: result.status, stopReason: result.stopReason, text: result.text, output: result.output });

const runDiff: PointDiff<RunContext, RunResult, undefined> = {
  point: 'run',
  before: () => undefined,
  // The run's input is the transcript's; a run layer's rewrites show in the model calls' requests.
  rewrote: () => undefined,
  returned(inner, out) {
    if (inner === undefined || inner === out || typeof out !== 'object' || out === null) return [];
    const changes = jsonChanges(resultView(inner), resultView(out));
    return changes.length === 0 ? [] : [{ type: 'replaced-result', changes }];
  },
};
