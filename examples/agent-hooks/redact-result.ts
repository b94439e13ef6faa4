// Recipe: redact and truncate what the model reads. The tool runs unchanged; postToolCall
// returns { result } with e-mail addresses masked and the text cut to 1000 characters.
// Run: npx tsx examples/agent-hooks/redact-result.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type Message } from 'koagent';
import type { AgentHook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

/** Returns the raw text the tool produced and the tool message the model was sent next. */
export async function redactResultExample(print: (line: string) => void = console.log): Promise<{ raw: string; seen: Message | undefined }> {
  const raw = 'login ok: grace@navy.example from 10.0.0.7; ' + '.'.repeat(5000);
  const tailLog = defineTool({
    name: 'tail_log',
    description: 'Show the end of the access log',
    input: z.object({}),
    async execute() {
      return raw;
    },
  });

  const maskEmails: AgentHook = {
    name: 'mask-emails',
    postToolCall(_ctx, settled) {
      if (typeof settled.result !== 'string') return; // errors and non-text results pass through
      const masked = settled.result.replace(/[\w.]+@[\w.]+/g, '[email]');
      return { result: masked.slice(0, 1000) };
    },
  };

  const model = mockModel([{ toolCalls: [{ name: 'tail_log', args: {} }] }, { text: 'One login, from a masked address.' }]);
  const agent = createAgent({ instructions: 'You read access logs.', provider: model, tools: [tailLog], hooks: [maskEmails] });
  await agent.send('Who logged in last?');
  // mockModel keeps a snapshot of each request: the second one ends with the tool's message.
  const seen = model.calls[1].messages.at(-1);
  print(`${seen?.role}: ${seen?.content.slice(0, 60)}… (${seen?.content.length} characters; the tool returned ${raw.length})`);
  return { raw, seen };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await redactResultExample();
