// One pending call in the playground. Approving with other arguments is its own action: once the
// arguments differ from what the layers produced, "Approve" is gone and "Approve with edits"
// sends them (or "Discard edits" puts the original back); a denial says it drops the edits. So an
// edit is never sent, nor lost, without the button saying so.
import { useEffect, useState } from 'preact/hooks';

/** A pending approval as the playground's API lists it, with the digest a decision brings back. */
export interface PlayPending {
  toolCallId: string;
  toolName: string;
  args: unknown;
  digest: string;
  reason?: string;
  path?: string[];
}

/** What the human chose for one call. */
export interface PlayDecision {
  approved: boolean;
  digest: string;
  args?: unknown;
  reason?: string;
}

export function PlayApproval({ pending, chosen, choose, editing }: { pending: PlayPending; chosen: PlayDecision | undefined; choose: (decision: PlayDecision | undefined) => void; editing: (changed: boolean) => void }) {
  const original = JSON.stringify(pending.args, null, 2);
  const [args, setArgs] = useState(original);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | undefined>();
  // Arguments of a sub-agent's call are the sub-agent's: approved as they are.
  const editable = (pending.path?.length ?? 0) === 0;
  const changed = editable && args !== original;
  useEffect(() => editing(changed && chosen === undefined), [changed, chosen]);
  const approveEdited = () => {
    try {
      choose({ approved: true, digest: pending.digest, args: JSON.parse(args) });
      setError(undefined);
    } catch (e) {
      setError(`the arguments are not JSON, so nothing was sent: ${(e as Error).message}`);
    }
  };
  return (
    <div class="approval" data-play-approval={pending.toolCallId}>
      <div class="call-head">
        <strong>{pending.toolName}</strong> <span class="muted small">{pending.toolCallId}</span>
        {!editable && <span class="muted small"> · sub-agent {pending.path!.join(' › ')}</span>}
      </div>
      {pending.reason && <p>Why it asks: {pending.reason}</p>}
      <label>Arguments{editable ? ' (edit them to approve with others)' : ''}{changed && <strong class="warning" data-testid="play-edited"> · edited, not sent</strong>}
        <textarea rows={Math.min(12, args.split('\n').length + 1)} value={args} readOnly={!editable || chosen !== undefined} onInput={(event) => setArgs((event.target as HTMLTextAreaElement).value)} data-testid="play-args" />
      </label>
      {chosen === undefined ? (
        <>
          <label>Reason (read by the model when you deny) <input value={reason} onInput={(event) => setReason((event.target as HTMLInputElement).value)} data-testid="play-reason" /></label>
          <div class="actions">
            {changed ? (
              <>
                <button type="button" onClick={approveEdited} data-testid="play-approve-edited">Approve with edits</button>
                <button type="button" class="secondary" onClick={() => (setArgs(original), setError(undefined))} data-testid="play-discard">Discard edits</button>
              </>
            ) : <button type="button" onClick={() => choose({ approved: true, digest: pending.digest })} data-testid="play-approve">Approve</button>}
            <button type="button" class="deny" onClick={() => choose({ approved: false, digest: pending.digest, ...(reason ? { reason } : {}) })} data-testid="play-deny">{changed ? 'Deny and drop edits' : 'Deny'}</button>
          </div>
        </>
      ) : (
        <p class="small" data-testid="play-chosen">
          {chosen.approved ? (chosen.args !== undefined ? 'Approved with edits' : 'Approved') : 'Denied'} — waiting for the run's other calls.{' '}
          <button type="button" class="secondary" onClick={() => choose(undefined)}>Change</button>
        </p>
      )}
      {error && <p class="error" role="alert" data-testid="play-approval-error">{error}</p>}
    </div>
  );
}
