// The playground (#/play, or #/play/<runId> to follow a run): talk to one of the studio's
// agents — start a run or continue a session — and watch its tokens arrive through the run's
// event log, answer its approvals in place, or follow a run another process is running. Its
// requests go to koagent/http's routes under ./api/play.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './client.ts';
import { follow, type LoggedEvent } from './follow.ts';
import { PlayApproval, type PlayDecision, type PlayPending } from './play-approval.tsx';
import './play.css';

interface RunView {
  runId: string;
  sessionId: string;
  status: string;
  stopReason?: string;
  text?: string;
  pendingApprovals?: PlayPending[];
  error?: { message: string };
}

/** The text shown of each reply, by step: deltas added, retractions taken back (the lead agent's only). */
function applyText(shown: Map<number, string>, event: LoggedEvent['event']): boolean {
  if (event.agentPath !== undefined) return false;
  const step = event.step as number;
  if (event.type === 'text.delta') shown.set(step, (shown.get(step) ?? '') + (event.delta as string));
  else if (event.type === 'text.retract') {
    const text = shown.get(step) ?? '';
    const taken = event.text as string;
    shown.set(step, text.endsWith(taken) ? text.slice(0, text.length - taken.length) : '');
  } else return false;
  return true;
}

const describeEvent = (event: LoggedEvent['event']): string =>
  event.type === 'tool.done' ? `tool.done ${event.toolName as string} → ${typeof event.result === 'string' ? event.result : JSON.stringify(event.result)}`
    : event.type === 'tool.start' ? `tool.start ${event.toolName as string} ${JSON.stringify(event.args)}`
      : event.type === 'tool.error' ? `tool.error ${event.toolName as string}: ${(event.error as { message: string }).message}`
        : event.type === 'approval.requested' ? `approval.requested ${event.toolName as string}`
          : event.type === 'run.end' ? `run.end ${event.status as string}${event.stopReason ? ` (${event.stopReason as string})` : ''}` : event.type;

export function PlaygroundScreen({ followId }: { followId?: string }) {
  const [agents, setAgents] = useState<string[]>([]);
  const [agent, setAgent] = useState('');
  const [session, setSession] = useState('');
  const [input, setInput] = useState('');
  const [watchId, setWatchId] = useState(followId ?? '');
  const [run, setRun] = useState<RunView | undefined>();
  const [shown, setShown] = useState<Map<number, string>>(new Map());
  const [deltas, setDeltas] = useState(0);
  const [events, setEvents] = useState<string[]>([]);
  const [chosen, setChosen] = useState<Record<string, PlayDecision>>({});
  const [edited, setEdited] = useState<Record<string, boolean>>({});
  const [error, setError] = useState<string | undefined>();
  const [blocked, setBlocked] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const last = useRef(0);
  const stop = useRef<AbortController | undefined>(undefined);

  useEffect(() => void api<{ agents: string[] }>('info').then((info) => (setAgents(info.agents), setAgent(info.agents[0] ?? '')), (e: Error) => setError(e.message)), []);
  useEffect(() => () => stop.current?.abort(), []);
  useEffect(() => void (followId && watch(followId, 0, true)), [followId]);

  /** Edits not sent: a new run or follow would take their card away, so it waits for them. */
  const unsent = (): boolean => {
    const calls = Object.entries(edited).filter(([, changed]) => changed).map(([id]) => id);
    if (calls.length === 0) return false;
    setBlocked(`You edited the arguments of ${calls.join(', ')} and did not send them: approve with edits, discard the edits or deny first.`);
    return true;
  };

  /** Read the run, then follow its log from offset `after` to its segment's end, and read it again. */
  async function watch(runId: string, after: number, fresh: boolean): Promise<void> {
    stop.current?.abort();
    const controller = new AbortController();
    stop.current = controller;
    if (fresh) {
      last.current = 0;
      setShown(new Map());
      setDeltas(0);
      setEvents([]);
    }
    setChosen({});
    setEdited({});
    setError(undefined);
    try {
      setRun(await api<RunView>(`play/runs/${encodeURIComponent(runId)}`));
      await follow(runId, after, (logged) => {
        last.current = logged.seq;
        if (logged.event.type === 'text.delta' && logged.event.agentPath === undefined) setDeltas((n) => n + 1);
        setShown((before) => {
          const next = new Map(before);
          return applyText(next, logged.event) ? next : before;
        });
        setEvents((list) => [...list, describeEvent(logged.event)]);
        setRun((view) => (view && logged.event.type === 'run.start' ? { ...view, status: 'running' } : view));
      }, controller.signal);
      if (!controller.signal.aborted) setRun(await api<RunView>(`play/runs/${encodeURIComponent(runId)}`));
    } catch (e) {
      if (!controller.signal.aborted) setError((e as Error).message);
    }
  }

  const start = async (event: Event) => {
    event.preventDefault();
    if (unsent()) return;
    setBlocked(undefined);
    setBusy(true);
    try {
      const body = JSON.stringify({ agent, input });
      const path = session.trim() === '' ? 'play/runs' : `play/sessions/${encodeURIComponent(session.trim())}/messages`;
      const started = await api<{ runId: string; sessionId: string }>(path, { method: 'POST', body });
      setSession(started.sessionId);
      setInput('');
      void watch(started.runId, 0, true);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const followOther = (event: Event) => {
    event.preventDefault();
    if (unsent()) return;
    setBlocked(undefined);
    if (watchId.trim() !== '') void watch(watchId.trim(), 0, true);
  };

  const pending = run?.status === 'suspended' ? (run.pendingApprovals ?? []) : [];
  const choose = async (toolCallId: string, decision: PlayDecision | undefined) => {
    const next = { ...chosen };
    if (decision === undefined) delete next[toolCallId];
    else next[toolCallId] = decision;
    setChosen(next);
    // Every pending call is answered in one request, once each has its answer.
    if (run === undefined || !pending.every((p) => next[p.toolCallId] !== undefined)) return;
    try {
      await api(`play/runs/${encodeURIComponent(run.runId)}/decisions`, { method: 'POST', body: JSON.stringify({ decisions: next }) });
      setBlocked(undefined);
      void watch(run.runId, last.current, false);
    } catch (e) {
      setChosen({});
      setError(`${(e as Error).message} — nothing was sent for this run${Object.values(next).some((d) => d.args !== undefined) ? ', your edits included' : ''}.`);
    }
  };

  const text = [...shown.entries()].sort(([a], [b]) => a - b).map(([, t]) => t).filter((t) => t !== '').join('\n\n');
  return (
    <section data-testid="playground">
      <h1>Playground</h1>
      {agents.length === 0 ? <p class="muted">This studio has no agents to talk to: start it with --agents. You can still follow a run below.</p> : (
        <form class="play-form" onSubmit={start}>
          <select value={agent} onChange={(e) => setAgent((e.target as HTMLSelectElement).value)} aria-label="agent" data-testid="play-agent">{agents.map((name) => <option key={name} value={name}>{name}</option>)}</select>
          <input value={session} placeholder="session (empty: a new one)" aria-label="session" onInput={(e) => setSession((e.target as HTMLInputElement).value)} data-testid="play-session" />
          <textarea value={input} rows={2} placeholder="Message" aria-label="message" onInput={(e) => setInput((e.target as HTMLTextAreaElement).value)} data-testid="play-input" />
          <button type="submit" disabled={busy || input.trim() === ''} data-testid="play-send">Send</button>
        </form>
      )}
      <form class="play-form" onSubmit={followOther}>
        <input value={watchId} placeholder="run id, to follow a run another process runs" aria-label="run to follow" onInput={(e) => setWatchId((e.target as HTMLInputElement).value)} data-testid="play-follow-id" />
        <button type="submit" class="secondary" data-testid="play-follow">Follow</button>
      </form>
      {blocked && <p class="warning" role="alert" data-testid="play-blocked">{blocked}</p>}
      {error && <p class="error" role="alert" data-testid="play-error">{error}</p>}
      {run && (
        <div class="play-run">
          <p class="small">run <a href={`#/run/${encodeURIComponent(run.runId)}`} data-testid="play-run-id">{run.runId}</a> · session {run.sessionId} · <span class={`badge ${run.status}`} data-testid="play-status">{run.status}</span>
            {' '}· <span data-testid="play-deltas">{deltas}</span> text deltas</p>
          <div class="message assistant"><div class="role">{run.status === 'running' ? 'streaming' : 'reply'}</div><p data-testid="play-text">{text}</p></div>
          {pending.map((p) => <PlayApproval key={`${run.runId}/${p.toolCallId}/${p.digest}`} pending={p} chosen={chosen[p.toolCallId]} choose={(d) => void choose(p.toolCallId, d)} editing={(changed) => setEdited((all) => ({ ...all, [p.toolCallId]: changed }))} />)}
          {run.error && <p class="error">{run.error.message}</p>}
          <details class="small" open><summary>events ({events.length})</summary><ol class="play-events" data-testid="play-events">{events.map((line, i) => <li key={i}>{line}</li>)}</ol></details>
        </div>
      )}
    </section>
  );
}
