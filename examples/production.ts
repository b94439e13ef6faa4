// npx tsx examples/production.ts
// The headline features together, offline, across three processes sharing one SQLite file:
// 1. this process streams a fresh run: the agent reads a file through a real MCP server
//    (@modelcontextprotocol/server-filesystem, spawned over stdio) and wants to write the
//    release notes, which a permission rule sends to a human: the run is suspended, in the store;
// 2. an approver process finds the waiting run in the store, approves each pending call and
//    resumes the run by its id; the MCP write goes through, and the approver is killed (SIGKILL)
//    while it announces the release;
// 3. this process recovers the run from the file: the calls done before the crash do not run
//    again, and the interrupted announcement (idempotent) runs again with the same key and
//    announces once.
// Every phase streams: the fresh run from `agent.stream`, the resume and the recovery with
// `{ stream: true }`, each event printed as it comes through one printer (`eventPrinter`).
import { spawn } from 'node:child_process';
import { appendFileSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, textOf, type Agent, type AgentEvent, type GenerateOptions, type Message, type ModelProvider } from 'koagent';
import { mcpTools } from 'koagent/mcp';
import { sqliteStore } from 'koagent/sqlite';
import { mockModel, type MockReply } from 'koagent/testing';

const LEASE_MS = 500;

/** The filesystem server's entry file, from its package (run with this Node, no npx needed). */
function filesystemServer(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@modelcontextprotocol/server-filesystem/package.json');
  return join(dirname(manifest), (require(manifest) as { bin: Record<string, string> }).bin['mcp-server-filesystem']);
}

/** The next step, read from the transcript alone, so any process can take the run on. */
function nextStep(messages: Message[], workspace: string): MockReply {
  const results = new Map(messages.flatMap((m) => (m.role === 'tool' ? [[m.name, mcpText(textOf(m.content))] as const] : [])));
  if (!results.has('fs_read_text_file')) return { text: 'Reading the changes first.', toolCalls: [{ id: 'read', name: 'fs_read_text_file', args: { path: join(workspace, 'CHANGES.txt') } }] };
  if (!results.has('fs_write_file')) {
    const notes = `# Release 1.2\n\n${results.get('fs_read_text_file')}`;
    return { text: 'Writing the release notes.', toolCalls: [{ id: 'write', name: 'fs_write_file', args: { path: join(workspace, 'RELEASE.md'), content: notes } }] };
  }
  if (!results.has('announce')) return { text: 'Announcing it.', toolCalls: [{ id: 'announce', name: 'announce', args: { channel: '#releases' } }] };
  return 'Release 1.2 is out: the notes are in RELEASE.md and #releases knows.';
}

/** The text of an MCP tool's result (`{"content": …}`), or the result as it is. */
function mcpText(result: string): string {
  try {
    return (JSON.parse(result) as { content?: string }).content ?? result;
  } catch {
    return result;
  }
}

/** A scripted model that answers each call from the transcript; a one-reply mockModel replies, streamed or not. */
function releaseModel(workspace: string): ModelProvider {
  const reply = (request: GenerateOptions) => mockModel([nextStep(request.messages, workspace)]);
  return { name: 'release-model', generate: (request) => reply(request).generate(request), stream: (request) => reply(request).stream!(request) };
}

/** The same agent in every process: MCP tools, a local idempotent tool, a rule that asks, a store. */
function releaseAgent(dir: string, role: string, onAnnounce: () => Promise<void> = async () => undefined): Agent {
  const workspace = join(dir, 'workspace');
  const fs = mcpTools({ name: 'fs', command: process.execPath, args: [filesystemServer(), workspace], prefix: 'fs_' });
  const announce = defineTool({
    name: 'announce',
    description: 'Announce the release in a chat channel',
    input: z.object({ channel: z.string() }),
    // The chat service deduplicates by the key, so running the call again announces once.
    idempotent: true,
    async execute({ channel }, ctx) {
      appendFileSync(join(dir, 'announce-attempts.log'), `${role}|${ctx.idempotencyKey}\n`);
      const text = announceOnce(dir, ctx.idempotencyKey, channel);
      await onAnnounce();
      return text;
    },
  });
  return createAgent({
    name: 'release-manager',
    instructions: 'You publish releases.',
    model: releaseModel(workspace),
    tools: [fs, announce],
    store: sqliteStore({ path: join(dir, 'runs.db'), leaseMs: LEASE_MS }),
    // The server marks write_file destructive: a human says yes first.
    permissions: [{ name: 'destructive-mcp', annotations: { destructiveHint: true }, decision: 'ask', reason: 'it changes files' }],
    // Each execution is logged with the process that ran it (an asked call runs when approved).
    middleware: [{
      name: 'execution-log',
      async tool(ctx, next) {
        const outcome = await next();
        if (!outcome.requiresApproval) appendFileSync(join(dir, 'executions.log'), `${role}|${ctx.toolName}\n`);
        return outcome;
      },
    }],
  });
}

/** The chat service: one announcement per idempotency key, written whole or not at all. */
function announceOnce(dir: string, key: string, channel: string): string {
  const file = join(dir, `announced-${encodeURIComponent(key)}`);
  const draft = `${file}.${process.pid}`;
  writeFileSync(draft, channel);
  try {
    linkSync(draft, file);
    appendFileSync(join(dir, 'announcements.log'), `${channel} ${key}\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return `announced in ${channel}`;
}

/** Prints a run's events as they come: streamed text is counted in deltas, tool calls and approvals shown. */
function eventPrinter(print: (line: string) => void): (event: AgentEvent) => void {
  let deltas = 0;
  const short = (value: unknown) => (JSON.stringify(value) ?? '').replace(/\/[^"]*\/workspace/g, '<workspace>').slice(0, 70);
  return (event) => {
    if (event.type === 'text.delta') deltas++;
    if (event.type === 'model.done') {
      print(`  model: "${textOf(event.message.content)}"${deltas > 0 ? ` (streamed in ${deltas} deltas)` : ''}`);
      deltas = 0;
    }
    if (event.type === 'tool.start') print(`  → ${event.toolName} ${short(event.args)}`);
    if (event.type === 'tool.done') print(`  ← ${event.toolName}: ${short(typeof event.result === 'string' ? mcpText(event.result) : event.result)}`);
    if (event.type === 'approval.requested') print(`  ? ${event.toolName} waits for a human: ${event.reason}`);
    if (event.type === 'run.end') print(`  run: ${event.status}${event.stopReason ? ` (${event.stopReason})` : ''}`);
  };
}

const lines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

/** Run the example; `print` gets each line it would print. */
export async function main(print: (line: string) => void = console.log): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-production-'));
  try {
    mkdirSync(join(dir, 'workspace'));
    writeFileSync(join(dir, 'workspace', 'CHANGES.txt'), '- streaming everywhere\n- runs survive crashes');
    const show = eventPrinter(print);

    print('1. This process streams a fresh run (SQLite store, MCP filesystem server):');
    const stream = releaseAgent(dir, 'the starter').stream('Publish release 1.2');
    for await (const event of stream) show(event);
    const paused = await stream.result;
    print(`   run ${paused.status}, stored: waiting for ${paused.pendingApprovals.map((p) => p.toolName).join(', ')}`);

    print('2. An approver process resumes it by run id, and is killed while it announces:');
    await approverUntilKilled(dir, (line) => print(`   [approver] ${line}`));
    print('   the approver was killed (SIGKILL)');

    print('3. This process recovers the run from the file:');
    // A run is recovered once its lease expired (its process stopped renewing it).
    await sleep(LEASE_MS + 50);
    const recovery = releaseAgent(dir, 'the recoverer').runs.recover({ stream: true });
    for await (const event of recovery) show(event);
    const [recovered] = await recovery.result;
    if (recovered?.result === undefined) throw recovered?.error ?? new Error('no run to recover');
    print(`   answer: ${recovered.result.text}`);

    const executions = lines(join(dir, 'executions.log'));
    const ran = (tool: string) => executions.filter((line) => line.endsWith(`|${tool}`)).map((line) => line.split('|')[0]).join(', ');
    const attempts = lines(join(dir, 'announce-attempts.log'));
    print(`   ran once each: fs_read_text_file (by ${ran('fs_read_text_file')}), fs_write_file (by ${ran('fs_write_file')}); not again after the crash`);
    print(`   announce was started by ${attempts.map((line) => line.split('|')[0]).join(' and ')}, with ${new Set(attempts.map((line) => line.split('|')[1])).size} idempotency key; announcements made: ${lines(join(dir, 'announcements.log')).length}`);
    print(`   RELEASE.md: ${JSON.stringify(readFileSync(join(dir, 'workspace', 'RELEASE.md'), 'utf8'))}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Start the approver process and kill it once it says it is announcing; `print` gets its lines. */
async function approverUntilKilled(dir: string, print: (line: string) => void): Promise<void> {
  const here = fileURLToPath(import.meta.url);
  // From the sources (this file is TypeScript) the child needs tsx too; built, it needs nothing.
  const loader = here.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const approver = spawn(process.execPath, [...loader, here, 'approver', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let pending = '';
  await new Promise<void>((resolve, reject) => {
    approver.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const line of complete) {
        if (line === 'announcing') approver.kill('SIGKILL');
        else print(line);
      }
    });
    approver.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`the approver exited by itself (${signal ?? code})`))));
  });
}

/** The approver process: approve every pending call of every waiting run, and resume it by id. */
async function approver(dir: string): Promise<void> {
  const agent = releaseAgent(dir, 'the approver', async () => {
    process.stdout.write('announcing\n');
    await sleep(60_000);
  });
  const show = eventPrinter(console.log);
  for (const run of await agent.runs.pendingApprovals()) {
    console.log(`run ${run.runId.slice(0, 8)}… waits for ${run.pendingApprovals.map((p) => p.toolName).join(', ')}: approving each`);
    const decisions = Object.fromEntries(run.pendingApprovals.map((p) => [p.toolCallId, true]));
    const resumed = agent.resume(run.runId, decisions, { stream: true });
    for await (const event of resumed) show(event);
    await resumed.result;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'approver') await approver(process.argv[3]!);
  else await main();
}
