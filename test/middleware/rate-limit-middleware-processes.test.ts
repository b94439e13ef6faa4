// rateLimitMiddleware's counters, shared with another process through a SQLite file
// (test/fixtures/rate-limit-child.ts). Its other tests, in one process: rate-limit-middleware.test.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import type { RateLimitWait } from '../../src/middleware/rate-limit-middleware.js';
import { rateLimitMiddleware } from '../../src/middleware.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'koagent-rate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rateLimitMiddleware: shared counters', () => {
  it('is shared with another process through a SQLite file', async () => {
    const path = join(dir, 'shared.db');
    const store = sqliteStore({ path });
    const limit = rateLimitMiddleware({ requestsPerMinute: 2, key: () => 'shared', store });
    const agent = createAgent({ model: mockModel(['a', 'b']), middleware: [limit] });
    await agent.run('1');
    await agent.run('2');
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/fixtures/rate-limit-child.ts'), path], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(err).toBe('');
    expect(code).toBe(0);
    const seen = JSON.parse(out) as { waits: RateLimitWait[]; calls: number };
    // This process used up the window; the child waited instead of calling its model.
    expect(seen.calls).toBe(0);
    expect(seen.waits[0]).toMatchObject({ key: 'shared', reason: 'requests' });
    await store.close();
  }, 30_000);
});
