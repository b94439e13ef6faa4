import { z } from 'zod';
import { nestedRunHost } from '../../core/run/nested-run.js';
import type { SubagentInfo, Tool, ToolContext } from '../../core/vocabulary/contexts.js';
import { RunFailedError } from '../../core/vocabulary/errors.js';
import { ownValue, setOwn } from '../../core/vocabulary/json.js';
import { functionSchema, optionsSchema, parseOptions } from '../../core/vocabulary/options.js';
import type { EventListener, PermissionListener } from '../../core/vocabulary/events.js';
import type { NamedMiddleware } from '../../core/vocabulary/middleware.js';
import type { RunResult } from '../../core/vocabulary/result.js';
import type { Usage } from '../../core/vocabulary/state.js';
import { defineTool } from '../../tools/define.js';
import { suspendWith } from '../../core/run/tool-steps.js';
import { parentSpanOf, type Span } from '../tracing.js';
import { continuation, waitingRun, type Continuation } from './nested-runs.js';

// The middleware field only sub-agents read: declared here, on the public `Middleware`, so it is
// this feature's own data (the entry point imports this module, so the field reaches its users).
declare module '../../core/vocabulary/middleware.js' {
  interface Middleware<C> {
    /** Whether the layer also runs inside sub-agents of this agent (default `inherit`). */
    scope?: 'inherit' | 'lead-only';
  }
}

/** Why a middleware's `scope` is refused, if it is (checked when the middleware is given). */
export function scopeProblem(scope: unknown): string | undefined {
  return scope === undefined || scope === 'inherit' || scope === 'lead-only' ? undefined : "must be 'inherit' or 'lead-only'";
}

/**
 * How an agent appears as another agent's tool.
 *
 * @example researcher.asTool({ name: 'research', description: 'Researches a topic and reports back' })
 *
 * @inline
 */
export interface SubagentToolOptions<C = unknown> {
  /** The tool's name (default: the agent's name). */
  name?: string;
  description: string;
  /**
   * The sub-agent's run context, made from the lead's (`ctx.context` of the calling run); without
   * it, the sub-agent gets the lead's context as it is.
   *
   * @example researcher.asTool({ description: 'Researches', context: (lead: AppContext) => ({ userId: lead.userId }) })
   */
  context?: (leadContext: any) => C;
}

/** How a parent's call runs its sub-agent: inside the parent's run, hearing what it hears. */
export interface ChildRunOptions {
  sessionId: string;
  /** The child run's context: the lead's, or what `asTool({ context })` made of it. */
  context: unknown;
  signal: AbortSignal;
  metadata: Record<string, unknown>;
  listeners: readonly EventListener[];
  permissionListeners: readonly PermissionListener[];
  /** The parent segment's mode (a streamed run streams its sub-agents too). */
  mode: number;
  subagent: SubagentInfo;
  /** The parent's layers, run outermost in the child's run. */
  inherited: readonly NamedMiddleware[];
  parentSpan: Span | undefined;
}

/** What the sub-agent tool needs of the agent it runs. */
export interface ChildRunner {
  readonly name: string;
  /** The agent has an output schema: the lead reads its checked answer (as JSON) rather than its last text. */
  readonly structured?: boolean;
  /** A new run for `input`, or, with `resume`, the child run kept behind the call (it waited for a human, or failed). */
  runChild(input: string, resume: Continuation | undefined, options: ChildRunOptions): Promise<RunResult>;
}

const input = z.object({ task: z.string().describe('What the sub-agent should do, in full') });

const subagentToolOptionsSchema = optionsSchema({
  name: z.string({ error: 'must be a tool name' }).optional(),
  description: z.string(),
  context: functionSchema('a function (leadContext) => the sub-agent\'s context').optional(),
}, { noun: 'an option of asTool', aliases: { toolName: 'name', desc: 'description', instructions: 'description', ctx: 'context', runContext: 'context' } });

/**
 * A tool that runs `runner`'s agent for a call of the current run: a run of its own (own run
 * id, same session), inside the parent's inherited layers, hearing the parent's event and
 * permission listeners, cancelled with the call. Its usage adds to the parent's. If it
 * suspends for approval, the call suspends with it, and resuming the parent resumes it.
 */
export function subagentTool(runner: ChildRunner, options: SubagentToolOptions<any>): Tool {
  if (typeof options !== 'object' || options === null || typeof options.description !== 'string') {
    throw new TypeError(`agent.asTool(options): give { description } telling the lead model what ${runner.name} does`);
  }
  parseOptions(subagentToolOptionsSchema, options, 'agent.asTool(options)');
  return defineTool({
    name: options.name ?? runner.name,
    description: options.description,
    input,
    async execute({ task }, ctx) {
      const parent = nestedRunHost(ctx);
      const resume = continuation(parent);
      const before = resume?.state.usage;
      let result: RunResult;
      try {
        result = await runner.runChild(task, resume, {
          sessionId: ctx.sessionId,
          context: options.context === undefined ? ctx.context : options.context(ctx.context),
          signal: ctx.signal,
          metadata: { ...ctx.metadata },
          listeners: parent.listeners,
          permissionListeners: parent.permissionListeners,
          mode: parent.mode,
          subagent: subagentInfo(runner.name, ctx),
          // The lead's own list (the same object every call): the child builds its stacks once per list.
          inherited: parent.layers,
          parentSpan: parentSpanOf(ctx),
        });
      } catch (error) {
        // A failed child run spent tokens too. Its state stays with the call: a retry of the call
        // continues that run (same run id, its completed calls not run again).
        if (error instanceof RunFailedError) {
          parent.addUsage(spent(error.state.usage, before));
          parent.keep(error.state);
        } else parent.drop();
        throw error;
      }
      parent.addUsage(spent(result.usage, before));
      if (result.status === 'suspended') {
        const approvals = result.pendingApprovals.map((p) => ({ ...p, path: [runner.name, ...(p.path ?? [])] }));
        return suspendWith(waitingRun(parent, ctx.runVar, ctx.toolCallId, result.state, approvals));
      }
      parent.drop();
      // A cancelled child run has no answer: its last text would pass for one. Throwing while the
      // call's signal is aborted settles the call as `aborted`.
      if (result.stopReason === 'aborted') throw new Error(`${runner.name} was cancelled before it answered`);
      return runner.structured === true ? result.state.output ?? null : result.text;
    },
  });
}

/** The layers of a lead agent its sub-agents run outermost: all but `scope: 'lead-only'` ones. */
export function inheritable(layers: readonly NamedMiddleware[]): NamedMiddleware[] {
  return layers.filter((mw) => mw.scope !== 'lead-only');
}

function subagentInfo(name: string, ctx: ToolContext): SubagentInfo {
  const above = ctx.subagent;
  return { name, depth: (above?.depth ?? 0) + 1, parentRunId: ctx.runId, path: [...(above?.path ?? [ctx.agentName]), name] };
}

/** What the child run used in this segment (a resumed one counted its earlier segments already). */
function spent(used: Usage, before: Usage | undefined): Usage {
  if (before === undefined) return used;
  // Every counter: koagent's own and those the sub-agent's layers counted.
  const out = { ...used };
  for (const key of Object.keys(used)) setOwn(out, key, (used[key] ?? 0) - (ownValue(before, key) ?? 0));
  return out;
}
