// The worker processes of the event-log kill tests (test/fixtures/event-log-child.ts): each one
// streams or recovers a run, says `started` once its segment began, and may be SIGKILLed at any
// point. A worker that has not exited after 45 s hangs: it is killed, and the test fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/event-log-child.ts');

/** How a worker process ended, with what it wrote. */
export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A worker process: `started` once its segment began, `exited` with how it ended. */
export interface EventLogWorker {
  child: ChildProcess;
  started: Promise<void>;
  exited: Promise<WorkerExit>;
}

/** The workers a test started; `killAll()` in its `afterAll`. */
export class EventLogWorkers {
  readonly #living = new Set<ChildProcess>();

  /** Start a worker with the fixture's `args`. */
  start(args: string[]): EventLogWorker {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#living.add(child);
    let stdout = '';
    let stderr = '';
    let onStart: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (onStart = resolve));
    const exited = new Promise<WorkerExit>((resolve) => {
      const hang = setTimeout(() => {
        stderr += 'the worker hung: killed after 45 s\n';
        child.kill('SIGKILL');
      }, 45_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('started\n')) onStart();
      });
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('exit', (code, signal) => {
        clearTimeout(hang);
        this.#living.delete(child);
        onStart();
        resolve({ code, signal, stdout, stderr });
      });
    });
    return { child, started, exited };
  }

  killAll(): void {
    for (const child of this.#living) child.kill('SIGKILL');
  }
}

/** Fail the test when a worker that was not killed did not end well. */
export function endedWell(exit: WorkerExit): void {
  if (exit.signal === 'SIGKILL') return;
  if (exit.code !== 0) throw new Error(`a worker failed (exit ${exit.code}): ${exit.stderr || exit.stdout}`);
}
