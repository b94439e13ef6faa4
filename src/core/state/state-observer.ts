/**
 * The parts of a run's state the writer tells an observer about:
 * - `run`: status, segment, steps, usage, stop reason, error (the small fields);
 * - `output`: the run's output;
 * - `messages`: the transcript, from a position on;
 * - `calls`: one call's ledger entry or held result, by call id;
 * - `approvals`: the pending approvals;
 * - `decisions`: the human decisions a resume brought;
 * - `nested`: the nested runs behind calls (a sub-agent's state);
 * - `hookState`: one hook's or layer's state, by name.
 */
export type StatePart = 'run' | 'output' | 'messages' | 'calls' | 'approvals' | 'decisions' | 'nested' | 'hookState';

/**
 * Told by the state writer what each change touched, and when a step ends. This is how a run
 * is kept anywhere outside the process (a run store), without the writer knowing where: every
 * write method of the writer reports here, so a new one cannot forget to.
 *
 * @example const writer = new StateWriter(state, { changed: (part, key) => seen.push([part, key]), stepEnds: async () => {} });
 */
export interface StateObserver {
  /**
   * `part` changed: for `messages`, `key` is the first position that changed (an append: the
   * old length); for `calls`, the call id; for `hookState`, the hook's name.
   */
  changed(part: StatePart, key?: string | number): void;
  /**
   * A step ended (a tool is about to be entered, a call settled or waits for a human): what
   * changed so far must be kept before the run goes on. The run waits for the promise; if it
   * rejects, the step does not go ahead.
   */
  stepEnds(): Promise<void>;
}
