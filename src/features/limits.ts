import type { RunState, StopCondition, StopReason } from '../core/vocabulary/state.js';

/**
 * Per-run budgets. Reaching one ends the run between steps (never in the middle of a tool
 * call) with stop reason `limit:model_calls`, `limit:tool_calls` or `limit:tokens`.
 *
 * @example createAgent({ model, limits: { modelCalls: 10, tokens: 50_000 } })
 *
 * @inline
 */
export interface Limits {
  /** Model calls, side calls (`ctx.generate`) and sub-agents' calls included. */
  modelCalls?: number;
  toolCalls?: number;
  /** Input plus output tokens. */
  tokens?: number;
}

/**
 * Stop once the run has taken `count` model turns (stop reason `max_steps`): what `maxSteps` is.
 *
 * @example createAgent({ model, stopWhen: stepCountIs(5) })
 */
export function stepCountIs(count: number): StopCondition {
  return (state) => state.steps >= count && 'max_steps';
}

/**
 * Stop once the model has called `toolName` and the call has settled: its result is the last
 * thing in the transcript (stop reason `stop_when`).
 *
 * @example createAgent({ model, tools: [search, finalAnswer], stopWhen: hasToolCall('final_answer') })
 */
export function hasToolCall(toolName: string): StopCondition {
  return (state) => {
    const messages = state.messages;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (m.role === 'tool') continue;
      return m.role === 'assistant' && m.toolCalls?.some((call) => call.name === toolName) === true;
    }
    return false;
  };
}

/** The stop conditions of the agent's `limits`: the first budget the run has used up. */
export function limitsReached(limits: Limits): StopCondition {
  const checks: [number | undefined, (s: Readonly<RunState>) => number, StopReason][] = [
    [limits.modelCalls, (s) => s.usage.modelCalls, 'limit:model_calls'],
    [limits.toolCalls, (s) => s.usage.toolCalls, 'limit:tool_calls'],
    [limits.tokens, (s) => s.usage.totalTokens, 'limit:tokens'],
  ];
  const set = checks.filter(([limit]) => limit !== undefined) as [number, (s: Readonly<RunState>) => number, StopReason][];
  return (state) => {
    for (const [limit, used, reason] of set) if (used(state) >= limit) return reason;
    return false;
  };
}
