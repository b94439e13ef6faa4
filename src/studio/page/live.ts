// The page's one event stream: each screen that shows runs listens for the ones that changed.
import { useEffect } from 'preact/hooks';
import { apiUrl, type RunRow } from './client.ts';

type Listener = (changed: RunRow[], removed: string[]) => void;
const listeners = new Set<Listener>();

/** Call `listener` with the runs that changed, while the component is on the page. */
export function useLiveRuns(listener: Listener): void {
  useEffect(() => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, [listener]);
}

export function connect(setLive: (live: boolean) => void): void {
  const events = new EventSource(apiUrl('events'));
  events.addEventListener('open', () => setLive(true));
  events.addEventListener('error', () => setLive(false));
  events.addEventListener('runs', (event) => {
    const { changed, removed } = JSON.parse((event as MessageEvent<string>).data) as { changed: RunRow[]; removed: string[] };
    for (const listener of listeners) listener(changed, removed);
  });
}

