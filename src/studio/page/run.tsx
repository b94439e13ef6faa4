// One run: its transcript, a timeline of its model and tool calls (one axis per segment), the
// onion of the call or segment picked in it, its ledger and its exports. Fetched again whenever
// the event stream says the run changed.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, apiUrl, ms, show, when, type Message, type Part, type RunDetail } from './client.ts';
import { useLiveRuns } from './live.ts';
import { decisionWords, Onion, SegmentOnion } from './onion.tsx';
import { RunLineage } from './lab.tsx';
import { Timeline, type Picked } from './timeline.tsx';

function PartView({ part }: { part: Part }) {
  if (part.type === 'text') return <p class="text">{part.text}</p>;
  if (part.type === 'reasoning') return <details class="reasoning"><summary>reasoning</summary><p>{part.text}</p></details>;
  if (part.type === 'image') {
    // Only inline data is shown: the page loads nothing from elsewhere.
    const src = part.image.startsWith('data:') ? part.image : /^[a-z]+:\/\//i.test(part.image) ? undefined : `data:${part.mediaType ?? 'image/png'};base64,${part.image}`;
    return src ? <img class="image" src={src} alt="image part" /> : <p class="muted">image at <code>{part.image}</code> (not loaded)</p>;
  }
  return <p class="muted">file {part.filename ?? ''} ({part.mediaType})</p>;
}

function MessageView({ message }: { message: Message }) {
  const parts: Part[] = typeof message.content === 'string' ? (message.content === '' ? [] : [{ type: 'text', text: message.content }]) : message.content;
  return (
    <div class={`message ${message.role}`} data-role={message.role}>
      <div class="role">{message.role}{message.role === 'tool' ? ` · ${message.name} (${message.toolCallId})` : ''}</div>
      {parts.map((part) => <PartView part={part} />)}
      {message.toolCalls?.map((call) => <div class="tool-call"><code>{call.name}({show(call.args)})</code> <span class="muted small">{call.id}</span></div>)}
      {message.metadata?.error !== undefined && <div class="error small">{show(message.metadata.error)}</div>}
    </div>
  );
}

export function RunScreen({ runId }: { runId: string }) {
  const [detail, setDetail] = useState<RunDetail | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [picked, setPicked] = useState<Picked>({});
  const load = useCallback(() => api<RunDetail>(`runs/${encodeURIComponent(runId)}`).then(setDetail, (e: Error) => setError(e.message)), [runId]);
  useEffect(() => void load(), [load]);
  useLiveRuns(useCallback((changed) => void (changed.some((row) => row.runId === runId) && load()), [runId, load]));
  if (error) return <p class="error">{error}</p>;
  if (!detail) return <p>Loading…</p>;
  const { state, trace, ledger, row } = detail;
  const calls = trace?.calls ?? [];
  const segments = trace?.segments ?? [];
  const segment = picked.segment === undefined ? undefined : segments.find((s) => s.segment === picked.segment && s.parentCallId === undefined);
  // Calls are picked by position: an approved call runs again under its id, and a sub-agent's ids may repeat the lead's.
  const chosen = segment !== undefined ? -1 : picked.call !== undefined && picked.call < calls.length ? picked.call : calls.findIndex((call) => call.parentCallId === undefined);
  return (
    <section class="run" data-run={state.runId} data-status={state.status}>
      <h1>{state.agentName} <span class={`badge ${state.status}`} data-testid="run-status">{state.status}</span></h1>
      <p class="muted">
        {state.runId} · segment {row?.segment ?? '?'} · steps <span data-testid="run-steps">{row?.steps ?? '?'}</span> · {state.usage.totalTokens ?? 0} tokens · {state.usage.modelCalls ?? 0} model calls · {state.usage.toolCalls ?? 0} tool calls
        {row && row.models.length > 0 && <> · model <span data-testid="run-models">{row.models.join(', ')}</span></>}
        {row?.cost !== undefined && <> · <span data-testid="run-cost">${row.cost.toFixed(4)}</span></>}
        {row && <> · started {when(row.startedAt)} · {ms(row.durationMs)}</>}
        {row?.stopReason && <> · stopped: {row.stopReason}</>}
      </p>
      {state.error && <p class="error">{state.error.code}: {state.error.message}</p>}
      <p class="exports">
        <a class="button" href={apiUrl(`runs/${encodeURIComponent(runId)}/export`)} download>Export run JSON</a>
        {trace && <a class="button" href={apiUrl(`runs/${encodeURIComponent(runId)}/otlp`)} download>Export trace (OTLP JSON)</a>}
        {state.pendingApprovals.length > 0 && <a class="button" href="#/approvals">{state.pendingApprovals.length} pending approval(s)</a>}
      </p>
      <RunLineage runId={state.runId} />
      {(state.decisionLog?.length ?? 0) > 0 && (
        <>
          <h2>Decisions</h2>
          <ul class="decisions" data-testid="decisions">
            {state.decisionLog!.map((d) => (
              <li data-call={d.toolCallId} data-decision={d.decision}>
                <span class="muted small">{d.at.replace('T', ' ').slice(0, 19)}</span> <code>{d.toolName}</code> <span class="muted small">{d.toolCallId}</span>: {decisionWords({ ...d, changes: d.editedArgs })}
                {d.editedArgs !== undefined && <div class="small"><code>{show(d.args)}</code> → <code>{show(d.editedArgs)}</code></div>}
              </li>
            ))}
          </ul>
        </>
      )}
      <div class="columns">
        <div class="column">
          <h2>Transcript</h2>
          <div class="transcript" data-testid="transcript">{state.messages.map((message) => <MessageView message={message} />)}</div>
        </div>
        <div class="column">
          <h2>Calls</h2>
          {!trace ? <p class="muted">No layer trace for this run: run its agent with <code>layerTrace: true</code> to see each call's layers.</p> : (
            <>
              <Timeline calls={calls} segments={segments} picked={segment !== undefined ? { segment: segment.segment } : { call: chosen }} pick={setPicked} />
              <h2>The onion</h2>
              {segment !== undefined ? <SegmentOnion segment={segment} /> : chosen >= 0 && <Onion index={chosen} all={calls} />}
            </>
          )}
          <h2>Ledger</h2>
          {ledger.length === 0 ? <p class="muted">No tool calls.</p> : (
            <table class="ledger" data-testid="ledger">
              <thead><tr><th>Call</th><th>Tool</th><th>Entry</th><th>Idempotency key</th></tr></thead>
              <tbody>{ledger.map((call) => <tr><td>{call.id}</td><td>{call.toolName ?? '—'}</td><td>{call.entry}</td><td><code>{call.idempotencyKey}</code></td></tr>)}</tbody>
            </table>
          )}
        </div>
      </div>
    </section>
  );
}
