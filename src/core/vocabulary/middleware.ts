import type { ModelContext, RunContext, ToolContext } from './contexts.js';
import type { GenerateResult } from './model.js';
import type { ToolOutcome } from './outcome.js';
import type { RunResult } from './result.js';

/**
 * A middleware: a plain object with any of the three hook points, each `(ctx, next) => outcome`.
 * Code before `await next()` runs on the way in (registration order), code after it on the way
 * out (reverse order). `C` is the type of `ctx.context` (see the agent's `contextSchema`).
 *
 * @example agent.use({ name: 'timer', async tool(ctx, next) {
 *   const t0 = performance.now(); const outcome = await next();
 *   ctx.metadata.toolMs = performance.now() - t0; return outcome; } });
 */
export interface Middleware<C = unknown> {
  /** Shown in errors, events and traces. Defaults to `middleware#<position>`. */
  name?: string;
  /** Around each run segment: `next()` runs the loop (model ↔ tools) and resolves to the segment's result. */
  run?: (ctx: RunContext<C>, next: () => Promise<RunResult>) => Promise<RunResult> | RunResult;
  /** Around each model call: `next()` asks the model and resolves to its reply. */
  model?: (ctx: ModelContext<C>, next: () => Promise<GenerateResult>) => Promise<GenerateResult> | GenerateResult;
  /** Around each tool call: `next()` runs the rest of the tool pipeline and resolves to the call's outcome. */
  tool?: (ctx: ToolContext<C>, next: () => Promise<ToolOutcome>) => Promise<ToolOutcome> | ToolOutcome;
  /**
   * `tool` layers only: the layer may run before argument validation, so it sees calls as the
   * model wrote them — an unknown tool name, arguments that do not fit — and may repair them;
   * validation judges what it passes on. Validation runs just before the first tool layer
   * without it (criogen Hooks have it; native middleware and AgentHooks do not).
   */
  rawCalls?: boolean;
  // The fields above are what the core reads. A feature that reads a field of its own declares
  // it on this interface from its own module (declaration merging), with its documentation.
}

/**
 * Identity function that exists for type inference only.
 *
 * @example export const logTools = defineMiddleware({ name: 'log-tools', tool: (ctx, next) => next() });
 */
export function defineMiddleware<M extends Middleware>(middleware: M): M {
  return middleware;
}

/**
 * A middleware with its name settled (its own, or its position), ready to be layers. `self` is
 * the object its functions are called on (`this`): the user's own object or class instance.
 */
export type NamedMiddleware = Middleware<any> & { name: string; self?: object };
