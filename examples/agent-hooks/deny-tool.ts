// Recipe: deny a tool by name. The model asks for the tool, the hook says no, and the model
// reads a `denied` tool error instead of a result. Run: npx tsx examples/agent-hooks/deny-tool.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool } from 'koagent';
import type { AgentHook } from 'koagent/hooks';
import { mockModel, type MockModel } from 'koagent/testing';

/** Returns the final answer, the scripted model (to inspect what it was sent) and whether the tool ran. */
export async function denyToolExample(print: (line: string) => void = console.log): Promise<{ text: string; model: MockModel; ran: boolean }> {
  let ran = false;
  const shell = defineTool({
    name: 'shell',
    description: 'Run a shell command',
    input: z.object({ command: z.string() }),
    async execute({ command }) {
      ran = true;
      return { ran: command };
    },
  });

  const shellOff: AgentHook = {
    name: 'shell-off',
    preToolCall(ctx) {
      if (ctx.toolName === 'shell') return { deny: 'This deployment has no shell' };
      return undefined;
    },
  };

  const model = mockModel([{ toolCalls: [{ name: 'shell', args: { command: 'ls -la' } }] }, { text: 'I was not allowed to run that.' }]);
  const agent = createAgent({ instructions: 'You help with files.', provider: model, tools: [shell], hooks: [shellOff] });
  const result = await agent.send('What files are here?');
  print(`the model was told: ${model.calls[1].messages.at(-1)?.content}`);
  print(`answer: ${result.text}`);
  return { text: result.text, model, ran };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await denyToolExample();
