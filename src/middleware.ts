import type { LayerFn } from './compose.js';
import type { ModelContext, RunContext, ToolContext } from './context.js';
import type { GenerateResult } from './model.js';
import type { RunResult } from './result.js';
import type { ToolOutcome } from './tools/outcome.js';

/**
 * A middleware: a plain object with any of the three hook points, each `(ctx, next) => outcome`.
 * Code before `await next()` runs on the way in (registration order), code after it on the way
 * out (reverse order).
 *
 * @example agent.use({ name: 'timer', async tool(ctx, next) {
 *   const t0 = performance.now(); const outcome = await next();
 *   ctx.metadata.toolMs = performance.now() - t0; return outcome; } });
 */
export interface Middleware {
  /** Shown in errors, events and traces. Defaults to `middleware#<position>`. */
  name?: string;
  run?: LayerFn<RunContext, RunResult>;
  model?: LayerFn<ModelContext, GenerateResult>;
  tool?: LayerFn<ToolContext, ToolOutcome>;
  /**
   * `model` layers only: hold streamed text until this layer has returned the reply, so a
   * consumer never sees text this layer would change (redaction, output guardrails).
   */
  holdStream?: boolean;
  /** Whether the layer also runs inside sub-agents of this agent (default `inherit`). */
  scope?: 'inherit' | 'lead-only';
}

/**
 * Identity function that exists for type inference only.
 *
 * @example export const logTools = defineMiddleware({ name: 'log-tools', tool: (ctx, next) => next() });
 */
export function defineMiddleware<M extends Middleware>(middleware: M): M {
  return middleware;
}

export const HOOK_POINTS = ['run', 'model', 'tool'] as const;
export const AGENT_HOOK_METHODS = ['preToolCall', 'postToolCall', 'preGenerate', 'postGenerate'] as const;
export const CRIOGEN_HOOK_METHODS = ['onStart', 'beforeModel', 'afterModel', 'beforeTool', 'afterTool', 'onEnd'] as const;

export type Dialect = 'middleware' | 'agent-hook' | 'hook';

/** Tell which kind of extension an object is, by the names of its functions. */
export function dialectOf(value: unknown, where: string): Dialect {
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`${where}: expected a middleware { name, run?, model?, tool? } or a hook object, got ${value === null ? 'null' : typeof value}`);
  }
  const has = (names: readonly string[]) => names.filter((n) => typeof (value as Record<string, unknown>)[n] === 'function');
  const found: [Dialect, string[]][] = [
    ['middleware', has(HOOK_POINTS)],
    ['agent-hook', has(AGENT_HOOK_METHODS)],
    ['hook', has(CRIOGEN_HOOK_METHODS)],
  ];
  const kinds = found.filter(([, names]) => names.length > 0);
  const label = nameOf(value) ?? 'this object';
  if (kinds.length === 0) {
    throw new TypeError(`${where}: ${label} has none of run/model/tool (middleware), preToolCall/postToolCall/preGenerate/postGenerate (AgentHook) or onStart/beforeModel/afterModel/beforeTool/afterTool/onEnd (Hook)`);
  }
  if (kinds.length > 1) {
    const list = kinds.map(([kind, names]) => `${names.join(', ')} (${KIND_LABEL[kind]})`).join(' and ');
    throw new TypeError(`${where}: ${label} mixes ${list}; split it into one object per kind`);
  }
  const [kind] = kinds[0];
  if (kind === 'middleware') checkMiddleware(value as Middleware, where, label);
  return kind;
}

const KIND_LABEL: Record<Dialect, string> = { middleware: 'middleware', 'agent-hook': 'AgentHook', hook: 'Hook' };

function checkMiddleware(mw: Middleware, where: string, label: string): void {
  if (mw.name !== undefined && typeof mw.name !== 'string') throw new TypeError(`${where}: ${label}.name must be a string`);
  if (mw.scope !== undefined && mw.scope !== 'inherit' && mw.scope !== 'lead-only') {
    throw new TypeError(`${where}: ${label}.scope must be 'inherit' or 'lead-only'`);
  }
}

/** A readable name for an extension: its `name`, else its class name. */
export function nameOf(value: unknown): string | undefined {
  const v = value as { name?: unknown; constructor?: { name?: string } };
  if (typeof v.name === 'string' && v.name !== '') return v.name;
  const ctor = v.constructor?.name;
  return ctor && ctor !== 'Object' ? ctor : undefined;
}
