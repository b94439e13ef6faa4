// Approval of an MCP tool call, across processes: the call suspends before it reaches the server,
// the state survives JSON, and another Node process that builds the same agent resumes it and
// calls the server exactly once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildMcpAgent } from '../fixtures/mcp-agent.js';
import { childProcesses, startHttpMcpServer, type HttpMcpServer } from '../fixtures/mcp-servers.js';
import { childReport } from '../support/child-report.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/fixtures/mcp-resume-child.ts');

let bank: HttpMcpServer;
let dir: string;
const payments: { to: string; cents: number }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'koagent-mcp-resume-'));
  bank = await startHttpMcpServer((server) =>
    server.registerTool('pay', { description: 'Pay someone', inputSchema: { to: z.string(), cents: z.number().int() }, annotations: { destructiveHint: true } }, ({ to, cents }) => {
      payments.push({ to, cents });
      return { content: [{ type: 'text', text: `paid ${cents} cents to ${to} (payment #${payments.length})` }] };
    }),
  );
});

afterAll(async () => {
  await bank.close();
  rmSync(dir, { recursive: true, force: true });
  expect(childProcesses()).toEqual([]);
});

function resumeInChild(stateFile: string, decisions: Record<string, boolean>): Promise<{ status: string; text: string; tool: unknown; events: string[] }> {
  return childReport(CHILD, [bank.url, stateFile, JSON.stringify(decisions)]) as never;
}

describe('MCP tool calls: approval across processes', () => {
  it('suspends before the server is called, survives JSON, and another process resumes it, calling the server once', async () => {
    const paused = await buildMcpAgent(bank.url, [{ toolCalls: [{ id: 'pay_1', name: 'bank_pay', args: { to: 'alice', cents: 8000 } }] }]).run('Pay Alice 80');
    expect(paused.pendingApprovals).toEqual([{ toolCallId: 'pay_1', toolName: 'bank_pay', args: { to: 'alice', cents: 8000 }, reason: 'Money moves need a human' }]);
    expect(payments).toEqual([]);
    const stateFile = join(dir, 'state.json');
    writeFileSync(stateFile, JSON.stringify(paused.state));

    const report = await resumeInChild(stateFile, { pay_1: true });
    expect(report).toMatchObject({ status: 'completed', text: 'Paid Alice.', tool: 'paid 8000 cents to alice (payment #1)' });
    expect(payments).toEqual([{ to: 'alice', cents: 8000 }]);
    expect(bank.sessions()).toBe(0);
  });

  it('a denial resumed in another process never reaches the server', async () => {
    const before = payments.length;
    const paused = await buildMcpAgent(bank.url, [{ toolCalls: [{ id: 'pay_2', name: 'bank_pay', args: { to: 'bob', cents: 100 } }] }]).run('Pay Bob 1');
    const stateFile = join(dir, 'denied.json');
    writeFileSync(stateFile, JSON.stringify(paused.state));
    const report = await resumeInChild(stateFile, { pay_2: false });
    expect(report.tool).toBe('Error (denied): A human denied this call');
    expect(payments.length).toBe(before);
  });
});
