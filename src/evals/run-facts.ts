// What the scorers read of a finished run: the tool calls it made, with the arguments the model
// asked for and those the tool ran with (the layer trace's rewrites applied), and the effects
// the layers had on its calls. Read from the run state alone, so a run a worker made is read
// the same way as one made here.
import type { RunState } from '../api.js';
import { traceOf, type JsonChange, type TracedEffect } from '../features/layer-trace/record.js';

/**
 * One tool call of a run: the tool's name and arguments as the model asked, and as the tool
 * was entered with after the layers' rewrites (when the run recorded its layer trace).
 *
 * @example const ran = run.toolCalls.filter((call) => call.name === 'weather').map((call) => call.args);
 *
 * @inline
 */
export interface RunToolCall {
  id: string;
  /** The tool's name after the layers (a layer may rename a call). */
  name: string;
  /** The arguments after the layers' rewrites; the model's own when the run has no layer trace. */
  args: unknown;
  askedName: string;
  askedArgs: unknown;
  /** Whether `name` and `args` come from the layer trace (false: the run recorded none). */
  traced: boolean;
}

/**
 * One effect a layer had on a call, with where it happened.
 *
 * @example const denials = run.effects.filter((e) => e.effect.type === 'denied');
 *
 * @inline
 */
export interface RunEffect {
  /** The layer's name (for a dialect's layer, its hook's name). */
  layer: string;
  /** The call's kind and name: a tool's name, or `turn` for a model call. */
  call: { id: string; kind: 'model' | 'tool'; name: string };
  effect: TracedEffect;
}

/**
 * The tool calls of a run, in the order the model made them.
 *
 * @example for (const call of toolCallsOf(result.state)) console.log(call.name, call.args);
 */
export function toolCallsOf(state: RunState): RunToolCall[] {
  const trace = traceOf(state);
  const traced = new Map((trace?.calls ?? []).filter((call) => call.kind === 'tool').map((call) => [call.id, call]));
  const calls: RunToolCall[] = [];
  for (const message of state.messages) {
    if (message.role !== 'assistant') continue;
    for (const asked of message.toolCalls ?? []) {
      const call = traced.get(asked.id);
      let target = { toolName: asked.name, args: copy(asked.args) };
      // Each layer's rewrite is its change to what it was given, in the order the layers were entered.
      for (const layer of call?.layers ?? []) {
        for (const effect of layer.effects) if (effect.type === 'rewrote-args') target = applied(target, effect.changes);
      }
      calls.push({ id: asked.id, name: target.toolName, args: target.args, askedName: asked.name, askedArgs: asked.args, traced: call !== undefined });
    }
  }
  return calls;
}

/**
 * Every effect the layers had on the run's calls, as its layer trace recorded them (none when it recorded no trace).
 *
 * @example const rewrote = effectsOf(run.state).some((e) => e.layer === 'tidy-city' && e.effect.type === 'rewrote-args');
 */
export function effectsOf(state: RunState): RunEffect[] {
  const effects: RunEffect[] = [];
  for (const call of traceOf(state)?.calls ?? []) {
    for (const layer of call.layers) {
      for (const effect of layer.effects) effects.push({ layer: layer.name, call: { id: call.id, kind: call.kind, name: call.name }, effect });
    }
  }
  return effects;
}

const copy = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

/** `target` with the changes of one layer applied (JSON-pointer paths under `/toolName` and `/args`). */
function applied(target: { toolName: string; args: unknown }, changes: readonly JsonChange[]): { toolName: string; args: unknown } {
  let { toolName, args } = target;
  for (const change of changes) {
    if (change.path === '/toolName') toolName = String(change.after);
    else if (change.path === '/args') args = copy(change.after);
    else if (change.path.startsWith('/args/')) args = withChange(args, change.path.slice('/args/'.length).split('/').map(unescape), change);
  }
  return { toolName, args };
}

function withChange(root: unknown, keys: string[], change: JsonChange): unknown {
  const top = typeof root === 'object' && root !== null ? root : {};
  let node = top as Record<string, unknown>;
  const set = (holder: Record<string, unknown>, key: string, value: unknown) => Object.defineProperty(holder, key, { value, enumerable: true, writable: true, configurable: true });
  for (const key of keys.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    node = (typeof next === 'object' && next !== null ? next : set(node, key, {})[key]) as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if ('after' in change) set(node, last, copy(change.after));
  // An array loses items only at its end (the trace compares arrays index by index).
  else if (Array.isArray(node)) node.length = Math.min(node.length, Number(last));
  else delete node[last];
  return top;
}

/** A JSON Pointer segment: `~1` is `/`, `~0` is `~`. */
const unescape = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');
