// Claiming a segment before a resume, for agents without a run store: `claimResume` decides,
// else the agent object remembers the segments it resumed. (With a store, the store claims.)
import { describe, KoagentError } from '../core/vocabulary/errors.js';
import { segmentKey } from '../core/state/resume.js';
import type { ResumeClaim, RunState } from '../core/vocabulary/state.js';

/** Make sure no other resume of this segment went ahead, or throw `invalid_resume` saying so. */
export async function claimSegment(state: RunState, claim: ((claim: ResumeClaim) => boolean | Promise<boolean>) | undefined, resumed: Set<string>): Promise<void> {
  const { runId, segment, agentName, sessionId } = state;
  const refused = (how: string) => new KoagentError('invalid_resume', `agent.resume(): ${how}; continue from the state that resume returned`);
  if (claim === undefined) {
    const key = segmentKey(state);
    if (resumed.has(key)) throw refused(`this state (run ${runId}, segment ${segment}) was already resumed`);
    resumed.add(key);
    return;
  }
  let claimed: unknown;
  try {
    claimed = await claim({ runId, segment, agentName, sessionId });
  } catch (error) {
    throw new KoagentError('invalid_resume', `agent.resume(): claimResume threw (${describe(error)}), so run ${runId} was not resumed; try again when the claim store answers`, { cause: error });
  }
  if (claimed !== true) throw refused(`claimResume answered ${JSON.stringify(claimed)} for run ${runId}, segment ${segment}: it was already resumed (return true to go ahead)`);
}
