// The approvals: every pending call of every suspended run, grouped by run with counts and a
// filter, with the arguments the layers produced. Approve, deny with a reason, or edit the
// arguments — then the one approve button sends the edits ("Approve with edits"), or "Discard
// edits" puts the original back: an edit is never dropped silently. The server checks edited
// arguments against the tool's schema, refusing them with the schema's error.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type PendingRow } from './client.ts';
import { useDebounced } from './debounce.ts';
import { useLiveRuns } from './live.ts';

function Card({ pending, done }: { pending: PendingRow; done: (message: string) => void }) {
  const original = JSON.stringify(pending.args, null, 2);
  const [args, setArgs] = useState(original);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const decided = pending.decided.includes(pending.toolCallId);
  const send = async (decision: { approved: boolean; reason?: string; args?: unknown }) => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api<{ resumed: boolean; queued?: boolean; message?: string; status?: string }>(`runs/${encodeURIComponent(pending.runId)}/approvals/${encodeURIComponent(pending.toolCallId)}`, { method: 'POST', body: JSON.stringify(decision) });
      done(answer.queued ? `Run ${pending.runId} resumed through the workers' queue: a worker runs its next segment.` : answer.resumed ? `Run ${pending.runId} resumed (${answer.status}).` : (answer.message ?? 'Answer kept.'));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const edited = () => {
    try {
      return send({ approved: true, args: JSON.parse(args), ...(reason ? { reason } : {}) });
    } catch (e) {
      setError(`the arguments are not JSON: ${(e as Error).message}`);
      return undefined;
    }
  };
  const editable = (pending.path?.length ?? 0) === 0;
  const changed = editable && args !== original;
  return (
    <div class="approval" data-approval={pending.toolCallId} data-run={pending.runId}>
      <div class="call-head">
        <strong>{pending.toolName}</strong> <span class="muted small">{pending.toolCallId}</span>
        {pending.path && pending.path.length > 0 && <span class="muted small"> · sub-agent {pending.path.join(' › ')}</span>}
        {decided && <span class="badge suspended"> answered, waiting for the run's other calls</span>}
      </div>
      <p class="small">run <a href={`#/run/${encodeURIComponent(pending.runId)}`}>{pending.runId}</a> · {pending.agentName} · session {pending.sessionId}</p>
      {pending.reason && <p>Why it asks: {pending.reason}</p>}
      <label>Arguments (as the layers produced them{editable ? '; edit to approve with others' : ''}){changed && <strong class="warning" data-testid="edited"> · edited</strong>}
        <textarea rows={Math.min(12, args.split('\n').length + 1)} value={args} readOnly={!editable} onInput={(event) => setArgs((event.target as HTMLTextAreaElement).value)} data-testid="args" />
      </label>
      {pending.schema && <details class="small"><summary>the tool's schema</summary><pre>{JSON.stringify(pending.schema, null, 2)}</pre></details>}
      <label>Reason (for a denial) <input value={reason} onInput={(event) => setReason((event.target as HTMLInputElement).value)} data-testid="reason" /></label>
      {!pending.canResume && <p class="warning small">This studio has no agent named {pending.agentName}: start it with --agents (or --queue) to answer from here.</p>}
      <div class="actions">
        {changed ? (
          <>
            <button type="button" disabled={busy} onClick={edited} data-testid="approve-edited">Approve with edits</button>
            <button type="button" disabled={busy} class="secondary" onClick={() => (setArgs(original), setError(undefined))} data-testid="discard-edits">Discard edits</button>
          </>
        ) : <button type="button" disabled={busy} onClick={() => send({ approved: true })} data-testid="approve">Approve</button>}
        <button type="button" disabled={busy} class="deny" onClick={() => send({ approved: false, ...(reason ? { reason } : {}) })} data-testid="deny">Deny</button>
      </div>
      {error && <p class="error" role="alert" data-testid="approval-error">{error}</p>}
    </div>
  );
}

/** The pending calls grouped by run, the latest run first (as the server lists them). */
function byRun(rows: PendingRow[]): PendingRow[][] {
  const groups = new Map<string, PendingRow[]>();
  for (const row of rows) groups.set(row.runId, [...(groups.get(row.runId) ?? []), row]);
  return [...groups.values()];
}

/** Whether a pending call matches the filter: its run, agent, session, tool or arguments. */
function matches(row: PendingRow, text: string): boolean {
  if (text === '') return true;
  return `${row.runId} ${row.agentName} ${row.sessionId} ${row.toolName} ${row.toolCallId} ${JSON.stringify(row.args)}`.toLowerCase().includes(text);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function ApprovalsScreen() {
  const [pending, setPending] = useState<PendingRow[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [typed, setTyped] = useState('');
  const filter = useDebounced(typed.trim().toLowerCase(), 200);
  const load = useCallback(() => api<PendingRow[]>('approvals').then((list) => (setPending(list), setError(undefined)), (e: Error) => setError(e.message)), []);
  useEffect(() => void load(), [load]);
  useLiveRuns(useCallback((changed) => void (changed.length > 0 && load()), [load]));
  const done = (message: string) => (setNotice(message), void load());
  const groups = byRun(pending ?? []).map((rows) => ({ rows, shown: rows.filter((row) => matches(row, filter)) })).filter((group) => group.shown.length > 0);
  const runs = new Set((pending ?? []).map((row) => row.runId)).size;
  const shownCalls = groups.reduce((n, group) => n + group.shown.length, 0);
  return (
    <section>
      <h1>Approvals</h1>
      {notice && <p class="notice" data-testid="notice">{notice}</p>}
      {error && <p class="error">{error}</p>}
      {pending === undefined ? <p>Loading…</p> : pending.length === 0 ? <p class="muted" data-testid="no-approvals">No call is waiting for a human.</p> : (
        <>
          <form class="filters" onSubmit={(event) => event.preventDefault()}>
            <input placeholder="run, agent, session, tool or argument" aria-label="filter approvals" value={typed} onInput={(event) => setTyped((event.target as HTMLInputElement).value)} data-testid="approvals-filter" />
            <span class="muted small hint" data-testid="approvals-count">{plural(pending.length, 'call')} waiting in {plural(runs, 'run')}{filter !== '' ? `; ${plural(shownCalls, 'call')} in ${plural(groups.length, 'run')} match` : ''} · filters as you type</span>
          </form>
          {groups.length === 0 && <p class="muted" data-testid="no-match">No pending call matches.</p>}
          {groups.map(({ rows, shown }) => {
            const first = rows[0]!;
            return (
              <div class="approval-run" data-run={first.runId} key={first.runId}>
                <h2>
                  <a href={`#/run/${encodeURIComponent(first.runId)}`}>{first.runId}</a> <span class="muted small">· {first.agentName} · session {first.sessionId} · </span>
                  <span class="badge suspended" data-testid="run-count">{plural(rows.length, 'call')} waiting</span>
                  {shown.length < rows.length && <span class="muted small"> · {shown.length} shown</span>}
                </h2>
                {shown.map((row) => <Card key={`${row.runId}/${row.toolCallId}`} pending={row} done={done} />)}
              </div>
            );
          })}
        </>
      )}
    </section>
  );
}
