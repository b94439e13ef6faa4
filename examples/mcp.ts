// npx tsx examples/mcp.ts [approve|deny]
// An agent uses the tools of a real MCP server — @modelcontextprotocol/server-filesystem, spawned
// over stdio in a temporary folder — and every call goes through the onion like a local tool's:
// a middleware watches, an AgentHook puts relative paths inside the folder, and a permission
// rule asks a human before any destructive MCP tool. Offline: the model is scripted with mockModel.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createAgent, type RunResult } from 'koagent';
import { mcpTools } from 'koagent/mcp';
import { mockModel } from 'koagent/testing';

/** The filesystem server's entry file, from its package (run with this Node, no npx needed). */
function filesystemServer(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@modelcontextprotocol/server-filesystem/package.json');
  return join(dirname(manifest), (require(manifest) as { bin: Record<string, string> }).bin['mcp-server-filesystem']);
}

/** Run the example; `print` gets each line it would print. Returns the finished run. */
export async function main(approve = true, print: (line: string) => void = console.log): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-mcp-example-'));
  const shown = (text: string) => text.replaceAll(dir, '<folder>');
  try {
    const fs = mcpTools({ name: 'fs', command: process.execPath, args: [filesystemServer(), dir], prefix: 'fs_' });
    const agent = createAgent({
      name: 'scribe',
      instructions: 'You keep notes in the folder.',
      model: mockModel([
        { text: 'Where may I write?', toolCalls: [{ id: 'where', name: 'fs_list_allowed_directories', args: {} }] },
        { toolCalls: [{ id: 'write', name: 'fs_write_file', args: { path: 'notes.txt', content: 'MCP tools go through the onion.' } }] },
        { toolCalls: [{ id: 'read', name: 'fs_read_text_file', args: { path: 'notes.txt' } }] },
        approve ? 'The note is in place.' : 'I may not write here, so there is no note.',
      ]),
      tools: [fs],
      // The server marks write_file destructive; a server that says nothing counts as destructive too.
      permissions: [{ name: 'destructive-mcp', annotations: { destructiveHint: true }, decision: 'ask', reason: 'it changes files' }],
      onPermissionDecision: (r) => print(`      [rule] ${r.toolName}: ${r.decision} by ${r.source}${r.rule ? ` "${r.rule}"` : ''}${r.reason ? ` (${r.reason})` : ''}`),
      middleware: [{
        name: 'onion',
        async model(ctx, next) {
          print(`  → model turn ${ctx.step}, told of ${ctx.request.tools.length} tools of MCP server "fs"`);
          return next();
        },
        async tool(ctx, next) {
          print(`    → ${ctx.toolName} ${shown(JSON.stringify(ctx.args))}${ctx.tool?.annotations?.destructiveHint ? ' (destructive)' : ''}`);
          const outcome = await next();
          const what = outcome.requiresApproval ? 'waits for a human' : outcome.error ? `${outcome.error.kind}: ${outcome.error.message}` : JSON.stringify(outcome.result);
          print(`    ← ${ctx.toolName}: ${shown(what)}`);
          return outcome;
        },
      }],
      // An AgentHook, as for any tool: a relative path is put inside the folder ({ input } rewrite).
      hooks: [{ name: 'in-folder', preToolCall: (ctx) => (typeof ctx.args.path === 'string' && !isAbsolute(ctx.args.path) ? { input: { ...ctx.args, path: join(dir, ctx.args.path) } } : undefined) }],
    });

    print('run:');
    const paused = await agent.run('Write a note');
    print(`run: ${paused.status} (${paused.stopReason}); the server process is ${fs.connected ? 'still running' : 'closed'}`);
    for (const call of paused.pendingApprovals) print(`waiting for a human: ${call.toolName} ${shown(JSON.stringify(call.args))}, because ${call.reason}`);

    const stored = JSON.stringify(paused.state);
    print(`the human ${approve ? 'approves' : 'denies'}; resuming from ${stored.length} bytes of JSON:`);
    const decisions = Object.fromEntries(paused.pendingApprovals.map((call) => [call.toolCallId, approve]));
    const done = await agent.resume(JSON.parse(stored), decisions);
    print(`run: ${done.status} (${done.stopReason}); the server process is ${fs.connected ? 'still running' : 'closed'}`);
    print(`folder: ${JSON.stringify(readdirSync(dir))}`);
    print(`answer: ${done.text}`);
    return done;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] !== 'deny');
}
