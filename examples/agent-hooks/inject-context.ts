// Recipe: add context before each model call. preGenerate gets the live transcript and request:
// a pushed message is sent (and stays in the transcript), a changed field is sent as changed.
// Run: npx tsx examples/agent-hooks/inject-context.ts
import { pathToFileURL } from 'node:url';
import { createAgent } from 'koagent';
import type { AgentHook } from 'koagent/hooks';
import { mockModel, type MockModel } from 'koagent/testing';

/** Returns the scripted model, whose `calls` show what each request carried, and the transcript. */
export async function injectContextExample(print: (line: string) => void = console.log): Promise<{ model: MockModel; transcriptRoles: string[]; today: string }> {
  const today = new Date().toISOString().slice(0, 10);
  const dateAndDeterminism: AgentHook = {
    name: 'date-and-determinism',
    preGenerate(ctx) {
      ctx.messages.push({ role: 'system', content: `The date today is ${today}.` });
      ctx.request.temperature = 0;
    },
  };

  const model = mockModel(['Good morning!']);
  const agent = createAgent({ instructions: 'You greet people.', provider: model, hooks: [dateAndDeterminism] });
  const result = await agent.send('Hi there');
  print(`model calls: ${model.calls.length}`);
  print(`last message sent: ${JSON.stringify(model.calls[0].messages.at(-1))}, temperature ${model.calls[0].request.temperature}`);
  return { model, transcriptRoles: result.messages.map((m) => m.role), today };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await injectContextExample();
