// The studio page: screens chosen by the URL's hash — the runs (#/), one run (#/run/<id>), the
// approvals (#/approvals), the playground (#/play, #/play/<id>), a run's replay (#/replay/<id>)
// and the evaluations (#/evaluations) — and one event stream that tells them when runs change.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApprovalsScreen } from './approvals.tsx';
import { EvaluationsScreen, ReplayScreen } from './lab.tsx';
import { PlaygroundScreen } from './playground.tsx';
import { token } from './client.ts';
import { connect } from './live.ts';
import { RunScreen } from './run.tsx';
import { RunsScreen } from './runs.tsx';
import './style.css';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

// A run's screen is keyed by its id: another run opened in the same tab starts from nothing, never
// showing the run before under the new one's id while it loads.
function App() {
  const hash = useHash();
  const [live, setLive] = useState(false);
  useEffect(() => connect(setLive), []);
  if (!token()) return <main class="empty"><h1>koagent studio</h1><p>Open the URL the studio printed: it holds the token this page needs.</p></main>;
  const run = /^#\/run\/(.+)$/.exec(hash);
  const play = /^#\/play(?:\/(.+))?$/.exec(hash);
  const replayed = /^#\/replay\/(.+)$/.exec(hash);
  const screen = run ? 'run' : play ? 'play' : replayed ? 'replay' : hash === '#/approvals' ? 'approvals' : hash === '#/evaluations' ? 'evaluations' : 'runs';
  return (
    <>
      <header>
        <strong>koagent studio</strong>
        <nav>
          <a href="#/" class={screen === 'runs' ? 'active' : ''}>Runs</a>
          <a href="#/approvals" class={screen === 'approvals' ? 'active' : ''}>Approvals</a>
          <a href="#/play" class={screen === 'play' ? 'active' : ''}>Playground</a>
          <a href="#/evaluations" class={screen === 'evaluations' ? 'active' : ''}>Evaluations</a>
        </nav>
        <span class={`live ${live ? 'on' : ''}`} data-testid="live">{live ? '● live' : '○ offline'}</span>
      </header>
      <main>
        {run ? <RunScreen key={run[1]} runId={decodeURIComponent(run[1]!)} /> : play ? <PlaygroundScreen key={play[1] ?? ''} followId={play[1] === undefined ? undefined : decodeURIComponent(play[1])} /> : replayed ? <ReplayScreen key={replayed[1]} runId={decodeURIComponent(replayed[1]!)} /> : screen === 'approvals' ? <ApprovalsScreen /> : screen === 'evaluations' ? <EvaluationsScreen /> : <RunsScreen />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
