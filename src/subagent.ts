import { z } from 'zod';
import { SUBAGENT, type Agent } from './agent.js';
import type { SubagentInfo, ToolContext } from './context.js';
import { RunFailedError } from './errors.js';
import type { RunResult } from './result.js';
import type { Usage } from './state.js';
import { callOf } from './tools/call.js';
import { defineTool, type Tool } from './tools/define.js';
import { suspend } from './tools/execute.js';

/** How an agent appears as another agent's tool. */
export interface SubagentToolOptions {
  /** The tool's name (default: the agent's name). */
  name?: string;
  description: string;
}

const input = z.object({ task: z.string().describe('What the sub-agent should do, in full') });

/**
 * Run `agent` as a tool call of the current run: a run of its own (own run id, same session),
 * inside the parent's inherited layers, hearing the parent's listeners, cancelled with the
 * call. Its usage adds to the parent's. If it suspends for approval, the parent's call
 * suspends with it, and resuming the parent resumes it.
 */
export function subagentTool(agent: Agent, options: SubagentToolOptions): Tool {
  if (typeof options !== 'object' || options === null || typeof options.description !== 'string') {
    throw new TypeError(`agent.asTool(options): give { description } telling the lead model what ${agent.name} does`);
  }
  return defineTool({
    name: options.name ?? agent.name,
    description: options.description,
    input,
    async execute({ task }, ctx) {
      const parent = callOf(ctx).run;
      const child = parent.state.children[ctx.toolCallId];
      const before = child?.state.usage;
      let result: RunResult;
      try {
        result = await agent[SUBAGENT](task, child && { state: child.state, decisions: child.decisions ?? {} }, {
          sessionId: ctx.sessionId,
          signal: ctx.signal,
          metadata: { ...ctx.metadata },
          listeners: [...parent.listeners],
          streaming: parent.streaming,
          subagent: subagentInfo(agent.name, ctx),
          inherited: parent.setup.inheritable,
          // The call has no span when the lead's does not record (sampled out); the lead's run
          // span then passes that decision on, where no parent would start a new root trace.
          parentSpan: callOf(ctx).span ?? parent.span,
        });
      } catch (error) {
        // A failed sub-run spent tokens too; its state is of no further use to this call.
        if (error instanceof RunFailedError) addUsage(parent.state.usage, error.state.usage, before);
        delete parent.state.children[ctx.toolCallId];
        throw error;
      }
      addUsage(parent.state.usage, result.usage, before);
      if (result.status === 'suspended') return suspend(result.state);
      delete parent.state.children[ctx.toolCallId];
      // A cancelled sub-run has no answer: its last text would pass for one. Throwing while the
      // call's signal is aborted settles the call as `aborted`.
      if (result.stopReason === 'aborted') throw new Error(`${agent.name} was cancelled before it answered`);
      return result.text;
    },
  });
}

function subagentInfo(name: string, ctx: ToolContext): SubagentInfo {
  const above = ctx.subagent;
  return { name, depth: (above?.depth ?? 0) + 1, parentRunId: ctx.runId, path: [...(above?.path ?? [ctx.agentName]), name] };
}

/** Add what the sub-run used in this segment (a resumed one counted its earlier segments already). */
function addUsage(total: Usage, used: RunResult['usage'], before: Usage | undefined): void {
  for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'modelCalls', 'toolCalls'] as const) {
    total[key] += used[key] - (before?.[key] ?? 0);
  }
}
