import type { Message } from './messages.js';
import type { PendingApproval, RunState, StopReason, Usage } from './state.js';

/**
 * What a run segment resolves to (`run`, `send`, `resume`, `stream().result`). `O` is the type
 * of `output`: the output schema's, when the agent or the run has one.
 *
 * @example const { text, usage } = await agent.run('Hello');
 */
export interface RunResult<O = unknown> {
  runId: string;
  sessionId: string;
  status: 'completed' | 'suspended';
  stopReason: StopReason;
  /** The last assistant message's text. */
  text: string;
  /**
   * With an output schema, the final answer parsed by it; without one, `text`, or the output a
   * layer gave when it ended the run (`hook_end`). Undefined while the run is suspended.
   */
  output: O;
  /** The transcript (the same array as `state.messages`). */
  messages: Message[];
  usage: Usage;
  /** Calls waiting for a human; non-empty exactly when `status` is `suspended`. */
  pendingApprovals: PendingApproval[];
  /** Plain JSON: pass it to `agent.resume` here or in another process. */
  state: RunState;
}
