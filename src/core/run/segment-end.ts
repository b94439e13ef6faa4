import { STATE_OUTPUT, type RunVariables } from '../vocabulary/contexts.js';
import { failureRecord, runFailure } from '../vocabulary/errors.js';
import { lastAssistantText } from '../vocabulary/messages.js';
import type { RunResult } from '../vocabulary/result.js';
import type { EndReason, RunState, StopReason } from '../vocabulary/state.js';
import type { EndingFields } from '../state/transcript-view.js';

/**
 * How a segment ends, as far as it is decided: an end the terminal (the loop, or `ctx.end`) or a
 * run layer gave, or an error on its way out of the run stack.
 */
type Ending =
  | { status: 'completed' | 'suspended'; stopReason: StopReason; output: unknown }
  | { status: 'failed'; error: NonNullable<RunState['error']>; thrown: unknown };

/**
 * The end of one segment, decided in one place. Inside the run stack the state says `running`;
 * the ending here is what the run layers on their way out read in `ctx.state`, and what the
 * segment writes once, when it closes. A run layer may send the model back (`next()` again),
 * which opens the ending again.
 *
 * @example const end = new SegmentEnd(state, () => vars); const result = end.decide('final'); end.closing(result) // { status: 'completed', … }
 */
export class SegmentEnd {
  /** A layer asked to end the run (`ctx.end`, a hook's `{ end }`): the loop stops at its next check. */
  requested: { output: unknown; reason: EndReason } | undefined;
  #ending: Ending | undefined;
  /** The end is written: the state itself says how the segment ended. */
  #written = false;

  constructor(private readonly state: RunState, private readonly vars: () => RunVariables) {}

  /**
   * The run stack's terminal stops here: how the segment ends, and the result. Nothing is
   * written yet; the layers on the way out read this end in `ctx.state` (see `shown`).
   */
  decide(stopReason: StopReason): RunResult {
    const { state } = this;
    const status = stopReason === 'approval' ? 'suspended' : 'completed';
    const text = lastAssistantText(state.messages);
    const output = stopReason === 'hook_end' ? this.requested?.output : text;
    // A layer's end says its own reason (`limit:cost`); the loop only knows a layer ended it.
    if (stopReason === 'hook_end' && this.requested !== undefined) stopReason = this.requested.reason;
    this.#open({ status, stopReason, output });
    return { runId: state.runId, sessionId: state.sessionId, status, stopReason, text, output, messages: state.messages, usage: state.usage, pendingApprovals: state.pendingApprovals, state };
  }

  /** Something inside the run stack runs again (a layer's `next()`, the loop): the end is open until it stops. */
  goOn(): void {
    this.#open(undefined);
  }

  /**
   * A run layer returned `result`. When nothing inside decided an end since it called `next()`
   * (it answered without the loop, or recovered from a failure), the result's end is the segment's.
   */
  answered(result: RunResult): void {
    if (this.#ending !== undefined && this.#ending.status !== 'failed') return;
    // A result that is no RunResult fails the run when the stack checks it.
    if (result?.status !== 'completed' && result?.status !== 'suspended') return;
    this.#ending = { status: result.status, stopReason: result.stopReason, output: this.state.output };
  }

  /**
   * `error` leaves a part of the run stack (`thrownBy`: the layer it came out of): unless a layer
   * outside recovers, the segment fails with it. An error already on its way out keeps its first account.
   */
  failing(error: unknown, thrownBy?: string): void {
    const ending = this.#ending;
    if (ending?.status === 'failed' && ending.thrown === error) return;
    this.#ending = { status: 'failed', error: failureRecord(runFailure(error, this.state, thrownBy)), thrown: error };
  }

  /** What `ctx.state` shows of how the segment ends until it is written (undefined: the state's own fields). */
  shown(): EndingFields | undefined {
    const ending = this.#ending;
    if (this.#written || ending === undefined) return undefined;
    if (ending.status === 'failed') return { status: 'failed', stopReason: undefined, output: this.state.output, error: ending.error };
    return { status: ending.status, stopReason: ending.stopReason, output: this.#output(ending.output), error: undefined };
  }

  /**
   * The run stack returned `result`: the end to write — the one decided last (what the run
   * layers saw on their way out), else the result's — with the output a run layer kept for it.
   */
  closing(result: RunResult): { status: 'completed' | 'suspended'; stopReason: StopReason; output: unknown } {
    const end = this.#ending?.status === 'failed' ? undefined : this.#ending;
    this.#written = true;
    return { status: end?.status ?? result.status as 'completed' | 'suspended', stopReason: end?.stopReason ?? result.stopReason!, output: this.#output(end !== undefined ? end.output : this.state.output) };
  }

  /** The segment failed: the state says so from now on. */
  failed(): void {
    this.#written = true;
  }

  /** A new ending (or none), and a run layer's kept output for the last one forgotten. */
  #open(ending: Ending | undefined): void {
    this.#ending = ending;
    const vars = this.vars();
    if (vars[STATE_OUTPUT] !== undefined) delete vars[STATE_OUTPUT];
  }

  /** The output the state keeps: the one a run layer kept for this end (`STATE_OUTPUT`), else the end's. */
  #output(own: unknown): unknown {
    const kept = this.vars()[STATE_OUTPUT];
    return kept !== undefined ? kept.output : own;
  }
}

