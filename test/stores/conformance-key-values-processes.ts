// What the SQL stores' key-value tables must do across processes: counters that processes
// sharing one database add to lose no add. Run on SQLite (a shared file) and PostgreSQL, with
// child processes (test/fixtures/key-values-child.ts), so it is not in the unit tier.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunStore } from '../../src/store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/key-values-child.ts');

/** Where child processes open the same database (`sqlite` file or `postgres` URL), and a way to open it here. */
export type SharedDatabase = () => Promise<{ kind: 'sqlite' | 'postgres'; where: string; open(): Promise<RunStore> }>;

/** Start `key-values-child.ts` processes on one database, let them add together, and give each one's totals. */
async function addInProcesses(kind: string, where: string, key: string, processes: number, adds: number): Promise<number[][]> {
  const children = Array.from({ length: processes }, () => spawn(process.execPath, ['--import', 'tsx', CHILD, kind, where, key, String(adds)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }));
  const outputs = children.map((child) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      const check = () => (out.includes('ready\n') ? resolve() : undefined);
      child.stdout.on('data', check);
      child.once('exit', (code) => reject(new Error(`child exited (${code}) before it was ready: ${err}`)));
    });
    const done = new Promise<number[]>((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n')[1])) : reject(new Error(`child exited ${code}: ${err}`)))));
    return { child, ready, done };
  });
  await Promise.all(outputs.map((o) => o.ready));
  for (const { child } of outputs) child.stdin.write('go\n');
  return Promise.all(outputs.map((o) => o.done));
}

export function sharedKeyValueConformance(kind: string, shared: SharedDatabase): void {
  describe(`${kind} store: key-value counters across processes`, () => {
    it('two processes adding to one counter lose no add, and no total is given twice', async () => {
      const db = await shared();
      const adds = 150;
      const [a, b] = await addInProcesses(db.kind, db.where, 'shared', 2, adds);
      expect(a).toHaveLength(adds);
      expect(b).toHaveLength(adds);
      expect([...a, ...b].sort((x, y) => x - y)).toEqual(Array.from({ length: 2 * adds }, (_, i) => i + 1));
      const store = await db.open();
      try {
        expect(await store.keyValues!.get('shared')).toBe(2 * adds);
      } finally {
        await store.close();
      }
    }, 60_000);
  });
}
