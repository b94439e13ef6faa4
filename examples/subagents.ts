// npx tsx examples/subagents.ts — an editor agent hands research to a researcher agent, offline.
// Shows: the editor's AgentHook sees the researcher's tool calls too (with ctx.subagent saying
// where they come from); a `lead-only` middleware stays in the editor; the researcher's events
// reach the editor's listener tagged with agentPath; its usage adds to the editor's; and its
// approval pause pauses the editor, which is resumed from JSON with the prefixed call id.
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type Middleware, type PendingApproval, type RunResult } from 'koagent';
import type { AgentHook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

const search = defineTool({
  name: 'search',
  description: 'Searches the encyclopedia',
  input: z.object({ query: z.string() }),
  execute: ({ query }) => `${query}: they hold hands while sleeping; they use stones as tools`,
});

const publish = defineTool({
  name: 'publish',
  description: 'Publishes a note on the public site',
  input: z.object({ title: z.string(), body: z.string() }),
  needsApproval: true,
  execute: ({ title }) => ({ url: `https://notes.example/${title.toLowerCase()}` }),
});

export interface SubagentDemo {
  audit: string[];
  leadOnly: string[];
  pending: PendingApproval[];
  taggedEvents: number;
  result: RunResult;
}

export async function main(print: (line: string) => void = console.log): Promise<SubagentDemo> {
  const audit: string[] = [];
  const leadOnly: string[] = [];
  // An AgentHook of the editor. Sub-agents inherit it, so it sees every tool call of the team.
  const auditHook: AgentHook = {
    name: 'audit',
    preToolCall(ctx) {
      const where = ctx.subagent ? `${ctx.subagent.path.join(' › ')} (depth ${ctx.subagent.depth})` : ctx.agentName;
      const line = `[audit] ${where}: ${ctx.toolName}${ctx.resumedAfterApproval ? ' (approved, running now)' : ''}`;
      audit.push(line);
      print(`  ${line}`);
    },
  };
  // Only the editor's own model calls: `lead-only` keeps it out of the researcher.
  const editorCalls: Middleware = {
    name: 'editor-calls',
    scope: 'lead-only',
    model(ctx, next) {
      const line = `[editor-calls] ${ctx.agentName} asks its model (step ${ctx.step})`;
      leadOnly.push(line);
      print(`  ${line}`);
      return next();
    },
  };

  const build = (researcherScript: Parameters<typeof mockModel>[0], editorScript: Parameters<typeof mockModel>[0]) => {
    const researcher = createAgent({ name: 'researcher', instructions: 'You research and publish notes.', model: mockModel(researcherScript), tools: [search, publish] });
    return createAgent({
      name: 'editor',
      instructions: 'You run a small science site.',
      model: mockModel(editorScript),
      tools: [researcher.asTool({ description: 'Researches a topic and publishes a note about it' })],
      hooks: [auditHook],
      middleware: [editorCalls],
    });
  };

  const researcherScript = [
    { toolCalls: [{ name: 'search', args: { query: 'otters' } }], usage: { inputTokens: 30, outputTokens: 10 } },
    { toolCalls: [{ name: 'publish', args: { title: 'Otters', body: 'Otters hold hands while sleeping.' } }], usage: { inputTokens: 60, outputTokens: 20 } },
    { text: 'Published "Otters" at https://notes.example/otters.', usage: { inputTokens: 90, outputTokens: 12 } },
  ];
  const editorScript = [
    { toolCalls: [{ name: 'researcher', args: { task: 'Find two facts about otters and publish a note' } }], usage: { inputTokens: 40, outputTokens: 15 } },
    { text: 'Done: the otter note is live at https://notes.example/otters.', usage: { inputTokens: 80, outputTokens: 14 } },
  ];

  let taggedEvents = 0;
  const onEvent = (event: { agentPath?: string[] }) => void (event.agentPath !== undefined && taggedEvents++);

  print('1. the editor delegates; the researcher wants to publish, which needs a human');
  const paused = await build(researcherScript, editorScript).run('Write a note about otters', { onEvent });
  print(`  editor: ${paused.status} (${paused.stopReason})`);
  for (const p of paused.pendingApprovals) print(`  waiting: ${p.toolCallId} = ${p.path!.join(' › ')} › ${p.toolName} ${JSON.stringify(p.args)}`);
  const stored = JSON.stringify(paused.state);
  print(`  the editor's state, the researcher's inside it: ${stored.length} bytes of JSON`);

  print('2. later (a new process would do the same): the agents are built again and resumed');
  // Fresh agents whose models continue from where the scripts left off.
  const editor = build(researcherScript.slice(2), editorScript.slice(1));
  const decisions = Object.fromEntries(paused.pendingApprovals.map((p) => [p.toolCallId, true]));
  const result = await editor.resume(JSON.parse(stored), decisions, { onEvent });
  print(`  editor: ${result.status} (${result.stopReason}): ${result.text}`);
  print(`  ${taggedEvents} events came from the researcher, tagged with agentPath ["editor","researcher"]`);
  const { inputTokens, outputTokens, modelCalls, toolCalls } = result.usage;
  print(`  usage of the whole team: ${modelCalls} model calls, ${toolCalls} tool calls, ${inputTokens} + ${outputTokens} tokens`);
  return { audit, leadOnly, pending: paused.pendingApprovals, taggedEvents, result };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
