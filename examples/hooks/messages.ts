// HookAction `messages`: beforeModel replaces the transcript that is sent, and kept. Here a
// hook keeps a long chat short: the system message, a note saying how much was dropped, and
// the last few messages. The model is sent only that, and the run's transcript becomes it.
// Run offline: npx tsx examples/hooks/messages.ts
import { pathToFileURL } from 'node:url';
import { createAgent, type Message } from 'koagent';
import type { Hook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

export async function shortMemory(keep = 3) {
  const window: Hook = {
    name: 'short-memory',
    beforeModel(ctx) {
      const system = ctx.messages.filter((m) => m.role === 'system');
      const rest = ctx.messages.filter((m) => m.role !== 'system');
      if (rest.length <= keep) return;
      const dropped = rest.length - keep;
      const note = { role: 'system', content: `(${dropped} earlier messages were left out)` } as const;
      return { messages: [...system, note, ...rest.slice(-keep)] };
    },
  };
  const model = mockModel(['Noted: tea, no sugar.']);
  const history: Message[] = [
    { role: 'user', content: 'I like coffee.' },
    { role: 'assistant', content: 'Coffee it is.' },
    { role: 'user', content: 'Actually, make it tea.' },
    { role: 'assistant', content: 'Tea, then.' },
    { role: 'user', content: 'No sugar, please.' },
  ];
  const agent = createAgent({ instructions: 'You take drink orders.', model, hooks: [window] });
  const result = await agent.run(history);
  return { sent: model.calls[0].messages, kept: result.messages, answer: result.text };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { sent, kept } = await shortMemory();
  console.log('sent to the model:');
  for (const m of sent) console.log(`  ${m.role}: ${m.content}`);
  console.log(`the transcript now has ${kept.length} messages (the reply included)`);
}
