// Your first AgentHook: an audit trail of every tool call, written before the call runs and
// after it settles. Run: npx tsx examples/agent-hooks/first-hook.ts (offline, scripted model).
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool } from 'koagent';
import type { AgentHook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

/** Runs one question through an agent with an audit hook; returns the lines the hook wrote. */
export async function auditExample(print: (line: string) => void = console.log): Promise<string[]> {
  const lines: string[] = [];
  const write = (line: string) => {
    lines.push(line);
    print(line);
  };

  // Only two of the four hook points are implemented; the others are simply left out.
  const audit: AgentHook = {
    name: 'audit',
    preToolCall(ctx) {
      write(`calling ${ctx.toolName} ${JSON.stringify(ctx.args)}`);
    },
    postToolCall(ctx, settled) {
      write(`finished ${ctx.toolName} ${settled.error ? `with ${settled.error.kind} error` : 'ok'}`);
    },
  };

  const encyclopedia = defineTool({
    name: 'encyclopedia',
    description: 'Find a short entry on a topic',
    input: z.object({ topic: z.string() }),
    async execute({ topic }) {
      return { entry: `${topic}: see page 42` };
    },
  });

  const agent = createAgent({
    instructions: 'You answer questions from the encyclopedia.',
    provider: mockModel([{ toolCalls: [{ name: 'encyclopedia', args: { topic: 'onions' } }] }, { text: 'Onions are on page 42.' }]),
    tools: [encyclopedia],
    hooks: [audit],
  });
  const result = await agent.send('Where can I read about onions?');
  write(`answer: ${result.text}`);
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await auditExample();
