// HookAction `message`: afterModel replaces the model's reply. Here a hook masks e-mail
// addresses in every reply before anyone (the transcript, the caller, the next model call)
// sees them.
// Run offline: npx tsx examples/hooks/message.ts
import { pathToFileURL } from 'node:url';
import { createAgent, mapText, textOf } from 'koagent';
import type { Hook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

export async function maskEmails() {
  const mask: Hook = {
    name: 'mask-emails',
    afterModel(ctx) {
      // ctx.messages ends with the reply the model just made.
      const reply = ctx.messages[ctx.messages.length - 1];
      if (reply.role !== 'assistant') return;
      // mapText masks the text whether the reply is a string or parts (reasoning is left as it is).
      const masked = mapText(reply.content, (text) => text.replace(EMAIL, '[e-mail hidden]'));
      if (textOf(masked) !== textOf(reply.content)) return { message: { ...reply, content: masked } };
    },
  };
  const agent = createAgent({ model: mockModel(['Write to maria.lopez@example.org or to billing@example.org.']), hooks: [mask] });
  const result = await agent.run('Who handles invoices?');
  return { answer: result.text, transcriptHasAddress: result.messages.some((m) => textOf(m.content).includes('@')) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { answer } = await maskEmails();
  console.log(`answer: ${answer}`);
}
