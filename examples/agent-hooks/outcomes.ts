// The three things a pre-hook can say about a call ({ deny }, { input }, nothing) and a post-hook
// that shortens long results, all in one hook. Run: npx tsx examples/agent-hooks/outcomes.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool } from 'koagent';
import type { AgentHook } from 'koagent/hooks';
import type { ToolMessage } from 'koagent/types';
import { mockModel } from 'koagent/testing';

/** One hook that keeps the agent off the shell, caps searches at 10 hits and trims text results. */
export const gatekeeper: AgentHook = {
  name: 'gatekeeper',
  preToolCall(ctx) {
    if (ctx.toolName === 'shell') return { deny: 'Use the workspace tools, not the shell' };
    if (ctx.toolName === 'search') return { input: { ...ctx.args, limit: 10 } };
    return undefined; // any other tool: go on as the model asked
  },
  postToolCall(_ctx, settled) {
    // Strings longer than 2000 characters are cut; anything else is kept as it is.
    return typeof settled.result === 'string' ? { result: settled.result.slice(0, 2000) } : undefined;
  },
};

/** The model tries the shell and a search in one turn; returns what it was told about each. */
export async function outcomesExample(print: (line: string) => void = console.log): Promise<{ shell: ToolMessage; search: ToolMessage; searchArgs: unknown }> {
  let searchArgs: unknown;
  const shell = defineTool({ name: 'shell', description: 'Run a command', input: z.object({ command: z.string() }), execute: ({ command }) => `ran ${command}` });
  const search = defineTool({
    name: 'search',
    description: 'Search the workspace',
    input: z.object({ query: z.string(), limit: z.number().optional() }),
    execute(args) {
      searchArgs = args;
      return `hit for ${args.query} `.repeat(500); // about 8000 characters
    },
  });
  const model = mockModel([
    { toolCalls: [{ name: 'shell', args: { command: 'grep -r todo .' } }, { name: 'search', args: { query: 'todo' } }] },
    { text: 'Searched instead of using the shell.' },
  ]);
  const agent = createAgent({ provider: model, instructions: 'You research things.', tools: [shell, search], hooks: [gatekeeper] });
  await agent.send('Find the TODOs');
  const [shellMessage, searchMessage] = model.calls[1].messages.filter((m): m is ToolMessage => m.role === 'tool');
  print(`shell  → ${shellMessage.content}`);
  print(`search → ran with ${JSON.stringify(searchArgs)}; the model got ${searchMessage.content.length} characters`);
  return { shell: shellMessage, search: searchMessage, searchArgs };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await outcomesExample();
