// examples/http.ts: agents served over HTTP offline, driven by a client of its own — a reconnect
// with Last-Event-ID, an approval bound to its digest (a forged one refused), a cancel from a
// second client — and, with --serve, by the curl lines of docs/http.md, run as a reader runs them.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runExample } from '../support/examples.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/http.ts', () => {
  it('follows a run across a reconnect, refuses a forged decision, approves an edit, and cancels from a second client', async () => {
    const { code, stdout, stderr } = await runExample('examples/http.ts');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^1\. Started run_\S+; read events 1-8, then went away \(the run goes on\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}came back with Last-Event-ID 8: events 9-\d+, each once: true$/));
    expect(lines).toContain("   the text shown equals the run's: true");
    expect(lines).toContain('   a decision with another digest: 409 digest');
    expect(lines).toContainEqual(expect.stringMatching(/^ {3}approved with an edit: 202; the run is completed: "Alice has her money\." /));
    expect(lines).toContain('   decision log: approved by Ada via api, {"to":"Alice","amount":30} -> {"to":"Alice","amount":25}');
    expect(lines).toContain('   refused decisions kept: digest by ada');
    expect(lines).toContainEqual(expect.stringMatching(/^3\. A second client cancelled run_\S+: 202; the follower saw run\.end \(aborted\)$/));
  }, 60_000);

  it('with --serve, answers the curl lines of docs/http.md', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/http.ts', '--serve'], { cwd: root, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()).includes('Serving until Ctrl-C') && resolve());
        child.once('exit', () => reject(new Error(`the example exited: ${out}`)));
      });
      const page = readFileSync(`${root}/docs/http.md`, 'utf8');
      const commands = [...page.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((m) => m[1].replace(/\\\n\s*/g, '').split('\n').filter((line) => line.startsWith('curl')));
      const sh = (line: string) => promisify(execFile)('sh', ['-c', line.replaceAll('localhost:3000', `127.0.0.1:${port}`)], { timeout: 20_000 }).then((r) => r.stdout);
      const [start, follow, resume, read, decide] = commands;
      const { runId } = JSON.parse(await sh(start)) as { runId: string };
      const events = await sh(follow.replace('RUN_ID', runId));
      expect(events).toMatch(/^id: 1\ndata: \{"type":"run\.start"/m);
      expect(events).toMatch(/^event: end\ndata: \{"runId":"\S+","status":"completed"/m);
      expect(await sh(resume.replace('RUN_ID', runId))).toMatch(/^id: 9\n/m);
      expect(JSON.parse(await sh(read.replace('RUN_ID', runId)))).toMatchObject({ runId, status: 'completed' });
      // The decision line, on a run of the teller that waits.
      const headers = { authorization: 'Bearer dev-token', 'content-type': 'application/json' };
      const base = `http://127.0.0.1:${port}`;
      const paying = (await (await fetch(`${base}/runs`, { method: 'POST', headers, body: JSON.stringify({ agent: 'teller', input: 'Pay Alice' }) })).json()) as { runId: string };
      await (await fetch(`${base}/runs/${paying.runId}/events`, { headers })).text();
      const waiting = (await (await fetch(`${base}/runs/${paying.runId}`, { headers })).json()) as { pendingApprovals: { toolCallId: string; digest: string }[] };
      const [pending] = waiting.pendingApprovals;
      const answered = JSON.parse(await sh(decide.replace('RUN_ID', paying.runId).replace('CALL_ID', pending.toolCallId).replace('DIGEST', pending.digest)));
      expect(answered).toMatchObject({ runId: paying.runId, status: 'running' });
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
