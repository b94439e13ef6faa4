// Taking runs back into development, on the page: a run's lineage with a Fork button on each step
// it can be forked after (the fork opens when it is made), the replay of a stored run through the
// agent's layers as they are now — each call's layers then and now side by side, the differences
// marked — and the evaluations the store keeps, each example opening its run.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, when } from './client.ts';
import './lab.css';

interface Lineage {
  forkedFrom?: { runId: string; step: number };
  forks: { runId: string; step: number; status: string }[];
  steps: number[];
  recorded: boolean;
  agent: boolean;
}

const runLink = (runId: string) => `#/run/${encodeURIComponent(runId)}`;

/** Where the run came from, its forks, and a Fork button on each step (with a Replay link). */
export function RunLineage({ runId }: { runId: string }) {
  const [lineage, setLineage] = useState<Lineage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState<number | undefined>();
  useEffect(() => void api<Lineage>(`runs/${encodeURIComponent(runId)}/lineage`).then(setLineage, (e: Error) => setError(e.message)), [runId]);
  const forkAt = async (atStep: number) => {
    setBusy(atStep);
    setError(undefined);
    try {
      const made = await api<{ runId: string }>(`runs/${encodeURIComponent(runId)}/fork`, { method: 'POST', body: JSON.stringify({ atStep }) });
      location.hash = runLink(made.runId);
    } catch (e) {
      setError((e as Error).message);
      setBusy(undefined);
    }
  };
  if (!lineage) return error ? <p class="error">{error}</p> : null;
  const why = !lineage.recorded ? 'this run was not recorded with its layer trace (layerTrace: true), so it cannot be forked or replayed' : !lineage.agent ? 'the studio was not given this run\'s agent (startStudio({ agents }) or --agents)' : undefined;
  return (
    <section class="lineage" data-testid="lineage">
      {lineage.forkedFrom && (
        <p data-testid="forked-from">Forked from <a href={runLink(lineage.forkedFrom.runId)}>{lineage.forkedFrom.runId}</a> after step {lineage.forkedFrom.step}</p>
      )}
      {lineage.forks.length > 0 && (
        <p data-testid="forks">Forks: {lineage.forks.map((f) => <a class="fork-link" data-run={f.runId} href={runLink(f.runId)}>{f.runId} <span class="muted small">(after step {f.step}, {f.status})</span></a>)}</p>
      )}
      {why ? <p class="muted small">Fork and replay: {why}.</p> : (
        <div class="steps">
          <span class="muted small">Fork after step:</span>
          {lineage.steps.map((step) => <button class="fork secondary" data-step={step} disabled={busy !== undefined} onClick={() => void forkAt(step)}>{busy === step ? 'Forking…' : `Fork at ${step}`}</button>)}
          <a class="button secondary" data-testid="replay-link" href={`#/replay/${encodeURIComponent(runId)}`}>Replay through today's layers</a>
        </div>
      )}
      {error && <p class="error">{error}</p>}
    </section>
  );
}

interface LayerView { name: string; source: string; depth: number; same: boolean; then: string | null; now: string | null }
interface CallView { kind: 'model' | 'tool'; id: string; name: string; step: number; same: boolean; then: string | null; now: string | null; layers: LayerView[] }
interface ReplayView {
  runId: string;
  agentName: string;
  same: boolean;
  sameTranscript: boolean;
  status: string;
  divergence?: { kind: string; id: string; name: string; step: number; reason: string };
  error?: { code: string; message: string };
  answered: { models: number; tools: number };
  calls: CallView[];
}

/** The stored run replayed through the agent's layers as they are now: each layer, then and now, differences marked. */
export function ReplayScreen({ runId }: { runId: string }) {
  const [view, setView] = useState<ReplayView | undefined>();
  const [error, setError] = useState<string | undefined>();
  const run = useCallback(() => {
    setView(undefined);
    setError(undefined);
    api<ReplayView>(`runs/${encodeURIComponent(runId)}/replay`, { method: 'POST', body: '{}' }).then(setView, (e: Error) => setError(e.message));
  }, [runId]);
  useEffect(run, [run]);
  if (error) return <section class="replay"><h1>Replay of <a href={runLink(runId)}>{runId}</a></h1><p class="error">{error}</p></section>;
  if (!view) return <p>Replaying…</p>;
  const changed = view.calls.filter((call) => !call.same).length;
  return (
    <section class="replay" data-run={runId} data-same={String(view.same)}>
      <h1>Replay of <a href={runLink(runId)}>{runId}</a> <span class={`badge ${view.same ? 'completed' : 'failed'}`} data-testid="replay-verdict">{view.same ? 'same' : 'diverged'}</span></h1>
      <p class="muted">
        {view.agentName} · the model and the tools answered from the record ({view.answered.models} model calls, {view.answered.tools} tool results) ·
        {' '}{changed === 0 ? 'every call as stored' : `${changed} call(s) differ`} · <button class="secondary" onClick={run}>Replay again</button>
      </p>
      {view.divergence && (
        <p class="divergence" data-testid="divergence">
          Diverged at {view.divergence.kind} <code>{view.divergence.name}</code> {view.divergence.id} (step {view.divergence.step}): {view.divergence.reason}
        </p>
      )}
      {view.calls.map((call) => (
        <div class={`replay-call ${call.same ? 'same' : 'changed'}`} data-call={call.id} data-same={String(call.same)}>
          <div class="call-head"><span class="kind">{call.kind}</span> <strong>{call.name}</strong> <span class="muted small">{call.id} · step {call.step}</span> {!call.same && <span class="mark">≠ differs</span>}</div>
          <table class="side-by-side">
            <thead><tr><th>Layer</th><th>Then (stored)</th><th>Now (replayed)</th></tr></thead>
            <tbody>
              {call.layers.map((layer) => (
                <tr class={layer.same ? 'same' : 'changed'} data-layer={layer.name} data-same={String(layer.same)}>
                  <td style={{ paddingLeft: `${8 + layer.depth * 12}px` }}>{!layer.same && <span class="mark">≠ </span>}{layer.name} <span class="muted small">{layer.source}</span></td>
                  <td class="then">{layer.then ?? <span class="muted">— did not run</span>}</td>
                  <td class="now">{layer.now ?? <span class="muted">— did not run</span>}</td>
                </tr>
              ))}
              <tr class={call.then === call.now ? 'same outcome-row' : 'changed outcome-row'}><td>outcome</td><td class="then">{call.then ?? '— not made'}</td><td class="now">{call.now ?? '— not made'}</td></tr>
            </tbody>
          </table>
        </div>
      ))}
    </section>
  );
}

interface Report {
  name: string;
  id: string;
  startedAt: string;
  passed: boolean;
  failedRuns: number;
  examples: { id: string; runId?: string; status: string; error?: string; scores: Record<string, { score: number; pass: boolean; reason?: string }> }[];
  scorers: Record<string, { mean?: number; threshold?: number }>;
}

/** The evaluations the store keeps, the latest first: each with its scorers' means and gate, and its examples opening their runs. */
export function EvaluationsScreen() {
  const [reports, setReports] = useState<Report[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => void api<Report[]>('evaluations').then(setReports, (e: Error) => setError(e.message)), []);
  if (error) return <p class="error">{error}</p>;
  if (!reports) return <p>Loading…</p>;
  if (reports.length === 0) return <section><h1>Evaluations</h1><p class="muted">No evaluation is stored: give <code>evaluate</code> (or <code>koagent eval</code>) this store to keep its report here.</p></section>;
  return (
    <section class="evaluations">
      <h1>Evaluations</h1>
      {reports.map((report) => {
        const scorers = Object.keys(report.scorers);
        return (
          <details class="evaluation" data-eval={report.id} open={report === reports[0]}>
            <summary>
              <strong>{report.name}</strong> <span class={`badge ${report.passed ? 'completed' : 'failed'}`}>{report.passed ? 'gate passed' : 'gate failed'}</span>
              <span class="muted small"> {report.id} · {when(Date.parse(report.startedAt))} · {report.examples.length} examples{report.failedRuns > 0 ? ` · ${report.failedRuns} failed runs` : ''}</span>
              <span class="means"> {scorers.map((s) => <span class="mean">{s} {report.scorers[s]!.mean === undefined ? '—' : report.scorers[s]!.mean!.toFixed(2)}</span>)}</span>
            </summary>
            <table>
              <thead><tr><th>Example</th><th>Run</th>{scorers.map((s) => <th>{s}</th>)}</tr></thead>
              <tbody>
                {report.examples.map((example) => (
                  <tr data-example={example.id}>
                    <td>{example.id}</td>
                    <td>{example.runId ? <a class="eval-run" data-run={example.runId} href={runLink(example.runId)}>{example.runId}</a> : <span class="muted">no run</span>} {example.status !== 'completed' && <span class={`badge ${example.status}`}>{example.status}</span>}</td>
                    {scorers.map((s) => {
                      const score = example.scores[s];
                      return <td class={score && !score.pass ? 'lost' : ''} title={score?.reason ?? ''}>{score === undefined ? '—' : score.score.toFixed(2)}{score?.reason && <div class="muted small">{score.reason}</div>}</td>;
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        );
      })}
    </section>
  );
}
