// The SQLite store against the conformance suites every store passes, on real files; and what
// is its own: the file's settings, its schema versions, and its options.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../../src/sqlite.js';
import { migrate } from '../../src/stores/sqlite.js';
import { MIGRATIONS } from '../../src/stores/sql/schema.js';
import { storedState } from '../support/durable.js';
import { runConformance } from './conformance-runs.js';
import { sessionConformance } from './conformance-sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `runs-${++files}.db`);
const make = async (options: { leaseMs?: number } = {}) => sqliteStore({ path: file(), ...options });

runConformance('sqlite', make);
sessionConformance('sqlite', make);

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
    expect(() => sqliteStore({ path })).toThrow(/schema version 9, newer than this koagent knows \(2\)/);
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

  it('refuses bad options, naming them', () => {
    expect(() => sqliteStore({} as never)).toThrow("sqliteStore(options): path must name the database file, e.g. sqliteStore({ path: 'runs.db' }) (got undefined)");
    expect(() => sqliteStore({ path: file(), synchronous: 'off' as never })).toThrow(`sqliteStore(options): synchronous must be 'normal' or 'full' (got the string "off")`);
    expect(() => sqliteStore({ path: file(), leaseMs: -5 })).toThrow('sqliteStore(options): leaseMs must be a number of milliseconds ≥ 10 (got -5)');
    expect(() => sqliteStore({ path: file(), busyTimeoutMs: Number.NaN })).toThrow('sqliteStore(options): busyTimeoutMs must be a number of milliseconds ≥ 0 (got NaN)');
    expect(() => sqliteStore({ file: file() } as never)).toThrow('sqliteStore(options): file is not an option of sqliteStore; did you mean `path`?');
    expect(() => sqliteStore({ path: file(), retention: { olderThanMs: 1, statuses: ['running'] } } as never)).toThrow("sqliteStore(options): retention.statuses[0] must be 'completed', 'failed' or 'suspended' (a running run is never pruned)");
    expect(() => sqliteStore({ path: join(dir, 'no/such/dir/runs.db') })).toThrow(/sqliteStore: cannot open .*no\/such\/dir\/runs.db: /);
  });
});
