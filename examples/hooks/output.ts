// HookAction `output`: with `end`, it becomes the run's result.output. Here afterModel reads a
// JSON answer out of the model's reply and ends the run with it parsed, so the caller gets an
// object instead of text.
// Run offline: npx tsx examples/hooks/output.ts
import { pathToFileURL } from 'node:url';
import { createAgent, textOf } from 'koagent';
import type { Hook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

export interface Invoice {
  vendor: string;
  total: number;
}

export async function parsedInvoice() {
  const parse: Hook = {
    name: 'parse-invoice',
    afterModel(ctx) {
      const reply = ctx.messages[ctx.messages.length - 1];
      const json = reply.role === 'assistant' ? /\{[\s\S]*\}/.exec(textOf(reply.content))?.[0] : undefined;
      if (json === undefined) return;
      const invoice = JSON.parse(json) as Invoice;
      return { end: true, output: invoice };
    },
  };
  const model = mockModel(['Here it is: {"vendor": "Acme Paper", "total": 129.5}']);
  const agent = createAgent({ instructions: 'Answer with the invoice as JSON.', model, hooks: [parse] });
  const result = await agent.run('Vendor and total of the attached invoice?');
  return { stopReason: result.stopReason, output: result.output as Invoice, text: result.text };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { output } = await parsedInvoice();
  console.log(`vendor: ${output.vendor}, total: ${output.total}`);
}
