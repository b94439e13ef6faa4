// AgentHooks with the rest of the runtime: sub-agents (agent.asTool) and context compaction.
// Test names quote the seed (000_…txt).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../../src/index.js';
import type { AgentHook } from '../../../src/hooks.js';
import type { PermissionRecord } from '../../../src/types.js';
import type { SubagentInfo } from '../../../src/api.js';
import { mockModel } from '../../../src/testing/index.js';
import { callTool, eventLog } from './fixtures.js';

function shellTool() {
  const ran: string[] = [];
  const tool = defineTool({ name: 'shell', description: 'Run a command', input: z.object({ command: z.string() }), execute: ({ command }) => { ran.push(command); return `ran ${command}`; } });
  return { tool, ran };
}

/** A lead agent whose model hands a task to the `researcher` sub-agent, which calls `shell`. */
function team(hooks: AgentHook[], onPermissionDecision?: (record: PermissionRecord) => void) {
  const shell = shellTool();
  const subModel = mockModel([callTool('shell', { command: 'ls' }), 'sub done']);
  const researcher = createAgent({ name: 'researcher', model: subModel, tools: [shell.tool] });
  const lead = createAgent({ name: 'lead', model: mockModel([callTool('researcher', { task: 'look around' }), 'lead done']), tools: [researcher.asTool({ description: 'Researches' })], hooks, onPermissionDecision });
  return { lead, shell, subModel };
}

describe('AgentHooks inside sub-agents', () => {
  it('"Sub-agents inherit the lead agent\'s hooks and their outcomes": a lead\'s { deny } stops the sub-agent\'s tool call', async () => {
    const { lead, shell, subModel } = team([{ name: 'no-shell', preToolCall: (ctx) => (ctx.toolName === 'shell' ? { deny: 'No shell anywhere' } : undefined) }]);
    const result = await lead.run('go');
    expect(result.text).toBe('lead done');
    expect(shell.ran).toEqual([]);
    expect(subModel.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: 'Error (denied): No shell anywhere' });
  });

  it('"Sub-agents inherit the lead agent\'s hooks and their outcomes": the lead\'s onPermissionDecision records a { deny } made inside the sub-agent, with the agent path', async () => {
    const records: PermissionRecord[] = [];
    const events: string[] = [];
    const { lead } = team([{ name: 'no-shell', preToolCall: (ctx) => (ctx.toolName === 'shell' ? { deny: 'No shell anywhere' } : undefined) }], (r) => records.push(r));
    await lead.run('go', { onEvent: (e) => { if (e.type === 'permission.decision') events.push(`${e.decision}:${e.toolName}`); } });
    const denial = records.find((r) => r.decision === 'deny');
    expect(denial).toMatchObject({ toolName: 'shell', args: { command: 'ls' }, decision: 'deny', source: 'hook', hook: 'no-shell', reason: 'No shell anywhere', agentPath: ['lead', 'researcher'] });
    // The audit listener and the event stream tell the same story.
    expect(events).toContain('deny:shell');
    expect(records.filter((r) => r.agentPath === undefined).map((r) => r.toolName)).toEqual(['researcher']);
  });

  it('"ctx.subagent is set when a hook runs inside one, so a hook can return early to see only the top-level run"', async () => {
    const seen: (SubagentInfo | undefined)[] = [];
    const topLevelOnly: string[] = [];
    const hook: AgentHook = {
      name: 'where',
      preToolCall(ctx) {
        seen.push(ctx.subagent);
        if (ctx.subagent) return;
        topLevelOnly.push(ctx.toolName);
      },
    };
    await team([hook]).lead.run('go');
    expect(seen).toEqual([undefined, { name: 'researcher', depth: 1, parentRunId: expect.any(String), path: ['lead', 'researcher'] }]);
    expect(topLevelOnly).toEqual(['researcher']);
  });
});

describe('AgentHooks and compaction', () => {
  it('"createAgent({ hooks }) runs your hooks first and the compaction hook after them, so compaction sees what they added"', async () => {
    const summarizer = mockModel(['they said a, b and c']);
    const log = eventLog();
    const note: AgentHook = { name: 'note', preGenerate(ctx) { ctx.messages.push({ role: 'system', content: 'Be brief.' }); } };
    const model = mockModel(['ok']);
    const agent = createAgent({ model, hooks: [note], compaction: { maxMessages: 3, keepRecent: 1, model: summarizer }, onEvent: log.onEvent });
    // Three messages are within the budget; only the hook's fourth one makes compaction act.
    await agent.run([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }]);
    expect(summarizer.calls).toHaveLength(1);
    expect(log.ofType('compaction.start')).toMatchObject([{ messages: 4 }]);
    expect(model.calls[0].messages.at(-1)).toEqual({ role: 'system', content: 'Be brief.' });
    expect(model.calls[0].messages[0].content).toMatch(/^Summary of the earlier conversation:\nthey said a, b and c$/);
  });
});
