// A criogen Hook that writes an audit line for every tool call and one when each run segment
// ends: which tool, how the segment ended, and how many model calls the run has made.
// Run offline: npx tsx examples/hooks/log-tools.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { Agent, defineTool } from 'koagent';
import type { Hook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

export async function logTools(print: (line: string) => void = console.log) {
  const lines: string[] = [];
  const write = (line: string) => {
    lines.push(line);
    print(line);
  };
  const toolAudit: Hook = {
    name: 'tool-audit',
    beforeTool(call) {
      write(`tool ${call.name} ${JSON.stringify(call.args)}`);
    },
    onEnd(ctx, outcome) {
      write(`segment of ${ctx.runId.slice(0, 8)}… ${outcome}; model calls so far: ${ctx.modelCalls}`);
    },
  };

  const convert = defineTool({
    name: 'convert',
    description: 'Convert an amount between currencies',
    input: z.object({ amount: z.number(), from: z.string(), to: z.string() }),
    execute: ({ amount, from, to }) => ({ amount: from === 'EUR' && to === 'USD' ? amount * 1.1 : amount, currency: to }),
  });
  // A provider object stands in for a model string such as "openai:gpt-5-mini" (offline).
  const agent = new Agent({
    model: mockModel([{ toolCalls: [{ name: 'convert', args: { amount: 20, from: 'EUR', to: 'USD' } }] }, 'That is 22 USD.']),
    tools: [convert],
    hooks: [toolAudit],
  });
  const result = await agent.run('How much is 20 EUR in USD?');
  return { lines, answer: result.text };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await logTools();
}
