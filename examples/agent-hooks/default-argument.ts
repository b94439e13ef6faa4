// Recipe: fill in an argument the model left out. Returning { input } runs the tool with new
// arguments, checked against its schema first. Run: npx tsx examples/agent-hooks/default-argument.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool } from 'koagent';
import type { AgentHook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

/** Returns the arguments the tool actually ran with. */
export async function defaultArgumentExample(print: (line: string) => void = console.log): Promise<{ query: string; limit?: number }[]> {
  const received: { query: string; limit?: number }[] = [];
  const search = defineTool({
    name: 'search',
    description: 'Search the manual',
    input: z.object({ query: z.string(), limit: z.number().optional() }),
    async execute(args) {
      received.push(args);
      return { query: args.query, limit: args.limit };
    },
  });

  // Only when the model gave no limit; an explicit one is left alone.
  const fiveByDefault: AgentHook = {
    name: 'five-by-default',
    preToolCall(ctx) {
      if (ctx.toolName === 'search' && ctx.args.limit === undefined) {
        return { input: { ...ctx.args, limit: 5 } };
      }
      return undefined;
    },
  };

  const model = mockModel([{ toolCalls: [{ name: 'search', args: { query: 'middleware' } }] }, { text: 'Here are five hits.' }]);
  const agent = createAgent({ instructions: 'You search the manual.', provider: model, tools: [search], hooks: [fiveByDefault] });
  await agent.send('Search the manual for middleware');
  print(`the tool ran with ${JSON.stringify(received[0])}`);
  return received;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await defaultArgumentExample();
