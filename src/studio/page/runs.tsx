// The runs: a table with filters by agent, status, session and text — applied as you type, a
// moment after the last key — kept current by the event stream (a run that changes is fetched
// again with the list's filters).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ms, when, type RunRow } from './client.ts';
import { useDebounced } from './debounce.ts';
import { useLiveRuns } from './live.ts';

const STATUSES = ['running', 'suspended', 'completed', 'failed'] as const;

export function RunsScreen() {
  const [rows, setRows] = useState<RunRow[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [typed, setTyped] = useState({ agent: '', status: '', session: '', text: '' });
  const filter = useDebounced(typed, 250);
  const load = useCallback(() => {
    const query = new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== ''));
    api<RunRow[]>(`runs?${query}`).then((list) => (setRows(list), setError(undefined)), (e: Error) => setError(e.message));
  }, [filter]);
  useEffect(load, [load]);
  useLiveRuns(useCallback(() => load(), [load]));
  const field = (name: keyof typeof typed) => (event: Event) => setTyped({ ...typed, [name]: (event.target as HTMLInputElement).value });
  const agents = [...new Set((rows ?? []).map((row) => row.agentName))];
  return (
    <section>
      <h1>Runs</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <input placeholder="agent" aria-label="agent" list="agents" value={typed.agent} onInput={field('agent')} />
        <datalist id="agents">{agents.map((name) => <option value={name} />)}</datalist>
        <select aria-label="status" value={typed.status} onChange={field('status')}>
          <option value="">any status</option>
          {STATUSES.map((status) => <option value={status}>{status}</option>)}
        </select>
        <input placeholder="session" aria-label="session" value={typed.session} onInput={field('session')} />
        <input placeholder="text in the run" aria-label="text" value={typed.text} onInput={field('text')} />
        <span class="muted small hint">filters as you type</span>
      </form>
      {error && <p class="error">{error}</p>}
      {rows === undefined ? <p>Loading…</p> : rows.length === 0 ? <p class="muted">No runs match.</p> : (
        <table class="runs" data-testid="runs">
          <thead><tr><th>Run</th><th>Agent</th><th>Status</th><th>Stop reason</th><th>Model(s)</th><th>Steps</th><th>Tokens</th><th>Cost</th><th>Duration</th><th>Started</th></tr></thead>
          <tbody>
            {rows.map((row) => (
              <tr data-run={row.runId} data-status={row.status}>
                <td><a href={`#/run/${encodeURIComponent(row.runId)}`}>{row.title || row.runId}</a><div class="muted small">{row.runId}</div></td>
                <td>{row.agentName}</td>
                <td><span class={`badge ${row.status}`}>{row.status}</span>{row.pendingApprovals > 0 && <a class="small" href="#/approvals"> {row.pendingApprovals} to approve</a>}</td>
                <td>{row.stopReason ?? (row.error ? row.error.code : '—')}</td>
                <td data-testid="models">{row.models.join(', ') || '—'}</td>
                <td class="num" data-testid="steps">{row.steps}</td>
                <td class="num" data-testid="tokens">{row.tokens.total}</td>
                <td class="num" data-testid="cost" title="counted by the cost budget middleware, where the agent has it">{row.cost === undefined ? '—' : `$${row.cost.toFixed(4)}`}</td>
                <td class="num">{ms(row.durationMs)}</td>
                <td>{when(row.startedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
