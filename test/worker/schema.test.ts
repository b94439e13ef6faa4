// Spec of the tables' creation: workers and clients started at once on a fresh database all
// start (pg-boss's schema and koagent's are created once, under a lock, while the others wait).
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { useDatabase } from '../support/worker-harness.js';

const database = useDatabase();
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/worker-start-child.ts');

/** A process that makes a worker or a client each time it is told to, and says how it went. */
interface Starter {
  start(url: string): Promise<string>;
  process: ChildProcess;
}

const starters: Starter[] = [];
afterEach(() => {
  for (const starter of starters.splice(0)) starter.process.kill('SIGKILL');
});

async function starter(kind: 'worker' | 'client'): Promise<Starter> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, kind], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (chunk) => (errors += chunk));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`the ${kind} process exited: ${errors}`);
    return line.value;
  };
  expect(await next()).toBe('loaded');
  const made: Starter = {
    process: child,
    start(url) {
      child.stdin!.write(`start ${url}\n`);
      return next();
    },
  };
  starters.push(made);
  return made;
}

describe('processes starting at once on a fresh database', () => {
  it('all start, round after round: none trips over another creating the tables', async () => {
    // Loaded first, so that each round's starts are sent to all four in the same moment.
    const four = await Promise.all([starter('worker'), starter('worker'), starter('worker'), starter('client')]);
    for (let round = 1; round <= 5; round++) {
      const { url } = await database();
      expect({ round, outcomes: await Promise.all(four.map((one) => one.start(url))) }).toEqual({ round, outcomes: ['started', 'started', 'started', 'started'] });
    }
  }, 120_000);
});
