// The SQLite store against the conformance suites every store passes, on real files; and what
// is its own: the file's settings, its schema versions, and its options.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createAgent, defineTool } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { sqliteStore } from '../../src/sqlite.js';
import { migrate } from '../../src/stores/sqlite.js';
import { MIGRATIONS } from '../../src/stores/sql/schema.js';
import type { Clock } from '../../src/store.js';
import { storedState } from '../support/durable.js';
import { runConformance } from './conformance-runs.js';
import { sessionConformance } from './conformance-sessions.js';
import { unreadableConformance } from './conformance-unreadable.js';
import { keyValueConformance } from './conformance-key-values.js';
import { eventLogConformance } from './conformance-events.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `runs-${++files}.db`);
const make = async (options: { leaseMs?: number; clock?: Clock } = {}) => sqliteStore({ path: file(), ...options });

runConformance('sqlite', make);
// The reader is another connection to the file, as another process's would be.
eventLogConformance('sqlite', async (options) => {
  const path = file();
  const writer = sqliteStore({ path, ...options });
  const reader = sqliteStore({ path, ...options });
  return { writer, reader, close: async () => (await writer.close(), await reader.close()) };
});

afterEach(() => void vi.restoreAllMocks());

/**
 * What happens around each tool call of a two-call run on the store `open` makes, in order: the
 * ledger rows written (`running c1`), the synchronous setting switched (`FULL`, `NORMAL`), the
 * tool's effect. Seen through better-sqlite3 itself, the module the store loads.
 */
async function fsyncJournal(open: () => ReturnType<typeof sqliteStore>): Promise<string[]> {
  const journal: string[] = [];
  const prepare = Database.prototype.prepare;
  vi.spyOn(Database.prototype, 'prepare').mockImplementation(function (this: Database.Database, text: string) {
    const statement = prepare.call(this, text);
    const run = statement.run.bind(statement) as (...params: unknown[]) => Database.RunResult;
    statement.run = (...params: unknown[]) => {
      if (text.startsWith('PRAGMA synchronous')) journal.push(text.slice('PRAGMA synchronous = '.length));
      if (text.startsWith('INSERT INTO koagent_calls')) journal.push(`${String(params[2])} ${String(params[1])}`);
      return run(...params);
    };
    return statement;
  } as typeof prepare);
  const store = open();
  const effect = defineTool({ name: 'effect', description: 'Has an effect', execute: (_args, ctx) => void journal.push(`effect ${ctx.toolCallId}`) });
  const model = mockModel([{ toolCalls: [{ id: 'c1', name: 'effect', args: {} }] }, { toolCalls: [{ id: 'c2', name: 'effect', args: {} }] }, 'done']);
  expect((await createAgent({ name: 'teller', model, tools: [effect], store }).run('go')).status).toBe('completed');
  await store.close();
  return journal;
}
sessionConformance('sqlite', make);
keyValueConformance('sqlite', {
  make,
  raw: async () => {
    const path = file();
    const store = sqliteStore({ path });
    const db = new Database(path);
    return {
      store,
      exec: async (text, ...params) => void db.prepare(text.replace(/\$\d+/g, '?')).run(...params),
      count: async (where) => (db.prepare(`SELECT count(*) AS n FROM koagent_kv WHERE ${where}`).get() as { n: number }).n,
      close: async () => (db.close(), store.close()),
    };
  },
});
unreadableConformance('sqlite', async (options) => {
  const path = file();
  const store = sqliteStore({ path, ...options });
  const db = new Database(path);
  return {
    store,
    exec: async (text, ...params) => void db.prepare(text.replace(/\$\d+/g, '?')).run(...params),
    close: async () => (db.close(), store.close()),
  };
});

describe('sqliteStore', () => {
  it('opens the file in WAL mode with a busy timeout, and keeps its runs when opened again', async () => {
    const path = file();
    const store = sqliteStore({ path, busyTimeoutMs: 1234 });
    await store.createRun({ state: storedState('r1', 's', 'a', [{ role: 'user', content: 'hi' }]), owner: 'w' });
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.sqlite.length);
    db.close();
    const again = sqliteStore({ path });
    expect((await again.loadRun('r1'))!.messages).toEqual([{ role: 'user', content: 'hi' }]);
    await again.close();
  });

  it('applies only the migrations a file lacks, each once, and refuses a file of a newer schema', () => {
    const path = file();
    const db = new Database(path);
    const steps = [['CREATE TABLE t1 (x INTEGER)'], ['CREATE TABLE t2 (x INTEGER)']];
    migrate(db, path, steps.slice(0, 1));
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    migrate(db, path, steps);
    migrate(db, path, steps);
    expect(db.pragma('user_version', { simple: true })).toBe(2);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()).toEqual([{ name: 't1' }, { name: 't2' }]);
    db.pragma('user_version = 9');
    expect(() => migrate(db, path, steps)).toThrow(`sqliteStore(${path}): the database has koagent schema version 9, newer than this koagent knows (2); a newer koagent wrote it — upgrade koagent to use it`);
    db.close();
    expect(() => sqliteStore({ path })).toThrow(/schema version 9, newer than this koagent knows \(4\)/);
  });

  it('brings a version 1 file to version 2: its finished runs are found by retention as before, its running ones never', async () => {
    const path = file();
    const db = new Database(path);
    migrate(db, path, MIGRATIONS.sqlite.slice(0, 1));
    const insert = db.prepare(`INSERT INTO koagent_runs (run_id, agent_name, session_id, identity, status, segment, steps, usage, pending, decisions, children,
      message_count, base_count, lease_token, lease_expires, created_at, updated_at) VALUES (?, 'a', ?, '{}', ?, 0, 0, '{}', '[]', '{}', '{}', 0, 0, 1, 0, 1000, 1000)`);
    insert.run('finished', 's1', 'completed');
    insert.run('running', 's2', 'running');
    db.close();
    const store = sqliteStore({ path });
    expect(await store.prune({ olderThanMs: 0 })).toBe(1);
    await store.close();
    const again = new Database(path, { readonly: true });
    expect(again.prepare('SELECT run_id, finished_at FROM koagent_runs').all()).toEqual([{ run_id: 'running', finished_at: null }]);
    again.close();
  });

  it('rolls a failed migration back whole', () => {
    const path = file();
    const db = new Database(path);
    expect(() => migrate(db, path, [['CREATE TABLE ok (x INTEGER)', 'CREATE TABLE broken (']])).toThrow();
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([]);
    db.close();
  });

  it("fsyncs the commit that marks a tool call running before the tool is entered, by default, and no other", async () => {
    const journal = await fsyncJournal(() => sqliteStore({ path: file() }));
    expect(journal).toEqual([
      'FULL', 'running c1', 'NORMAL', 'effect c1', 'done c1',
      'FULL', 'running c2', 'NORMAL', 'effect c2', 'done c2',
    ]);
  });

  it("with synchronous: 'normal', fsyncs no commit (a power loss may take a running mark back)", async () => {
    const journal = await fsyncJournal(() => sqliteStore({ path: file(), synchronous: 'normal' }));
    expect(journal).toEqual(['running c1', 'effect c1', 'done c1', 'running c2', 'effect c2', 'done c2']);
  });

  it('refuses bad options, naming them', () => {
    expect(() => sqliteStore({} as never)).toThrow("sqliteStore(options): path must name the database file, e.g. sqliteStore({ path: 'runs.db' }) (got undefined)");
    expect(() => sqliteStore({ path: file(), synchronous: 'off' as never })).toThrow(`sqliteStore(options): synchronous must be 'before-tools', 'normal' or 'full' (got the string "off")`);
    expect(() => sqliteStore({ path: file(), leaseMs: -5 })).toThrow('sqliteStore(options): leaseMs must be a number of milliseconds ≥ 10 (got -5)');
    expect(() => sqliteStore({ path: file(), busyTimeoutMs: Number.NaN })).toThrow('sqliteStore(options): busyTimeoutMs must be a number of milliseconds ≥ 0 (got NaN)');
    expect(() => sqliteStore({ path: file(), clock: Date.now as never })).toThrow(/^sqliteStore\(options\): clock must be an object \{ now\(\): number, setTimer\(ms, callback, options\?\) \}/);
    expect(() => sqliteStore({ file: file() } as never)).toThrow('sqliteStore(options): file is not an option of sqliteStore; did you mean `path`?');
    expect(() => sqliteStore({ path: file(), retention: { olderThanMs: 1, statuses: ['running'] } } as never)).toThrow("sqliteStore(options): retention.statuses[0] must be 'completed', 'failed' or 'suspended' (a running run is never pruned)");
    expect(() => sqliteStore({ path: join(dir, 'no/such/dir/runs.db') })).toThrow(/sqliteStore: cannot open .*no\/such\/dir\/runs.db: /);
  });
});
