// The core's one seam for a tool that runs a run of its own inside a call (a sub-agent): what
// such a tool may know and do of the lead's run, declared here, so it needs nothing else of the
// core. The core knows that a call's outcome may carry a nested run (`ToolOutcome.nested`).
import type { ToolContext } from '../vocabulary/contexts.js';
import type { EventListener, PermissionListener } from '../vocabulary/events.js';
import type { NamedMiddleware } from '../vocabulary/middleware.js';
import type { NestedRunRecord, RunState, Usage } from '../vocabulary/state.js';
import { segmentOf } from './base-context.js';

/**
 * The lead's run, as a tool running a nested run inside one of its calls sees it.
 *
 * @example const host = nestedRunHost(ctx); const kept = host.kept(); host.addUsage(nested.usage);
 */
export interface NestedRunHost {
  /** Who listens to the lead's run: the nested run's events and permission records go to them too. */
  readonly listeners: readonly EventListener[];
  readonly permissionListeners: readonly PermissionListener[];
  /** The lead segment's mode: the nested run runs with the same features. */
  readonly mode: number;
  /** The lead agent's layers, outermost first (a sub-agent runs those it inherits outermost). */
  readonly layers: readonly NamedMiddleware[];
  /** The nested run kept behind this call (it waited for a human, or failed in an earlier attempt), if any. */
  kept(): NestedRunRecord | undefined;
  /** A human's decision, brought by a resume, on an approval the lead listed under `id`. */
  decisionOn(id: string): RunState['decisions'][string] | undefined;
  /** Whether `id` already names a call of the lead's run (so an approval cannot be listed under it). */
  holdsCall(id: string): boolean;
  /** Keep `state` behind this call (a failed nested run, for a retry of the call to continue). */
  keep(state: RunState): void;
  /** The nested run behind this call is over: it goes. */
  drop(): void;
  /** Usage the nested run spent, added to the lead's (every counter, koagent's own too). */
  addUsage(used: Usage): void;
}

/** The lead's run behind `ctx`, a tool call of it. */
export function nestedRunHost(ctx: ToolContext): NestedRunHost {
  const segment = segmentOf(ctx);
  const { writer, options } = segment;
  const id = ctx.toolCallId;
  return {
    listeners: options.listeners,
    permissionListeners: options.permissionListeners,
    mode: options.mode,
    layers: segment.agent.layers,
    kept: () => writer.nestedRun(id),
    decisionOn: (listed) => writer.decisionOn(listed),
    holdsCall: (other) => writer.entryOf(other) !== undefined,
    keep: (state) => writer.keepNestedRun(id, { state, approvals: {} }),
    drop: () => writer.dropNestedRun(id),
    addUsage: (used) => writer.addUsage(used),
  };
}
