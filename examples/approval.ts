// npx tsx examples/approval.ts [approve|deny]
// A run pauses before a dangerous tool, a human decides, and the run finishes. The paused state
// goes through JSON on the way, as it would through a database between two processes.
// Offline: the model is scripted with mockModel.
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type RunResult } from 'koagent';
import { mockModel } from 'koagent/testing';

/** Run the example; `print` gets each line it would print. Returns the finished run. */
export async function main(approve = true, print: (line: string) => void = console.log): Promise<RunResult> {
  const listFiles = defineTool({
    name: 'list_files',
    description: 'List the files in the workspace',
    execute: () => ['notes.txt', 'old-backup.tar'],
  });
  const deleteFile = defineTool({
    name: 'delete_file',
    description: 'Delete a file for good',
    input: z.object({ path: z.string() }),
    needsApproval: true, // dangerous: never without a human
    execute: ({ path }) => ({ deleted: path }),
  });
  const model = mockModel([
    { text: 'Let me look, then remove the old backup.', toolCalls: [{ name: 'list_files', args: {} }, { name: 'delete_file', args: { path: 'old-backup.tar' } }] },
    approve ? 'I deleted old-backup.tar; notes.txt is untouched.' : 'I left old-backup.tar in place, as you asked.',
  ]);
  const agent = createAgent({
    name: 'janitor',
    instructions: 'You keep the workspace tidy.',
    model,
    tools: [listFiles, deleteFile],
    // Rules see every call first: reading is fine, deleting asks a human (so would needsApproval alone).
    permissions: [
      { name: 'read-only', tool: 'list_*', decision: 'allow' },
      { name: 'destructive', tool: 'delete_*', decision: 'ask', reason: 'deleting is permanent' },
    ],
    onPermissionDecision: (r) => print(`  [audit] ${r.toolName}: ${r.decision} by ${r.source}${r.rule ? ` "${r.rule}"` : ''}${r.reason ? ` (${r.reason})` : ''}`),
  });

  const paused = await agent.run('Clean up my workspace');
  print(`run: ${paused.status} (${paused.stopReason})`);
  for (const call of paused.pendingApprovals) print(`waiting for a human: ${call.toolName} ${JSON.stringify(call.args)}, because ${call.reason}`);

  // The state is plain JSON: store it anywhere, resume it later, here or in another process.
  const stored = JSON.stringify(paused.state);
  print(`state stored: ${stored.length} bytes of JSON`);

  const decision = approve ? { approved: true, reason: 'the backup is on tape' } : { approved: false, reason: 'keep it until Friday' };
  print(`the human ${approve ? 'approves' : 'denies'}: ${decision.reason}`);
  const decisions = Object.fromEntries(paused.pendingApprovals.map((call) => [call.toolCallId, decision]));
  const done = await agent.resume(JSON.parse(stored), decisions);
  for (const m of done.messages) if (m.role === 'tool') print(`  ${m.name} → ${m.content}`);
  print(`run: ${done.status} (${done.stopReason})`);
  print(`answer: ${done.text}`);
  return done;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] !== 'deny');
}
